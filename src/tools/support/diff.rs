//! Unified diffs of two texts: the preview `edit_file` returns and what `/diff` prints.
//!
//! The lines are compared by `similar`'s Myers algorithm, called directly on slices of lines
//! (not through `similar::TextDiff`: see DESIGN.md, "Diffs"). The hunks are written here, in
//! the same format as `diff -u`. This does not shorten long diffs or colour them; the callers do.

use similar::algorithms::{Capture, Compact, Replace, myers};
use similar::udiff::UnifiedHunkHeader;
use similar::{DiffOp, DiffTag, group_diff_ops};
use std::fmt::Write;

/// Lines of unchanged context around each change, as `diff -u` has.
const CONTEXT: usize = 3;

/// `--- old_name`, `+++ new_name` and the hunks; empty when the texts are equal. `\r\n` line
/// ends are shown as `\n`, so a CRLF file's diff does not carry stray carriage returns.
pub(crate) fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let (old_lines, new_lines) = (&old_lines[..], &new_lines[..]);
    // Replace pairs a deletion with the insertion after it; Compact slides ambiguous hunks
    // (a repeated blank line, say) to where a reader expects them.
    let mut hook = Compact::new(Replace::new(Capture::new()), old_lines, new_lines);
    // The error type of these hooks is `Infallible`: there is nothing to handle.
    let _ = myers::diff(
        &mut hook,
        old_lines,
        0..old_lines.len(),
        new_lines,
        0..new_lines.len(),
    );
    let ops = hook.into_inner().into_inner().into_ops();
    let mut out = String::new();
    for (n, hunk) in group_diff_ops(ops, CONTEXT).iter().enumerate() {
        if n == 0 {
            let _ = writeln!(out, "--- {old_name}\n+++ {new_name}");
        }
        write_hunk(&mut out, hunk, old_lines, new_lines);
    }
    out.replace("\r\n", "\n")
}

/// One `@@ -a,b +c,d @@` header and its lines, each marked ` `, `-` or `+`.
fn write_hunk(out: &mut String, hunk: &[DiffOp], old_lines: &[&str], new_lines: &[&str]) {
    let _ = writeln!(out, "{}", UnifiedHunkHeader::new(hunk));
    for op in hunk {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => write_lines(out, ' ', &old_lines[old_range]),
            DiffTag::Delete => write_lines(out, '-', &old_lines[old_range]),
            DiffTag::Insert => write_lines(out, '+', &new_lines[new_range]),
            DiffTag::Replace => {
                write_lines(out, '-', &old_lines[old_range]);
                write_lines(out, '+', &new_lines[new_range]);
            }
        }
    }
}

fn write_lines(out: &mut String, mark: char, lines: &[&str]) {
    for line in lines {
        out.push(mark);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_no_diff() {
        assert_eq!(unified("a\nb\n", "a\nb\n", "x", "x"), "");
        assert_eq!(unified("", "", "x", "x"), "");
    }

    #[test]
    fn a_change_in_the_middle_has_three_lines_of_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n";
        let expected = "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n";
        assert_eq!(unified(old, new, "a", "b"), expected);
    }

    #[test]
    fn far_apart_changes_are_separate_hunks() {
        let old: String = (1..=20).map(|n| format!("{n}\n")).collect();
        let new = old
            .replacen("2\n", "two\n", 1)
            .replace("19\n", "nineteen\n");
        let diff = unified(&old, &new, "f", "f");
        assert_eq!(diff.matches("@@ -").count(), 2, "{diff}");
        assert!(
            diff.contains("@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n"),
            "{diff}"
        );
        assert!(diff.contains("@@ -16,5 +16,5 @@\n"), "{diff}");
    }

    #[test]
    fn created_and_removed_files_use_empty_ranges() {
        assert_eq!(
            unified("", "a\nb\n", "/dev/null", "f"),
            "--- /dev/null\n+++ f\n@@ -0,0 +1,2 @@\n+a\n+b\n"
        );
        assert_eq!(
            unified("a\n", "", "f", "/dev/null"),
            "--- f\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"
        );
    }

    #[test]
    fn a_last_line_without_newline_is_marked() {
        let diff = unified("a\nb", "a\nc", "f", "f");
        let expected = "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n";
        assert_eq!(diff, expected);
    }

    #[test]
    fn crlf_line_ends_are_shown_as_lf() {
        let diff = unified("a\r\nb\r\n", "a\r\nB\r\n", "f", "f");
        assert_eq!(diff, "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n");
    }

    /// The same output as `similar`'s `TextDiff`, which this replaced, on many random edits.
    #[test]
    fn matches_similar_text_diff_on_random_edits() {
        let mut seed = 0x2545_f491_u64;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let words = ["a\n", "b\n", "\n", "fn x() {\n", "}\n", "c\r\n", "end"];
        for _ in 0..2000 {
            let mut texts = [String::new(), String::new()];
            for text in &mut texts {
                for _ in 0..next(12) {
                    text.push_str(words[next(words.len() as u64) as usize]);
                }
            }
            let [old, new] = texts;
            let theirs = similar::TextDiff::from_lines(&old, &new)
                .unified_diff()
                .context_radius(3)
                .header("f", "f")
                .to_string()
                .replace("\r\n", "\n");
            assert_eq!(unified(&old, &new, "f", "f"), theirs, "{old:?} -> {new:?}");
        }
    }
}
