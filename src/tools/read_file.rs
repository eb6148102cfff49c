//! The `read_file` tool: show a window of a text file with line numbers.
//!
//! Runs when the model calls it (read-only, no consent needed). It streams the file line by line,
//! so a huge file costs memory only for the lines shown, and says when more lines remain so the
//! model can page on with `offset`. It does not show binary files or directories, and caps very
//! long lines and the total output so one minified file cannot flood the context.

use super::{Outcome, ToolContext, resolve};
use serde::Deserialize;
use serde_json::{Value, json};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

const DEFAULT_LIMIT: usize = 2000;
const MAX_LINE_CHARS: usize = 2000;
/// Past this much output the window ends early; the closing note tells the model where.
const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// A NUL byte in this much of the start marks a file as binary (the same test git uses).
const BINARY_PROBE: usize = 8192;

#[derive(Debug, Deserialize)]
pub struct Args {
    pub file_path: String,
    #[serde(default)]
    pub offset: Option<usize>,
    #[serde(default)]
    pub limit: Option<usize>,
}

pub fn schema() -> Value {
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

pub fn run(args: Args, ctx: &ToolContext) -> Result<Outcome, String> {
    let path = resolve(&ctx.cwd, &args.file_path);
    let shown = path.display();
    let reader = open_text(&path)?;
    let first = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let window =
        read_window(reader, first, limit).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if window.total == 0 {
        return Ok(Outcome::text("(empty file)"));
    }
    if first > window.total {
        let total = window.total;
        return Err(format!(
            "offset {first} is past the end of {shown} ({total} lines)"
        ));
    }
    let mut text = window.text;
    if window.last < window.total {
        text.push_str(&format!(
            "(… {} lines total, showing {first}-{}; use offset {} to read on)",
            window.total,
            window.last,
            window.last + 1
        ));
    }
    Ok(Outcome::text(text))
}

/// Open `path` for reading, refusing what is not a regular text file.
fn open_text(path: &Path) -> Result<BufReader<File>, String> {
    let shown = path.display();
    let file = File::open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => format!("file not found: {shown}"),
        _ => format!("cannot open {shown}: {e}"),
    })?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(format!(
            "{shown} is a directory, not a file (use glob to list it)"
        ));
    }
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let start = reader
        .fill_buf()
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if start[..start.len().min(BINARY_PROBE)].contains(&0) {
        return Err(format!(
            "{shown} looks binary (it contains NUL bytes); read_file shows text only"
        ));
    }
    Ok(reader)
}

/// The numbered lines shown, the last line number shown (0 if none) and the file's line count.
struct Window {
    text: String,
    last: usize,
    total: usize,
}

fn read_window(mut reader: impl BufRead, first: usize, limit: usize) -> io::Result<Window> {
    let mut window = Window {
        text: String::new(),
        last: 0,
        total: 0,
    };
    let mut line = Vec::new();
    // Keep reading past the window only to count lines, reusing one buffer.
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(window);
        }
        window.total += 1;
        let n = window.total;
        let in_window = n >= first && n < first + limit && window.text.len() < MAX_OUTPUT_BYTES;
        if in_window {
            push_numbered(&mut window.text, n, &line);
            window.last = n;
        }
    }
}

/// Append `N<TAB>text\n`, cutting a very long line and saying so.
fn push_numbered(out: &mut String, number: usize, raw: &[u8]) {
    let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let text = String::from_utf8_lossy(raw);
    out.push_str(&number.to_string());
    out.push('\t');
    match text.char_indices().nth(MAX_LINE_CHARS) {
        None => out.push_str(&text),
        Some((cut, _)) => {
            out.push_str(&text[..cut]);
            let total = text.chars().count();
            out.push_str(&format!(" … [line cut: {total} characters]"));
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::{TempDir, test_context};

    fn read(
        dir: &TempDir,
        path: &str,
        offset: Option<usize>,
        limit: Option<usize>,
    ) -> Result<String, String> {
        let args = Args {
            file_path: path.into(),
            offset,
            limit,
        };
        run(args, &test_context(&dir.0)).map(|o| o.text)
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn whole_file_has_numbers_and_no_note() {
        let dir = TempDir::new("read-whole");
        dir.write("f.txt", "a\r\nb\nc");
        assert_eq!(
            read(&dir, "f.txt", None, None).unwrap(),
            "1\ta\n2\tb\n3\tc\n"
        );
    }

    #[test]
    fn window_in_the_middle_has_a_note() {
        let dir = TempDir::new("read-window");
        dir.write("f.txt", numbered(12));
        let text = read(&dir, "f.txt", Some(3), Some(2)).unwrap();
        assert_eq!(
            text,
            "3\tline 3\n4\tline 4\n(… 12 lines total, showing 3-4; use offset 5 to read on)"
        );
        let tail = read(&dir, "f.txt", Some(11), Some(5)).unwrap();
        assert_eq!(tail, "11\tline 11\n12\tline 12\n");
    }

    #[test]
    fn offset_past_end_and_empty_file() {
        let dir = TempDir::new("read-past");
        let path = dir.write("f.txt", numbered(12));
        let err = read(&dir, "f.txt", Some(50), None).unwrap_err();
        assert_eq!(
            err,
            format!("offset 50 is past the end of {} (12 lines)", path.display())
        );
        dir.write("empty.txt", "");
        assert_eq!(read(&dir, "empty.txt", None, None).unwrap(), "(empty file)");
    }

    #[test]
    fn errors_for_missing_directory_and_binary() {
        let dir = TempDir::new("read-errors");
        assert!(
            read(&dir, "nope.txt", None, None)
                .unwrap_err()
                .starts_with("file not found")
        );
        std::fs::create_dir_all(dir.0.join("d")).unwrap();
        assert!(
            read(&dir, "d", None, None)
                .unwrap_err()
                .contains("is a directory")
        );
        dir.write("b.bin", b"ab\0cd");
        assert!(
            read(&dir, "b.bin", None, None)
                .unwrap_err()
                .contains("binary")
        );
    }

    #[test]
    fn long_lines_are_cut_and_invalid_utf8_is_lossy() {
        let dir = TempDir::new("read-long");
        dir.write("min.js", "x".repeat(5000));
        let text = read(&dir, "min.js", None, None).unwrap();
        assert!(text.contains("… [line cut: 5000 characters]"));
        assert!(text.len() < 2100);
        dir.write("latin1.txt", b"caf\xe9\n");
        assert_eq!(
            read(&dir, "latin1.txt", None, None).unwrap(),
            "1\tcaf\u{fffd}\n"
        );
    }
}
