//! How corecoder's things look in ACP: the session modes (plan mode), a tool's kind, the file a call touches (absolute, from
//! the session's `cwd`), a `tool_call` update, text content, and the todo list as plan entries.
//!
//! Shared by a live turn (`acp/turn.rs`) and a loaded session's replay (`acp/load.rs`). Pure
//! shapes, but for reading a file for a diff; nothing here sends anything.

use crate::core::consent::Plan;
use crate::tools::support::files::{MAX_SETTINGS_BYTES, read_capped};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// ACP's kind of a tool, for the editor's icon.
pub(crate) fn kind(name: &str) -> &'static str {
    match name {
        "read_file" => "read",
        "write_file" | "edit_file" => "edit",
        "bash" => "execute",
        "grep" | "glob" => "search",
        "todo_write" | "agent" => "think",
        _ => "other",
    }
}

/// The absolute path a file tool's call reads or writes, resolved against the session's `cwd`.
pub(crate) fn path_of(
    name: &str,
    arguments: Option<&str>,
    summary: &str,
    cwd: &Path,
) -> Option<PathBuf> {
    if !matches!(name, "read_file" | "write_file" | "edit_file") {
        return None;
    }
    let args: Option<Value> = arguments.and_then(|a| serde_json::from_str(a).ok());
    let from_args = args
        .as_ref()
        .and_then(|a| a["file_path"].as_str().map(String::from));
    let path = from_args.unwrap_or_else(|| summary.to_string());
    (!path.is_empty() && !path.ends_with('…')).then(|| cwd.join(path))
}

/// A `tool_call` update: `pending`, its kind, the file it touches, its arguments as given.
pub(crate) fn tool_call(
    id: &str,
    name: &str,
    summary: &str,
    path: Option<&Path>,
    arguments: Option<&str>,
) -> Value {
    let locations: Vec<Value> = path
        .map(|p| json!({"path": p.display().to_string()}))
        .into_iter()
        .collect();
    let raw: Value = arguments
        .and_then(|a| serde_json::from_str(a).ok())
        .unwrap_or(Value::Null);
    json!({
        "sessionUpdate": "tool_call", "toolCallId": id, "title": format!("{name}({summary})"),
        "kind": kind(name), "status": "pending", "locations": locations, "rawInput": raw,
    })
}

pub(crate) fn text_content(text: &str) -> Value {
    json!({"type": "content", "content": {"type": "text", "text": text}})
}

/// A file as text, for a diff: `Some(None)` when it does not exist, `None` when it cannot be
/// read whole (unreadable, or over `MAX_SETTINGS_BYTES`): no diff beats a wrong one.
pub(crate) fn read_text(path: &Path) -> Option<Option<String>> {
    match read_capped(path, MAX_SETTINGS_BYTES) {
        Ok(bytes) => Some(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(None),
        Err(_) => None,
    }
}

/// The todo list as ACP plan entries: from the call's arguments, or else from the tool's
/// one-line-a-task rendering (`[x]`, `[>]`, `[ ]`). A todo has no priority: all are medium.
pub(crate) fn plan_entries(arguments: Option<&str>, rendered: &str) -> Vec<Value> {
    let entry = |content: &str, status: &str| {
        let status = match status {
            "done" | "completed" | "[x]" => "completed",
            "in_progress" | "[>]" => "in_progress",
            _ => "pending",
        };
        json!({"content": content, "priority": "medium", "status": status})
    };
    let args: Option<Value> = arguments.and_then(|a| serde_json::from_str(a).ok());
    if let Some(tasks) = args.as_ref().and_then(|a| a["tasks"].as_array()) {
        let task = |t: &Value| {
            entry(
                t["content"].as_str().unwrap_or(""),
                t["status"].as_str().unwrap_or(""),
            )
        };
        return tasks.iter().map(task).collect();
    }
    let line = |l: &str| {
        l.split_at_checked(3)
            .map(|(mark, rest)| entry(rest.trim(), mark))
    };
    rendered
        .lines()
        .filter(|l| l.starts_with('['))
        .filter_map(line)
        .collect()
}

/// The modes a session offers: the session's own (ask before changes, or allow all under
/// `--yes`) and plan mode (only read-only tools run), `session/set_mode` switches between.
pub(crate) const DEFAULT_MODE: &str = "default";
pub(crate) const PLAN_MODE: &str = "plan";

pub(crate) fn modes(plan: Plan, allow_all: bool) -> Value {
    let default = match allow_all {
        true => "Allow all (--yes)",
        false => "Ask before changes",
    };
    let current = match plan {
        Plan::On => PLAN_MODE,
        Plan::Off => DEFAULT_MODE,
    };
    json!({"currentModeId": current, "availableModes": [
        {"id": DEFAULT_MODE, "name": default},
        {"id": PLAN_MODE, "name": "Plan", "description": "only read-only tools run: the model plans, nothing changes"},
    ]})
}
