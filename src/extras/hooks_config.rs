//! The hooks config files: `~/.corecoder/hooks.json` and the project's `.corecoder/hooks.json`,
//! in our flat form or Claude Code's nested one, and the tool names both dialects use.
//!
//! `Hooks::load` (`hooks.rs`) hands each file's text to `parse`; the hooks it runs are matched
//! to a tool with `matches_tool`. This file only reads: it runs no hook and knows nothing of
//! what a hook answers.

use serde_json::Value;
use std::time::Duration;

/// A hook's timeout when its entry gives none.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// When a hook runs. The variant names are Claude Code's event names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HookEvent {
    PreToolUse,
    PostToolUse,
    UserPromptSubmit,
    Stop,
    SessionStart,
}

/// One configured hook.
#[derive(Debug)]
pub(crate) struct Hook {
    pub(crate) event: HookEvent,
    /// Tool events only: which tools, as `bash`, `Bash|Edit`, `*` or empty (all).
    pub(crate) matcher: String,
    pub(crate) command: String,
    pub(crate) timeout: Duration,
}

/// Add the hooks of one file to `found`. Accepts our flat form (`{"PreToolUse": [{"matcher",
/// "command", "timeout"}]}`) and Claude Code's, which nests it all under `"hooks"` and gives
/// each matcher a list of commands. Parts we do not support are skipped with a warning, so a
/// Claude Code settings file still brings the hooks we can run.
pub(crate) fn parse(
    text: &str,
    found: &mut Vec<Hook>,
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    let root: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let events = root.get("hooks").unwrap_or(&root);
    let events = events.as_object().ok_or("expected a JSON object")?;
    for (name, entries) in events {
        let Some(event) = event_named(name) else {
            warnings.push(format!("hooks: event '{name}' is not supported, skipped"));
            continue;
        };
        let entries = entries
            .as_array()
            .ok_or(format!("'{name}' is not a list"))?;
        for entry in entries {
            let matcher = entry.get("matcher").and_then(Value::as_str).unwrap_or("");
            let commands = match entry.get("hooks").and_then(Value::as_array) {
                Some(nested) => nested.iter().collect(),
                None => vec![entry],
            };
            for command in commands {
                let kind = command.get("type").and_then(Value::as_str);
                if kind.is_some_and(|kind| kind != "command") {
                    warnings.push(format!("hooks: '{name}' hook of type {kind:?} skipped"));
                    continue;
                }
                let text = command.get("command").and_then(Value::as_str);
                let text = text.ok_or(format!("a '{name}' hook has no \"command\""))?;
                let seconds = command.get("timeout").and_then(Value::as_f64);
                // Clamped: `from_secs_f64` panics on negative or enormous values.
                let timeout = seconds.filter(|s| *s > 0.0).map(|s| s.min(86_400.0));
                found.push(Hook {
                    event,
                    matcher: matcher.to_string(),
                    command: text.to_string(),
                    timeout: timeout.map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64),
                });
            }
        }
    }
    Ok(())
}

fn event_named(name: &str) -> Option<HookEvent> {
    Some(match name {
        "PreToolUse" => HookEvent::PreToolUse,
        "PostToolUse" => HookEvent::PostToolUse,
        "UserPromptSubmit" => HookEvent::UserPromptSubmit,
        "Stop" => HookEvent::Stop,
        "SessionStart" => HookEvent::SessionStart,
        _ => return None,
    })
}

/// `*` or empty matches every tool; otherwise one of the `|` alternatives must name the tool,
/// by our name or by Claude Code's.
pub(crate) fn matches_tool(matcher: &str, tool: &str) -> bool {
    let matcher = matcher.trim();
    matcher.is_empty()
        || matcher.split('|').map(str::trim).any(|alternative| {
            alternative == "*" || alternative == tool || claude_tool(alternative) == Some(tool)
        })
}

fn claude_tool(name: &str) -> Option<&'static str> {
    Some(match name {
        "Bash" => "bash",
        "Read" => "read_file",
        "Write" => "write_file",
        "Edit" | "MultiEdit" => "edit_file",
        "Glob" => "glob",
        "Grep" => "grep",
        "Task" => "agent",
        "TodoWrite" => "todo_write",
        _ => return None,
    })
}
