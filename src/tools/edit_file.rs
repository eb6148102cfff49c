//! The `edit_file` tool: replace one exact, unique snippet of a text file.
//!
//! Runs when the model calls it (after consent: it mutates). Requiring `old_string` to occur
//! exactly once makes the edit unambiguous; the reply carries a unified diff so the model sees
//! what changed. The write is atomic and happens only after every check passed, so a failed edit
//! leaves the file untouched; with a sandbox on, so does a path outside its writable roots
//! (`ShellSafety::check_write`). It does not edit non-UTF-8 files, fuzzy-match, or replace all.

use crate::core::message::Outcome;
use crate::tools::ToolContext;
use crate::tools::support::files::{self, Access, resolve, write_atomic};
use crate::tools::support::text::{first_chars, truncate_middle};
use serde::Deserialize;
use std::io;

/// What the model is told about this tool (plain data, with the other tools' schemas).
pub(crate) use crate::tools::schemas::edit_file as schema;

/// How much of the file a "not found" error quotes, so the model can re-anchor.
const QUOTE_CHARS: usize = 500;
const MAX_DIFF_CHARS: usize = 4000;

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    pub(crate) file_path: String,
    pub(crate) old_string: String,
    pub(crate) new_string: String,
}

pub fn run(args: Args, ctx: &ToolContext) -> Result<Outcome, String> {
    let Planned {
        path,
        shown,
        text,
        updated,
    } = plan(&args, ctx)?;
    let write = || {
        write_atomic(&path, updated.as_bytes(), Access::AsBefore)
            .map_err(|e| format!("cannot write {shown}: {e}"))
    };
    ctx.shell.write_confined(&write)?;
    Ok(Outcome::text(format!(
        "Edited {shown}\n{}",
        diff(&text, &updated, &shown)
    )))
}

/// The diff the edit would make, for its consent question (nothing is written), or why it
/// would fail.
pub(crate) fn preview(args: &Args, ctx: &ToolContext) -> Result<String, String> {
    let Planned {
        shown,
        text,
        updated,
        ..
    } = plan(args, ctx)?;
    Ok(diff(&text, &updated, &shown))
}

/// An edit that passed every check, not yet written.
struct Planned {
    path: std::path::PathBuf,
    shown: String,
    text: String,
    updated: String,
}

fn plan(args: &Args, ctx: &ToolContext) -> Result<Planned, String> {
    let path = resolve(&ctx.cwd, &args.file_path);
    ctx.shell.check_write(&path)?;
    let shown = path.display().to_string();
    if args.old_string.is_empty() {
        return Err("old_string is empty; to create or overwrite a file use write_file".into());
    }
    if args.old_string == args.new_string {
        return Err("old_string and new_string are identical; nothing to change".into());
    }
    let bytes = files::read_capped(&path, files::MAX_WHOLE_BYTES).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => format!("file not found: {shown}"),
        _ => format!("cannot read {shown}: {e}"),
    })?;
    let Ok(text) = String::from_utf8(bytes) else {
        return Err(format!(
            "{shown} is not UTF-8 text; edit_file only edits UTF-8 files"
        ));
    };
    let (old, new) = in_file_line_endings(&text, &args.old_string, &args.new_string);
    match text.matches(old.as_str()).count() {
        0 => return Err(not_found(&text, &shown)),
        1 => {}
        n => {
            return Err(format!(
                "old_string appears {n} times in {shown}; include more surrounding lines to make it unique"
            ));
        }
    }
    let updated = text.replacen(old.as_str(), &new, 1);
    Ok(Planned {
        path,
        shown,
        text,
        updated,
    })
}

/// Models write `\n`. In a file that uses `\r\n`, translate both strings so the match works and
/// the inserted lines keep the file's line endings; the rest of the file is left byte for byte.
fn in_file_line_endings(text: &str, old: &str, new: &str) -> (String, String) {
    let crlf_file = text.contains("\r\n") && !old.contains('\r') && !new.contains('\r');
    if crlf_file {
        (old.replace('\n', "\r\n"), new.replace('\n', "\r\n"))
    } else {
        (old.to_string(), new.to_string())
    }
}

fn not_found(text: &str, shown: &str) -> String {
    let head = first_chars(text, QUOTE_CHARS);
    let more = if head.len() < text.len() { "\n…" } else { "" };
    format!(
        "old_string not found in {shown} (it must match exactly, whitespace included). \
         The file starts with:\n{head}{more}"
    )
}

fn diff(old: &str, new: &str, shown: &str) -> String {
    let unified = crate::tools::support::diff::unified(old, new, shown, shown);
    truncate_middle(&unified, MAX_DIFF_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::{TempDir, test_context};
    use std::fs;

    fn edit(dir: &TempDir, old: &str, new: &str) -> Result<String, String> {
        let args = Args {
            file_path: "f.txt".into(),
            old_string: old.into(),
            new_string: new.into(),
        };
        run(args, &test_context(&dir.0)).map(|o| o.text)
    }

    fn content(dir: &TempDir) -> Vec<u8> {
        fs::read(dir.0.join("f.txt")).unwrap()
    }

    #[test]
    fn unique_match_is_replaced_with_a_diff() {
        let dir = TempDir::new("edit-unique");
        let path = dir.write("f.txt", "a\nb\nc\n");
        let text = edit(&dir, "b\n", "B\nB2\n").unwrap();
        assert!(text.starts_with(&format!("Edited {}\n", path.display())));
        assert!(text.contains("@@ -1,3 +1,4 @@"));
        assert!(text.contains("-b\n+B\n+B2\n"));
        assert_eq!(content(&dir), b"a\nB\nB2\nc\n");
    }

    #[test]
    fn ambiguous_unmatched_and_empty_leave_the_file_alone() {
        let dir = TempDir::new("edit-errors");
        let path = dir.write("f.txt", "x = 1\nx = 1\n");
        let err = edit(&dir, "x = 1", "x = 2").unwrap_err();
        let want = format!(
            "old_string appears 2 times in {}; include more surrounding lines to make it unique",
            path.display()
        );
        assert_eq!(err, want);
        let err = edit(&dir, "y = 1", "y = 2").unwrap_err();
        assert!(err.starts_with("old_string not found"));
        assert!(err.ends_with("The file starts with:\nx = 1\nx = 1\n"));
        assert!(edit(&dir, "", "z").unwrap_err().contains("empty"));
        assert_eq!(content(&dir), b"x = 1\nx = 1\n");
    }

    #[test]
    fn crlf_file_matches_lf_strings_and_stays_crlf() {
        let dir = TempDir::new("edit-crlf");
        dir.write("f.txt", "one\r\ntwo\r\nthree\r\n");
        let text = edit(&dir, "one\ntwo\n", "one\n2\n").unwrap();
        assert!(!text.contains('\r'));
        assert_eq!(content(&dir), b"one\r\n2\r\nthree\r\n");
    }

    #[test]
    fn non_utf8_and_missing_files_are_refused() {
        let dir = TempDir::new("edit-latin1");
        dir.write("f.txt", b"caf\xe9\n");
        assert!(edit(&dir, "caf", "bar").unwrap_err().contains("not UTF-8"));
        assert_eq!(content(&dir), b"caf\xe9\n");
        fs::remove_file(dir.0.join("f.txt")).unwrap();
        assert!(
            edit(&dir, "a", "b")
                .unwrap_err()
                .starts_with("file not found")
        );
    }

    #[test]
    fn long_diffs_are_capped() {
        let dir = TempDir::new("edit-long");
        let old: String = (0..2000).map(|i| format!("old {i}\n")).collect();
        dir.write("f.txt", &old);
        let text = edit(&dir, &old, "short\n").unwrap();
        assert!(text.contains("characters cut"));
        assert!(text.len() < 5000);
    }

    #[test]
    fn every_property_of_its_schema_is_a_field_of_its_args() {
        crate::tools::test_support::check_schema_fits::<Args>(&schema());
    }
}
