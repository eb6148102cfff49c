//! What a new (or loaded) ACP session is set up from besides the options: the project of its
//! `cwd`, with the trust the user gave it, and the MCP servers the client passes. `acp.rs`
//! calls these before `setup::start_in`; nothing here starts a server or reads a project file
//! but through `trust.rs`.

use crate::app::acp::Failure;
use crate::app::acp::jsonrpc::INVALID_PARAMS;
use crate::app::setup;
use crate::extras::mcp_wire::ServerConfig;
use crate::extras::trust::{self, Project};
use serde_json::Value;

/// The project of the session's `cwd`, as trusted as the user left it (`trust.rs`): the one
/// the process started in, or the record of another.
pub(crate) fn project_in(cwd: &std::path::Path, launched: &Project) -> Project {
    let here = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    if here == launched.dir {
        return launched.clone();
    }
    Project::look(&here, None, &trust::store_path(&setup::corecoder_home()))
}

/// The client's MCP servers: stdio ones to start, as `mcp.json`'s are; an `http` or `sse` one
/// is left out with a note on stderr (corecoder speaks MCP over stdio only).
pub(crate) fn mcp_servers(
    list: Option<&Value>,
) -> Result<(Vec<ServerConfig>, Vec<String>), Failure> {
    let (mut servers, mut notes) = (Vec::new(), Vec::new());
    let list = match list {
        None | Some(Value::Null) => return Ok((servers, notes)),
        Some(Value::Array(list)) => list,
        Some(_) => return Err((INVALID_PARAMS, "mcpServers: not an array".into())),
    };
    for server in list {
        let name = server.get("name").and_then(Value::as_str).unwrap_or("?");
        match server.get("type").and_then(Value::as_str) {
            None | Some("stdio") => servers.push(stdio_server(server)?),
            Some(other) => notes.push(format!(
                "MCP server {name}: left out; corecoder speaks MCP over stdio, not {other}"
            )),
        }
    }
    Ok((servers, notes))
}

fn stdio_server(server: &Value) -> Result<ServerConfig, Failure> {
    let bad = |what: &str| (INVALID_PARAMS, format!("mcpServers: a stdio server {what}"));
    let text = |key: &str| server.get(key).and_then(Value::as_str).map(String::from);
    let strings = |value: Option<&Value>| -> Option<Vec<String>> {
        (value?.as_array()?.iter())
            .map(|v| v.as_str().map(String::from))
            .collect()
    };
    let pair = |v: &Value| {
        Some((
            v.get("name")?.as_str()?.into(),
            v.get("value")?.as_str()?.into(),
        ))
    };
    let env: Option<Vec<(String, String)>> = match server.get("env") {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(env) => env.as_array().and_then(|l| l.iter().map(pair).collect()),
    };
    Ok(ServerConfig {
        name: text("name").ok_or_else(|| bad("needs a name"))?,
        command: text("command").ok_or_else(|| bad("needs a command"))?,
        args: strings(server.get("args")).unwrap_or_default(),
        env: env.ok_or_else(|| bad("has an env that is not [{name, value}]"))?,
        timeout: None,
    })
}
