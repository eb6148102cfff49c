//! MCP client: tools from external Model Context Protocol servers, spoken to over stdio.
//!
//! At start-up `mcp_config::load_config` reads the config files and `Servers::start` launches
//! each server and shakes hands (spec revision 2025-06-18). The model is offered their tools as
//! `mcp__SERVER__TOOL`; during a turn the dispatcher (maybe on a pool worker) hands such a call
//! to `Servers::call`, which returns text for the model. One JSON-RPC message per line; a reader
//! thread per server routes each reply to its caller by id (`mcp_wire.rs`); the handshake and
//! the reading of results are in `mcp_protocol.rs`. This file does *not* ask for consent, speak
//! the HTTP transport, or use resources, prompts or sampling.

use crate::extras::mcp_protocol::{
    Listing, content_text, handshake, tool_name, valid_function_name,
};
/// How to start one server; defined beside the wire, which needs it and nothing else from here.
pub use crate::extras::mcp_wire::ServerConfig;
use crate::extras::mcp_wire::{Link, STOPPED, Wire, lock, result_of};
use serde_json::{Value, json};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::thread::{self};
use std::time::Duration;

const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(15);
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// The most MCP tools offered in all, beside our own 8: OpenAI's API takes 128 functions.
const MAX_TOOLS_IN_ALL: usize = 120;
/// All servers of the session (none by default). Shared with pool workers as `Arc<Servers>`.
#[derive(Default)]
pub struct Servers {
    servers: Vec<Server>,
}

/// One configured server and its current connection. The lock is held only briefly: callers
/// copy the `Arc<Wire>` out and wait for their reply without it.
struct Server {
    config: ServerConfig,
    connection: Mutex<Connection>,
}

struct Connection {
    /// `Err` says why the server is not running (it failed to start, or is reconnecting).
    link: Result<Link, String>,
    /// Only tools whose `mcp__SERVER__TOOL` name the API accepts, within the caps
    /// (`mcp_protocol.rs`); what was left out is counted.
    listing: Listing,
}

/// What an MCP server says about one of its tools (`annotations.readOnlyHint` in `tools/list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerHint {
    ReadOnly,
    Unmarked,
}

impl Servers {
    /// Start every server in parallel and shake hands. A server that fails costs one warning.
    pub fn start(configs: Vec<ServerConfig>) -> (Servers, Vec<String>) {
        Servers::start_within(configs, HANDSHAKE_TIMEOUT)
    }

    fn start_within(configs: Vec<ServerConfig>, timeout: Duration) -> (Servers, Vec<String>) {
        let connections: Vec<Connection> = thread::scope(|scope| {
            let open = |config| scope.spawn(move || Connection::open(config, timeout));
            let opening: Vec<_> = configs.iter().map(open).collect();
            let joined = opening.into_iter().map(|thread| thread.join());
            joined
                .map(|c| c.unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        let (mut warnings, mut servers, mut offered) = (Vec::new(), Vec::new(), 0);
        for (config, mut connection) in configs.into_iter().zip(connections) {
            if let Err(reason) = &connection.link {
                warnings.push(format!("MCP server {} skipped: {reason}", config.name));
            }
            connection
                .listing
                .cap(MAX_TOOLS_IN_ALL.saturating_sub(offered));
            offered += connection.listing.tools.len();
            warnings.extend(
                connection
                    .listing
                    .dropped_note(&config.name, MAX_TOOLS_IN_ALL),
            );
            servers.push(Server {
                config,
                connection: Mutex::new(connection),
            });
        }
        (Servers { servers }, warnings)
    }

    /// One OpenAI function schema per tool of every live server.
    pub(crate) fn schemas(&self) -> Vec<Value> {
        let mut schemas = Vec::new();
        for server in &self.servers {
            let connection = lock(&server.connection);
            for tool in connection.live_tools() {
                let parameters = match tool.get("inputSchema") {
                    Some(schema) if schema.is_object() => schema.clone(),
                    _ => json!({"type": "object", "properties": {}}),
                };
                schemas.push(json!({"type": "function", "function": {
                    "name": qualified_name(&server.config.name, tool),
                    "description": tool.get("description").and_then(Value::as_str).unwrap_or(""),
                    "parameters": parameters,
                }}));
            }
        }
        schemas
    }

    pub(crate) fn tool_count(&self) -> usize {
        let count = |server: &Server| lock(&server.connection).live_tools().len();
        self.servers.iter().map(count).sum()
    }

    /// Whether the server's `tools/list` marked the tool `readOnlyHint: true`. Only a hint:
    /// `early::may_start_early` decides what it may change.
    pub(crate) fn hint(&self, qualified_name: &str) -> ServerHint {
        let Some((server, tool)) = self.find(qualified_name) else {
            return ServerHint::Unmarked;
        };
        let connection = lock(&server.connection);
        let mut listed = connection.live_tools().iter();
        match listed.find(|t| tool_name(t) == tool) {
            Some(tool) if marked_read_only(tool) => ServerHint::ReadOnly,
            _ => ServerHint::Unmarked,
        }
    }

    /// Call `mcp__SERVER__TOOL` with the model's raw JSON arguments, within the server's
    /// timeout and until Ctrl+C sets `cancel`. `Err` is text for the model.
    pub(crate) fn call(
        &self,
        qualified_name: &str,
        arguments: &str,
        cancel: &AtomicBool,
    ) -> Result<String, String> {
        let (server, tool) = self
            .find(qualified_name)
            .ok_or_else(|| format!("no MCP server offers a tool named {qualified_name}"))?;
        let arguments: Value = match arguments.trim() {
            "" => json!({}),
            text => serde_json::from_str(text).map_err(|e| format!("invalid JSON ({e})"))?,
        };
        let name = &server.config.name;
        let wire = lock(&server.connection).live_wire().map_err(|reason| {
            format!(
                "MCP server {name} is not running ({reason}); the user can /mcp reconnect {name}"
            )
        })?;
        let params = json!({"name": tool, "arguments": arguments});
        let timeout = server.config.timeout.unwrap_or(CALL_TIMEOUT);
        let result = result_of(&wire.request("tools/call", params, timeout, cancel)?)?;
        let text = content_text(&result);
        match result.get("isError").and_then(Value::as_bool) {
            Some(true) => Err(text),
            _ => Ok(text),
        }
    }

    /// `/mcp`: one line per server.
    pub(crate) fn status(&self) -> Vec<String> {
        let line = |server: &Server| {
            let connection = lock(&server.connection);
            let mut line = match connection.live_wire() {
                Ok(_) => format!(
                    "{}: alive, {} tools",
                    server.config.name,
                    connection.listing.tools.len()
                ),
                Err(reason) => format!("{}: dead ({reason})", server.config.name),
            };
            let read_only = connection
                .live_tools()
                .iter()
                .filter(|t| marked_read_only(t));
            match read_only.count() {
                0 => {}
                count => line += &format!(", {count} marked read-only"),
            }
            if connection.listing.hidden > 0 {
                let hidden = connection.listing.hidden;
                line += &format!(" ({hidden} more with names the model API refuses)");
            }
            line
        };
        self.servers.iter().map(line).collect()
    }

    /// `/mcp reconnect NAME`: stop the server if it runs, start it again and list its tools.
    pub(crate) fn reconnect(&self, name: &str) -> Result<String, String> {
        let server = self.servers.iter().find(|s| s.config.name == name);
        let server = server.ok_or_else(|| format!("no MCP server named {name}"))?;
        // Stop the old process before starting the new one, and without holding the lock.
        let old = server.take_link("reconnecting");
        drop(old);
        let mut fresh = Connection::open(&server.config, HANDSHAKE_TIMEOUT);
        let others = |s: &&Server| s.config.name != name;
        let offered: usize = self
            .servers
            .iter()
            .filter(others)
            .map(|s| s.offered())
            .sum();
        fresh.listing.cap(MAX_TOOLS_IN_ALL.saturating_sub(offered));
        let note = fresh.listing.dropped_note(name, MAX_TOOLS_IN_ALL);
        let note = note.map(|n| format!("; {n}"));
        let outcome = match &fresh.link {
            Ok(_) => Ok(format!(
                "{name}: reconnected, {} tools{}",
                fresh.listing.tools.len(),
                note.unwrap_or_default()
            )),
            Err(reason) => Err(format!("{name}: {reason}")),
        };
        // Whatever a racing reconnect put in is stopped when `replaced` drops, after the lock.
        let replaced = std::mem::replace(&mut *lock(&server.connection), fresh);
        drop(replaced);
        outcome
    }

    /// The server of `mcp__SERVER__TOOL`, and TOOL. Server names may contain `__`, so try each.
    fn find(&self, qualified_name: &str) -> Option<(&Server, String)> {
        let rest = qualified_name.strip_prefix("mcp__")?;
        self.servers.iter().find_map(|server| {
            let tool = rest.strip_prefix(&server.config.name)?.strip_prefix("__")?;
            Some((server, tool.to_string()))
        })
    }
}

impl Drop for Servers {
    /// Stop every server at once, since each may take `EXIT_GRACE` to exit.
    fn drop(&mut self) {
        thread::scope(|scope| {
            for server in &self.servers {
                scope.spawn(|| drop(server.take_link(STOPPED)));
            }
        });
    }
}

impl Server {
    /// Take the link out, leaving `why` as the reason it is down. The caller drops (stops) it
    /// once the lock is released.
    fn take_link(&self, why: &str) -> Result<Link, String> {
        std::mem::replace(&mut lock(&self.connection).link, Err(why.to_string()))
    }

    fn offered(&self) -> usize {
        lock(&self.connection).live_tools().len()
    }
}

impl Connection {
    /// Start the process and shake hands. A failure is a connection without a link.
    fn open(config: &ServerConfig, timeout: Duration) -> Connection {
        let accepted = |tool: &str| valid_function_name(&format!("mcp__{}__{tool}", config.name));
        let (link, listing) = match Link::spawn(config) {
            Err(e) => (Err(e), Listing::default()),
            // A failed handshake drops (stops) the link; a crash is already in the error.
            Ok(link) => match handshake(&link.wire, timeout, &accepted) {
                Ok(listing) => (Ok(link), listing),
                Err(e) => (Err(e), Listing::default()),
            },
        };
        Connection { link, listing }
    }

    fn live_wire(&self) -> Result<Arc<Wire>, String> {
        let link = self.link.as_ref().map_err(String::clone)?;
        match link.wire.closed_reason() {
            Some(reason) => Err(reason),
            None => Ok(Arc::clone(&link.wire)),
        }
    }

    fn live_tools(&self) -> &[Value] {
        if self.live_wire().is_ok() {
            &self.listing.tools
        } else {
            &[]
        }
    }
}

/// `annotations.readOnlyHint: true` in the tool's `tools/list` entry; anything else is no mark.
fn marked_read_only(tool: &Value) -> bool {
    tool["annotations"]["readOnlyHint"] == true
}

fn qualified_name(server: &str, tool: &Value) -> String {
    format!("mcp__{server}__{}", tool_name(tool))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A cancel flag nobody sets.
    fn never() -> AtomicBool {
        AtomicBool::new(false)
    }

    fn fixture(name: &str, mode: &str) -> ServerConfig {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/mcp/misbehaving_server.py"
        );
        ServerConfig {
            name: name.to_string(),
            command: "python3".to_string(),
            args: vec![script.to_string(), mode.to_string()],
            env: vec![("PYTHONUNBUFFERED".to_string(), "1".to_string())],
            timeout: None,
        }
    }

    fn start_one(mode: &str, timeout: Duration) -> (Servers, Vec<String>) {
        Servers::start_within(vec![fixture("fake", mode)], timeout)
    }

    #[test]
    fn handshake_lists_every_page_and_calls_through_the_noise() {
        let (servers, warnings) = start_one("good", HANDSHAKE_TIMEOUT);
        assert_eq!(warnings, Vec::<String>::new());
        assert_eq!(servers.tool_count(), 6);
        let schemas = servers.schemas();
        let echo = &schemas[0]["function"];
        assert_eq!(echo["name"], "mcp__fake__echo");
        assert_eq!(echo["parameters"]["properties"]["text"]["type"], "string");
        assert_eq!(
            schemas[1]["function"]["parameters"],
            json!({"type": "object", "properties": {}})
        );
        // Every reply comes after a log line, a notification and a ping request of the server's.
        assert_eq!(
            servers.call("mcp__fake__echo", r#"{"text": "hi"}"#, &never()),
            Ok("hi".to_string())
        );
        assert_eq!(
            servers.call("mcp__fake__pong_seen", "{}", &never()),
            Ok("True".to_string())
        );
        let picture = servers.call("mcp__fake__picture", r#"{"text": "look"}"#, &never());
        assert_eq!(picture, Ok("look\n[image/png, 4 bytes]".to_string()));
        assert_eq!(servers.status(), vec!["fake: alive, 6 tools".to_string()]);
    }

    #[test]
    fn only_a_true_read_only_hint_counts() {
        let (servers, _) = start_one("readonly", HANDSHAKE_TIMEOUT);
        assert_eq!(servers.hint("mcp__fake__slow"), ServerHint::ReadOnly);
        // `fail` says `"readOnlyHint": "yes"`, `echo` says nothing.
        assert_eq!(servers.hint("mcp__fake__fail"), ServerHint::Unmarked);
        assert_eq!(servers.hint("mcp__fake__echo"), ServerHint::Unmarked);
        assert_eq!(servers.hint("mcp__other__slow"), ServerHint::Unmarked);
        assert_eq!(servers.hint("read_file"), ServerHint::Unmarked);
        let status = servers.status();
        assert_eq!(status, ["fake: alive, 6 tools, 1 marked read-only"]);
        let (plain, _) = start_one("good", HANDSHAKE_TIMEOUT);
        assert_eq!(plain.hint("mcp__fake__slow"), ServerHint::Unmarked);
    }

    /// Garbage lines and a 20 MB reply line (over the cap, so dropped) come before the real
    /// reply: the call still gets its answer.
    #[test]
    fn garbage_and_a_gigantic_line_are_skipped() {
        let (servers, warnings) = start_one("garbage", HANDSHAKE_TIMEOUT);
        assert_eq!(warnings, Vec::<String>::new());
        assert_eq!(
            servers.call("mcp__fake__echo", r#"{"text": "still here"}"#, &never()),
            Ok("still here".to_string())
        );
    }

    #[test]
    fn replies_out_of_order_reach_the_right_caller() {
        let (servers, _) = start_one("good", HANDSHAKE_TIMEOUT);
        let (finished, order) = crossbeam_channel::unbounded();
        thread::scope(|scope| {
            for (text, ms) in [("slow one", 600), ("quick one", 0)] {
                let (servers, finished) = (&servers, finished.clone());
                scope.spawn(move || {
                    let args = json!({"text": text, "ms": ms}).to_string();
                    let answer = servers.call("mcp__fake__slow", &args, &never());
                    assert_eq!(answer, Ok(text.to_string()));
                    let _ = finished.send(text);
                });
                // Make sure the slow request is sent first.
                thread::sleep(Duration::from_millis(100));
            }
        });
        assert_eq!(
            order.try_iter().collect::<Vec<_>>(),
            ["quick one", "slow one"]
        );
    }

    #[test]
    fn tool_errors_and_bad_calls_are_errors_for_the_model() {
        let (servers, _) = start_one("good", HANDSHAKE_TIMEOUT);
        assert_eq!(
            servers.call("mcp__fake__fail", "{}", &never()),
            Err("it went wrong".to_string())
        );
        assert!(
            servers
                .call("mcp__fake__echo", "{oops", &never())
                .unwrap_err()
                .contains("invalid JSON")
        );
        assert!(
            servers
                .call("mcp__other__echo", "{}", &never())
                .unwrap_err()
                .contains("no MCP server")
        );
        let unknown = servers.call("mcp__fake__nope", "{}", &never()).unwrap_err();
        assert!(unknown.contains("unknown tool (code -32602)"), "{unknown}");
    }

    #[test]
    fn a_crash_fails_the_call_at_once_and_reconnect_brings_the_server_back() {
        let (servers, _) = start_one("good", HANDSHAKE_TIMEOUT);
        let started = Instant::now();
        let crash = servers
            .call("mcp__fake__crash", "{}", &never())
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(crash.contains("Traceback: boom"), "{crash}");
        assert!(servers.status()[0].starts_with("fake: dead (the server exited"));
        assert_eq!(servers.tool_count(), 0);
        assert!(
            servers
                .call("mcp__fake__echo", "{}", &never())
                .unwrap_err()
                .contains("/mcp reconnect fake")
        );
        assert_eq!(
            servers.reconnect("fake"),
            Ok("fake: reconnected, 6 tools".to_string())
        );
        assert_eq!(
            servers.call("mcp__fake__echo", r#"{"text": "back"}"#, &never()),
            Ok("back".to_string())
        );
        assert!(servers.reconnect("nobody").is_err());
    }

    #[test]
    fn servers_that_fail_the_handshake_are_skipped_with_one_warning_each() {
        let missing = ServerConfig {
            command: "/no/such/mcp-server".to_string(),
            ..fixture("gone", "good")
        };
        let configs = vec![
            fixture("mute", "silent"),
            fixture("old", "ancient"),
            missing,
            fixture("ok", "good"),
        ];
        let (servers, warnings) = Servers::start_within(configs, Duration::from_millis(1500));
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings[0].contains("mute skipped: the MCP server gave no answer to initialize"));
        assert!(
            warnings[1].contains("unsupported protocol version 1999-01-01"),
            "{warnings:?}"
        );
        assert!(warnings[2].contains("could not start `/no/such/mcp-server`"));
        assert!(servers.status()[0].starts_with("mute: dead"));
        assert_eq!(servers.tool_count(), 6);
    }

    #[test]
    fn content_is_text_with_other_kinds_in_brackets() {
        let result = json!({"content": [
            {"type": "resource", "resource": {"uri": "file:///a", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "file:///b", "blob": "AA=="}},
            {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"},
            {"type": "resource_link", "uri": "file:///c", "name": "c"},
        ]});
        let expected =
            "inside\n[resource file:///b]\n[audio/wav, 3 bytes]\n[resource link file:///c]";
        assert_eq!(content_text(&result), expected);
        assert_eq!(
            content_text(&json!({"content": [], "structuredContent": {"n": 1}})),
            r#"{"n":1}"#
        );
        assert!(
            valid_function_name("mcp__fs__read_file") && !valid_function_name("mcp__fs__read.file")
        );
    }
}
