//! What the user is shown of a call: its one-line summary (`bash(cargo test)`'s `cargo test`)
//! on every call line, and for a call the user is asked about, with its consent question so
//! the user answers knowing it, all of what it would do: an edit's diff, a write's size and
//! whole content, a command and the directory it runs in, any other tool's arguments.
//!
//! The batch (`core/batch.rs`) asks for the summary of each call, and a preview just before it
//! asks the user; how much of it is on screen before a "y" counts is the question's business
//! (`app/repl_consent.rs`), so nothing here is cut. It reads files but changes nothing; a call
//! whose preview fails (an edit whose text is not found) says so, and still runs, or not, as
//! the user answers.

use super::edit_file;
use crate::tools::ToolContext;
use crate::tools::support::files::resolve;
use serde_json::Value;

/// The preview of `name` with `arguments`: what the call would do, whole. A tool with no
/// preview of its own (an MCP tool, say), or arguments it cannot read, shows its arguments.
pub(crate) fn preview(name: &str, arguments: &str, ctx: &ToolContext) -> Option<String> {
    let Ok(args) = serde_json::from_str::<Value>(arguments) else {
        return Some(format!("(arguments that are not JSON) {arguments}"));
    };
    (own_preview(name, &args, ctx)).or_else(|| serde_json::to_string_pretty(&args).ok())
}

fn own_preview(name: &str, args: &Value, ctx: &ToolContext) -> Option<String> {
    let text = |field: &str| args[field].as_str().map(str::to_string);
    match name {
        "edit_file" => {
            let parsed: edit_file::Args = serde_json::from_value(args.clone()).ok()?;
            Some(match edit_file::preview(&parsed, ctx) {
                Ok(diff) => diff,
                Err(why) => format!("(this edit would fail: {why})"),
            })
        }
        "write_file" => {
            let (path, content) = (text("file_path")?, text("content")?);
            let path = resolve(&ctx.cwd, &path);
            let replaces = match std::fs::metadata(&path) {
                Ok(meta) => format!("replaces a file of {} bytes", meta.len()),
                Err(_) => "a new file".to_string(),
            };
            let (lines, size) = (content.lines().count(), content.len());
            let about = format!(
                "{}: {replaces}; {lines} lines, {size} bytes",
                path.display()
            );
            Some(format!("{about}\n{content}"))
        }
        "bash" => Some(format!(
            "$ {}\n(in {})",
            text("command")?,
            ctx.cwd.display()
        )),
        _ => None,
    }
}

/// The short form of a call shown to the user: `bash(cargo test)`'s `cargo test`.
pub(crate) fn summary(name: &str, arguments: &str) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let key = match name {
        "bash" => "command",
        "glob" | "grep" => "pattern",
        "agent" => "task",
        _ => "file_path",
    };
    // A team's and a todo list's size: both keep their entries under `tasks`.
    let tasks = args
        .get("tasks")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let text = match (name, args.get(key).and_then(Value::as_str)) {
        ("agent", None) => format!("team of {tasks}"),
        ("todo_write", _) => format!("{tasks} tasks"),
        (_, Some(text)) => text.to_string(),
        // MCP tools and the like: the first text argument says the most.
        (_, None) => (args.as_object().into_iter().flatten())
            .find_map(|(_, value)| value.as_str().map(String::from))
            .unwrap_or_default(),
    };
    let line = text.lines().next().unwrap_or("");
    match line.chars().count() > 80 || text.contains('\n') {
        true => format!("{}…", line.chars().take(80).collect::<String>()),
        false => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_are_one_short_line() {
        assert_eq!(summary("bash", r#"{"command":"cargo test"}"#), "cargo test");
        assert_eq!(summary("read_file", r#"{"file_path":"a.rs"}"#), "a.rs");
        assert_eq!(summary("bash", r#"{"command":"a\nb"}"#), "a…");
        assert_eq!(summary("todo_write", r#"{"tasks":[{},{}]}"#), "2 tasks");
        assert_eq!(summary("glob", "not json"), "");
    }

    #[test]
    fn a_preview_is_all_of_what_would_run() {
        let dir = crate::tools::test_support::TempDir::new("preview-whole");
        let ctx = crate::tools::test_support::test_context(&dir.0);
        let content = (1..=20).map(|n| format!("line {n}\n")).collect::<String>();
        let write = serde_json::json!({"file_path": "a.txt", "content": content});
        let shown = preview("write_file", &write.to_string(), &ctx).unwrap();
        assert!(shown.ends_with("line 19\nline 20\n"), "{shown}");
        // An MCP tool, and arguments a tool cannot read, show their arguments.
        let mcp = preview("mcp__srv__run", r#"{"script":"a\nb"}"#, &ctx).unwrap();
        assert_eq!(mcp, "{\n  \"script\": \"a\\nb\"\n}");
        let bad = preview("bash", r#"{"cmd":"rm"}"#, &ctx).unwrap();
        assert!(bad.contains("\"cmd\": \"rm\""), "{bad}");
        assert_eq!(
            preview("bash", "{oops", &ctx).unwrap(),
            "(arguments that are not JSON) {oops"
        );
    }
}
