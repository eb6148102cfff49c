//! A tool's result as the interactive session previews it under its call: the first few
//! lines, each cut at a word and made safe to print, an `edit_file` diff's `+`/`-` lines told
//! apart from the rest.
//!
//! `terminal.rs`'s `Display` paints (a `Tone` is a colour there) and prints what `lines`
//! picks; nothing here writes, and `-p` previews nothing.

use crate::tools::support::text::{cut_at_word, printable};

/// How a preview line is shown (in this order: `terminal.rs` indexes its colours by it): a
/// diff's added and removed lines stand out, the rest is dim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    Added,
    Removed,
    Plain,
}

const PREVIEW_LINES: usize = 4;
const DIFF_PREVIEW_LINES: usize = 14;

/// The lines to show of `name`'s result `text`, each with its colour, and how many more
/// there were.
pub(crate) fn lines(name: &str, text: &str) -> (Vec<(Tone, String)>, usize) {
    let limit = match name {
        "edit_file" => DIFF_PREVIEW_LINES,
        _ => PREVIEW_LINES,
    };
    // What a tool read or the model wrote is shown, not obeyed (`printable`).
    let text = printable(text);
    let all: Vec<&str> = text.lines().collect();
    let shown = (all.iter().take(limit)).map(|line| {
        let line = cut_at_word(line, 120);
        (tone(name, &line), line)
    });
    (shown.collect(), all.len().saturating_sub(limit))
}

/// How `line` of `name`'s result or preview is shown: an edit's added and removed lines
/// stand out.
pub(crate) fn tone(name: &str, line: &str) -> Tone {
    match name == "edit_file" {
        true if line.starts_with('+') && !line.starts_with("+++") => Tone::Added,
        true if line.starts_with('-') && !line.starts_with("---") => Tone::Removed,
        _ => Tone::Plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_is_coloured_and_a_long_result_says_how_much_is_left() {
        let diff = "--- a/x\n+++ b/x\n-old\n+new\n ctx";
        let (shown, more) = lines("edit_file", diff);
        let tones: Vec<Tone> = shown.iter().map(|(tone, _)| *tone).collect();
        use Tone::{Added, Plain, Removed};
        assert_eq!(tones, [Plain, Plain, Removed, Added, Plain]);
        assert_eq!(more, 0);
        let (shown, more) = lines("read_file", "1\n2\n3\n4\n5\n6\x1b[2J");
        assert_eq!(shown.len(), 4);
        assert_eq!(more, 2);
        let (shown, _) = lines("bash", "a\rb");
        assert_eq!(shown[0].1, printable("a\rb"));
    }
}
