//! The MCP config files: `~/.corecoder/mcp.json` and the project's `.mcp.json`, each holding
//! `{"mcpServers": {NAME: {command, args, env}}}`.
//!
//! `setup.rs` calls `load_config` once at start-up and hands the servers to `Servers::start`
//! (`mcp.rs`). This file only reads and merges the files: it starts no server and knows nothing
//! of the protocol. Only stdio servers are understood; any other entry is skipped with a warning.
//! An entry's `timeout` (seconds, 1 to 3600) bounds each call to the server, writes included.

use crate::extras::mcp_wire::ServerConfig;
use crate::tools::support::files::read_settings_text;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::time::Duration;

/// The longest `timeout` an entry may set: an hour.
const MAX_TIMEOUT_SECS: f64 = 3600.0;

/// Read `{"mcpServers": {NAME: {command, args, env}}}` from each file; a later file replaces an
/// earlier one's server of the same name. A missing file is fine; a broken one is a warning.
pub fn load_config(files: &[PathBuf]) -> (Vec<ServerConfig>, Vec<String>) {
    let (mut configs, mut warnings) = (Vec::<ServerConfig>::new(), Vec::new());
    for file in files {
        let entries = match read_settings_text(file) {
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => vec![Err(e.to_string())],
            Ok(text) => parse_config(&text),
        };
        for entry in entries {
            match entry {
                Ok(config) => {
                    configs.retain(|old| old.name != config.name);
                    configs.push(config);
                }
                Err(e) => warnings.push(format!("{}: {e}", file.display())),
            }
        }
    }
    (configs, warnings)
}

#[derive(Deserialize)]
struct ConfigEntry {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// Seconds a call may take; 60 when absent.
    timeout: Option<f64>,
}

/// One result per server entry, so one bad entry does not cost the others.
fn parse_config(text: &str) -> Vec<Result<ServerConfig, String>> {
    let file: Value = match serde_json::from_str(text) {
        Ok(file) => file,
        Err(e) => return vec![Err(format!("not valid JSON ({e})"))],
    };
    let Some(servers) = file.get("mcpServers").and_then(Value::as_object) else {
        return vec![Err("no \"mcpServers\" object".to_string())];
    };
    let entry = |(name, value): (&String, &Value)| {
        let entry = ConfigEntry::deserialize(value)
            .map_err(|e| format!("server {name:?} skipped ({e}; only stdio is supported)"))?;
        let (command, args) = (entry.command, entry.args);
        let env = entry.env.into_iter().collect();
        let timeout = (entry.timeout)
            .filter(|secs| secs.is_finite())
            .map(|secs| Duration::from_secs_f64(secs.clamp(1.0, MAX_TIMEOUT_SECS)));
        Ok(ServerConfig {
            name: name.clone(),
            command,
            args,
            env,
            timeout,
        })
    };
    servers.iter().map(entry).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_files_merge_by_server_name_and_bad_entries_warn() {
        let dir = std::env::temp_dir().join(format!("corecoder-mcp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| {
            std::fs::write(dir.join(name), text).unwrap();
            dir.join(name)
        };
        let home = write(
            "home.json",
            r#"{"mcpServers": {"a": {"command": "x"},
            "b": {"command": "old", "args": ["1"]}}}"#,
        );
        let project = write(
            "project.json",
            r#"{"mcpServers": {"b": {"command": "new", "timeout": 0.01,
            "env": {"K": "V"}}, "web": {"url": "https://example.com/mcp"}}}"#,
        );
        let broken = write("broken.json", "{not json");
        let files = [home, dir.join("missing.json"), project, broken];
        let (configs, warnings) = load_config(&files);
        let names: Vec<_> = configs
            .iter()
            .map(|c| (c.name.as_str(), c.command.as_str()))
            .collect();
        assert_eq!(names, [("a", "x"), ("b", "new")]);
        assert_eq!(configs[1].args, Vec::<String>::new());
        assert_eq!(configs[1].env, [("K".to_string(), "V".to_string())]);
        // A timeout is at least a second; none is the default.
        assert_eq!(configs[1].timeout, Some(std::time::Duration::from_secs(1)));
        assert_eq!(configs[0].timeout, None);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("server \"web\" skipped"));
        assert!(warnings[1].contains("broken.json: not valid JSON"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
