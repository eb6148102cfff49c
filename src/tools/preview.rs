//! What a mutating call would do, shown with its consent question so the user answers knowing
//! it: an edit's diff, the start and size of a write, a command and the directory it runs in.
//!
//! The batch (`batch.rs`) asks for a preview just before it asks the user. It reads files but
//! changes nothing; a call whose preview fails (an edit whose text is not found) says so, and
//! still runs, or not, as the user answers.

use super::edit_file;
use crate::core::dispatch::ToolContext;
use crate::tools::support::files::resolve;
use serde_json::Value;

/// Lines of a write's content shown before the question.
const WRITE_LINES: usize = 8;

/// The preview of `name` with `arguments`, for the tools that change something.
pub fn preview(name: &str, arguments: &str, ctx: &ToolContext) -> Option<String> {
    let args: Value = serde_json::from_str(arguments).ok()?;
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
            let lines = content.lines().count();
            let head: Vec<&str> = content.lines().take(WRITE_LINES).collect();
            let more = match lines > WRITE_LINES {
                true => format!("\n… {} more lines", lines - WRITE_LINES),
                false => String::new(),
            };
            let size = content.len();
            let about = format!(
                "{}: {replaces}; {lines} lines, {size} bytes",
                path.display()
            );
            Some(format!("{about}\n{}{more}", head.join("\n")))
        }
        "bash" => Some(format!(
            "$ {}\n(in {})",
            text("command")?,
            ctx.cwd.display()
        )),
        _ => None,
    }
}
