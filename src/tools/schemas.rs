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

use serde_json::{Value, json};

/// `bash.rs`: one shell command; its caps (15000 characters, 120 s by default, 600 at most) are
/// the constants at the top of that file.
pub(crate) fn bash() -> Value {
    let description = "Run a shell command with bash in the current working directory and \
        return its stdout, stderr and exit code. stdin is closed, so use non-interactive flags. \
        A top-level `cd` (as in `cd src && ls`) carries over to later commands when the command \
        succeeds; nothing else does (no environment variables). Output over 15000 characters \
        is cut in the middle. Catastrophic commands (rm -rf ~, mkfs, curl | sh, ...) are refused; \
        destructive ones (git reset --hard, git push --force, ...) need the user's approval.";
    let timeout = "Seconds before the command and everything it started are killed (default \
        120, at most 600; a larger value is capped).";
    json!({"type": "function", "function": {"name": "bash", "description": description,
        "parameters": {"type": "object", "required": ["command"], "properties": {
            "command": {"type": "string", "description": "The command line to run."},
            "timeout": {"type": "integer", "minimum": 1, "description": timeout}
        }}
    }})
}

/// `read_file.rs`: a window of a text file with line numbers.
pub(crate) fn read_file() -> Value {
    json!({"type": "function", "function": {
        "name": "read_file",
        "description": "Read a text file. Lines come back as `N<TAB>text` with 1-based line \
            numbers. Long files: a note at the end says how to read the next window.",
        "parameters": {"type": "object", "properties": {
            "file_path": {"type": "string", "description": "Path, absolute or relative to the working directory"},
            "offset": {"type": "integer", "description": "First line to show, 1-based (default 1)"},
            "limit": {"type": "integer", "description": "Maximum lines to show (default 2000)"}
        }, "required": ["file_path"]}
    }})
}

/// `write_file.rs`: a whole file, created or replaced.
pub(crate) fn write_file() -> Value {
    json!({"type": "function", "function": {
        "name": "write_file",
        "description": "Create a file or overwrite it entirely with `content`. Creates missing \
            parent directories. To change part of an existing file, prefer edit_file.",
        "parameters": {"type": "object", "properties": {
            "file_path": {"type": "string", "description": "Path, absolute or relative to the working directory"},
            "content": {"type": "string", "description": "The complete new file content"}
        }, "required": ["file_path", "content"]}
    }})
}

/// `edit_file.rs`: one exact, unique snippet replaced.
pub(crate) fn edit_file() -> Value {
    json!({"type": "function", "function": {
        "name": "edit_file",
        "description": "Replace `old_string` with `new_string` in a file. `old_string` must match \
            the file exactly (whitespace included) and occur exactly once; include surrounding \
            lines to make it unique. Read the file first.",
        "parameters": {"type": "object", "properties": {
            "file_path": {"type": "string", "description": "Path, absolute or relative to the working directory"},
            "old_string": {"type": "string", "description": "Exact text to replace"},
            "new_string": {"type": "string", "description": "Replacement text"}
        }, "required": ["file_path", "old_string", "new_string"]}
    }})
}

/// `glob.rs`: files by name pattern, newest first (its `MAX_SHOWN` is the 100).
pub(crate) fn glob() -> Value {
    json!({"type": "function", "function": {
        "name": "glob",
        "description": "Find files whose path matches a glob, newest first (max 100). \
            `*` stays within one directory, `**` crosses directories: `**/*.rs`, `src/*.ts`, \
            `*.{js,json}`. Skips .git, node_modules, target and .gitignored files.",
        "parameters": {"type": "object", "properties": {
            "pattern": {"type": "string", "description": "Glob matched against paths relative to `path`"},
            "path": {"type": "string", "description": "Directory to search (default: working directory)"}
        }, "required": ["pattern"]}
    }})
}

/// `grep.rs`: file contents by regex (its `MAX_MATCHES` is the 200).
pub(crate) fn grep() -> Value {
    json!({"type": "function", "function": {
        "name": "grep",
        "description": "Search file contents with a regex (Rust syntax). Returns `path:line: text`, \
            at most 200 matches, sorted by path. Skips binary files, .git, node_modules, target \
            and .gitignored files.",
        "parameters": {"type": "object", "properties": {
            "pattern": {"type": "string", "description": "Regular expression, e.g. `fn\\s+main` or `(?i)todo`"},
            "path": {"type": "string", "description": "File or directory to search (default: working directory)"},
            "include": {"type": "string", "description": "Only files matching this glob, e.g. `*.rs` or `src/**/*.{ts,tsx}`"}
        }, "required": ["pattern"]}
    }})
}

/// `todo_write.rs`: the model's own task list, replaced whole.
pub(crate) fn todo_write() -> Value {
    json!({"type": "function", "function": {
        "name": "todo_write",
        "description": "Replace your task list for a multi-step job (send the whole list each \
            time; [] clears it). Keep one task in_progress; mark tasks done as you finish them.",
        "parameters": {"type": "object", "properties": {
            "tasks": {"type": "array", "items": {"type": "object", "properties": {
                "content": {"type": "string", "description": "What to do, in a few words"},
                "status": {"type": "string", "enum": ["pending", "in_progress", "done"]}
            }, "required": ["content", "status"]}}
        }, "required": ["tasks"]}
    }})
}

/// `agent.rs`: sub-agents, one or a team (its `MAX_WORKERS` is the 8, `AT_A_TIME` the 4).
pub(crate) fn agent() -> Value {
    json!({"type": "function", "function": {
        "name": "agent",
        "description": "Give self-contained work to sub-agents with a fresh context and the same \
            tools (except agent). Use `task` for one job, or `tasks` for a team of up to 8 \
            independent jobs that run in parallel (4 at a time). Each returns its final answer.",
        "parameters": {"type": "object", "properties": {
            "task": {"type": "string", "description": "One task, with all the context it needs"},
            "tasks": {"type": "array", "minItems": 1, "maxItems": 8,
                "description": "A team: independent tasks, each with a short name",
                "items": {"type": "object", "required": ["name", "task"], "properties": {
                    "name": {"type": "string"}, "task": {"type": "string"}}}}
        }}
    }})
}
