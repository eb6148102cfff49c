//! What the model is told about each built-in tool: the JSON schemas the request's `tools` list
//! carries, as plain data, one function a tool. `core/dispatch.rs` (`schemas`) lists them for
//! every request; each tool's file re-exports its own as `schema`, so `bash::schema()` still
//! names it.
//!
//! Why here and not beside each tool's code: together they are one text the model reads in
//! every request, tuned as one piece of the prompt (like `core/prompt.rs`), and a reader
//! following a turn reads them here without opening eight files whose code does not run (as
//! codex-rs keeps its tool specs in one file apart from their handlers). What keeps the two
//! halves in step: each tool's tests parse every property listed here into its `Args`. It does
//! not check or run a call: `dispatch.rs` parses the arguments, the tool's `run` does the rest.
//!
//! The parameters are written as the JSON text the model reads, not with `json!`: the same
//! value, and `json!`'s code for these eight was 36 KB of the binary (DESIGN.md, "Binary size").

use serde_json::{Value, json};

/// `bash.rs`: one shell command; its caps (15000 characters, 120 s by default, 600 at most) are
/// the constants at the top of that file.
pub(crate) fn bash() -> Value {
    let description = "Run a bash command in the working directory; returns stdout, stderr and \
        the exit code. stdin is closed: use non-interactive flags. A top-level `cd` (`cd src && \
        ls`) persists if the command succeeds; nothing else does (no variables). Output over \
        15000 characters is cut in the middle. Catastrophic commands (rm -rf ~, mkfs, curl | \
        sh) are refused; destructive ones (git reset --hard, git push --force) need the user's \
        approval.";
    tool(
        "bash",
        description,
        r#"{"type": "object", "required": ["command"], "properties": {
        "command": {"type": "string"},
        "timeout": {"type": "integer", "minimum": 1,
            "description": "Seconds before it and all it started are killed (default 120, at most 600)"}
    }}"#,
    )
}

/// `read_file.rs`: a window of a text file with line numbers. Paths need no description: the
/// system prompt says they are relative to the working directory unless absolute.
pub(crate) fn read_file() -> Value {
    let description = "Read a text file as `N:text` lines (N from 1). A long file ends with a \
        note saying how to read on.";
    tool(
        "read_file",
        description,
        r#"{"type": "object", "properties": {
        "file_path": {"type": "string"},
        "offset": {"type": "integer", "description": "First line (default 1)"},
        "limit": {"type": "integer", "description": "Most lines (default 2000)"}
    }, "required": ["file_path"]}"#,
    )
}

/// `write_file.rs`: a whole file, created or replaced.
pub(crate) fn write_file() -> Value {
    let description = "Create or overwrite a whole file, with any missing parent directories. \
        To change part of a file, prefer edit_file.";
    tool(
        "write_file",
        description,
        r#"{"type": "object", "properties": {
        "file_path": {"type": "string"},
        "content": {"type": "string"}
    }, "required": ["file_path", "content"]}"#,
    )
}

/// `edit_file.rs`: one exact, unique snippet replaced ("read first" is the system prompt's).
pub(crate) fn edit_file() -> Value {
    let description = "Replace `old_string` with `new_string`. `old_string` must match the file \
        exactly (whitespace included) and only once: add surrounding lines to make it unique.";
    tool(
        "edit_file",
        description,
        r#"{"type": "object", "properties": {
        "file_path": {"type": "string"},
        "old_string": {"type": "string"},
        "new_string": {"type": "string"}
    }, "required": ["file_path", "old_string", "new_string"]}"#,
    )
}

/// `glob.rs`: files by name pattern, newest first (its `MAX_SHOWN` is the 100).
pub(crate) fn glob() -> Value {
    let description = "Files whose path under `path` (default: the working directory) matches \
        a glob, newest first, at most 100. `*` stays in one directory, `**` crosses them: \
        `**/*.rs`, `*.{js,json}`. Skips .git, node_modules, target and .gitignored files.";
    tool(
        "glob",
        description,
        r#"{"type": "object", "properties": {
        "pattern": {"type": "string"},
        "path": {"type": "string"}
    }, "required": ["pattern"]}"#,
    )
}

/// `grep.rs`: file contents by regex (its `MAX_MATCHES` is the 200).
pub(crate) fn grep() -> Value {
    let description = "Search files under `path` (a file or directory; default: the working \
        directory) with a Rust regex, e.g. `fn\\s+main`, `(?i)todo`. Returns \
        `path:line: text`, at most 200 matches, sorted by path. Skips binary files, .git, \
        node_modules, target and .gitignored files.";
    tool(
        "grep",
        description,
        r#"{"type": "object", "properties": {
        "pattern": {"type": "string"},
        "path": {"type": "string"},
        "include": {"type": "string", "description": "Only files matching this glob, e.g. `*.rs`"}
    }, "required": ["pattern"]}"#,
    )
}

/// `todo_write.rs`: the model's own task list, replaced whole.
pub(crate) fn todo_write() -> Value {
    let description = "Replace your task list for a multi-step job: the whole list each time \
        ([] clears it), one task in_progress, each marked done when finished.";
    tool(
        "todo_write",
        description,
        r#"{"type": "object", "properties": {
        "tasks": {"type": "array", "items": {"type": "object", "properties": {
            "content": {"type": "string", "description": "A few words"},
            "status": {"type": "string", "enum": ["pending", "in_progress", "done"]}
        }, "required": ["content", "status"]}}
    }, "required": ["tasks"]}"#,
    )
}

/// `agent.rs`: sub-agents, one or a team (its `MAX_WORKERS` is the 8, `AT_A_TIME` the 4).
pub(crate) fn agent() -> Value {
    let description = "Hand self-contained work, with all the context it needs, to sub-agents \
        with a fresh context and the same tools but agent; each returns its final answer. \
        `task`: one job; `tasks`: a team of independent jobs, 4 at a time.";
    tool(
        "agent",
        description,
        r#"{"type": "object", "properties": {
        "task": {"type": "string"},
        "tasks": {"type": "array", "maxItems": 8, "items": {"type": "object",
            "required": ["name", "task"], "properties": {
                "name": {"type": "string", "description": "Short"}, "task": {"type": "string"}}}}
    }}"#,
    )
}

/// One tool's entry in the request's `tools` list. The parameters are this file's own
/// constant text, so they always parse; every tool's tests parse them.
fn tool(name: &str, description: &str, parameters: &str) -> Value {
    let parameters: Value = serde_json::from_str(parameters).expect("a tool's parameters parse");
    json!({"type": "function",
        "function": {"name": name, "description": description, "parameters": parameters}})
}
