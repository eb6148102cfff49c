//! Text a person says yes to, as it is shown: never cut or hidden without saying so. Its lines
//! are made printable (`text::printable` escapes control and bidi characters), a run of blanks
//! long enough to push what follows off the screen is shown as a count (`⟨70000 spaces⟩`), as
//! is a long run of blank lines. The short view (`short`) is the first lines, each cut with
//! the count of what was cut, and knows whether it is all of it; the full view (`full`) is
//! every line, wrapped rather than cut.
//!
//! The consent question (`app/repl_consent.rs`) and the trust question (`extras/trust.rs`)
//! show text through here. Pure functions: nothing here reads, writes or decides.

use super::text::printable;

/// Width a line of the short view is cut at (the rest is counted on the line).
pub(crate) const SHORT_WIDTH: usize = 120;
/// Width the full view wraps at when the terminal's is not known.
pub(crate) const FALLBACK_WIDTH: usize = 100;
/// A longer run of blanks is shown as its length: it could push the rest of a line off screen.
const BLANK_RUN: usize = 32;
/// A longer run of blank lines is shown as its length: it could push the rest off screen.
const BLANK_LINES: usize = 3;

/// The first lines of a text, and how much of it they are.
#[derive(Debug, PartialEq)]
pub(crate) struct Short {
    pub(crate) lines: Vec<String>,
    /// Lines of the whole text, as shown (a run of blank lines counts as one).
    pub(crate) total: usize,
    /// How many of the lines shown were cut at `SHORT_WIDTH`.
    pub(crate) cut: usize,
}

impl Short {
    /// What the short view leaves out, for the question line; `None` when it is all of it.
    pub(crate) fn part(&self) -> Option<String> {
        let (shown, total) = (self.lines.len(), self.total);
        match (shown < total, self.cut) {
            (false, 0) => None,
            (true, 0) => Some(format!("showing {shown} of {total} lines")),
            (true, cut) => Some(format!("showing {shown} of {total} lines, {cut} cut short")),
            (false, cut) => Some(format!("{cut} of {shown} lines cut short")),
        }
    }
}

/// The first `max_lines` lines of `text` as shown, each cut at `SHORT_WIDTH` with a count.
pub(crate) fn short(text: &str, max_lines: usize) -> Short {
    let all = lines(text);
    let total = all.len();
    let mut cut = 0;
    let lines = (all.into_iter().take(max_lines))
        .map(|line| match line.char_indices().nth(SHORT_WIDTH) {
            None => line,
            Some((at, _)) => {
                cut += 1;
                let lost = line[at..].chars().count();
                format!("{}…⟨{lost} more characters⟩", &line[..at])
            }
        })
        .collect();
    Short { lines, total, cut }
}

/// Every line of `text` as shown, a line wider than `width` wrapped over several, each part
/// after the first marked `↪ `.
pub(crate) fn full(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for line in lines(text) {
        wrap(&line, width.max(20), &mut out);
    }
    out
}

/// `line` in parts of at most `width` characters, broken after a space in a part's second
/// half when there is one (so a word is not split), else at `width`.
fn wrap(line: &str, width: usize, out: &mut Vec<String>) {
    let mut rest = line;
    let mut marker = "";
    loop {
        let room = width - marker.chars().count();
        let Some((end, _)) = rest.char_indices().nth(room) else {
            return out.push(format!("{marker}{rest}"));
        };
        let head = &rest[..end];
        let at = match head.rfind(' ') {
            Some(space) if space >= end / 2 => space + 1,
            _ => end,
        };
        out.push(format!("{marker}{}", &rest[..at]));
        rest = &rest[at..];
        marker = "↪ ";
    }
}

/// The lines of `text` as shown: printable, long runs of blanks and of blank lines counted.
pub(crate) fn lines(text: &str) -> Vec<String> {
    let clean = printable(text);
    let mut out = Vec::new();
    let mut blank: Vec<&str> = Vec::new();
    for line in clean.lines() {
        if line.trim().is_empty() {
            blank.push(line);
            continue;
        }
        flush_blank_lines(&mut blank, &mut out);
        out.push(squeeze_blanks(line));
    }
    flush_blank_lines(&mut blank, &mut out);
    out
}

fn flush_blank_lines(blank: &mut Vec<&str>, out: &mut Vec<String>) {
    match blank.len() > BLANK_LINES {
        true => out.push(format!("⟨{} blank lines⟩", blank.len())),
        false => out.extend(blank.iter().map(|line| squeeze_blanks(line))),
    }
    blank.clear();
}

/// `line` with each run of more than `BLANK_RUN` blanks shown as `⟨N spaces⟩` (`blanks` when
/// tabs or other spaces are among them).
fn squeeze_blanks(line: &str) -> String {
    let mut out = String::with_capacity(line.len().min(1 << 16));
    let mut run = String::new();
    for c in line.chars() {
        if c.is_whitespace() {
            run.push(c);
            continue;
        }
        flush_blanks(&mut run, &mut out);
        out.push(c);
    }
    flush_blanks(&mut run, &mut out);
    out
}

fn flush_blanks(run: &mut String, out: &mut String) {
    let count = run.chars().count();
    match count > BLANK_RUN {
        true if run.bytes().all(|b| b == b' ') => out.push_str(&format!("⟨{count} spaces⟩")),
        true => out.push_str(&format!("⟨{count} blanks⟩")),
        false => out.push_str(run),
    }
    run.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_view_says_what_it_leaves_out() {
        let whole = short("a\nb", 4);
        assert_eq!(
            (whole.lines.clone(), whole.part()),
            (vec!["a".into(), "b".into()], None)
        );
        let text = (1..=37)
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(short(&text, 8).part().unwrap(), "showing 8 of 37 lines");
        let wide = format!("{}tail", "x".repeat(SHORT_WIDTH));
        let view = short(&wide, 4);
        assert_eq!(view.part().unwrap(), "1 of 1 lines cut short");
        assert!(view.lines[0].ends_with("x…⟨4 more characters⟩"), "{view:?}");
        let both = format!("{wide}\n2\n3");
        assert_eq!(
            short(&both, 2).part().unwrap(),
            "showing 2 of 3 lines, 1 cut short"
        );
    }

    #[test]
    fn long_runs_of_blanks_are_counted_not_drawn() {
        let hook = format!("[{}{{\"command\": \"touch x\"}}]", " ".repeat(70_000));
        assert_eq!(lines(&hook), ["[⟨70000 spaces⟩{\"command\": \"touch x\"}]"]);
        assert_eq!(lines(&format!("a{}b", "\t ".repeat(20))), ["a⟨40 blanks⟩b"]);
        let indented = format!("{}code", " ".repeat(BLANK_RUN));
        assert_eq!(lines(&indented), [indented.as_str()]);
        let far = format!("top{}bottom", "\n".repeat(500));
        assert_eq!(lines(&far), ["top", "⟨499 blank lines⟩", "bottom"]);
        assert_eq!(lines("a\n\n\nb"), ["a", "", "", "b"]);
        assert!(
            short(&hook, 1).part().is_none(),
            "counted, all of it is shown"
        );
    }

    #[test]
    fn the_full_view_wraps_and_escapes() {
        let line = format!("{}write-tail", "x ".repeat(145));
        let wrapped = full(&line, 80);
        assert!(
            wrapped.iter().all(|part| part.chars().count() <= 80),
            "{wrapped:?}"
        );
        assert!(wrapped[1..].iter().all(|part| part.starts_with("↪ ")));
        assert!(
            wrapped.last().unwrap().ends_with(" x write-tail"),
            "{wrapped:?}"
        );
        let joined: String = wrapped.iter().map(|p| p.trim_start_matches("↪ ")).collect();
        assert_eq!(joined, line);
        let unbroken = "y".repeat(50);
        assert_eq!(
            full(&unbroken, 20),
            [
                "y".repeat(20),
                format!("↪ {}", "y".repeat(18)),
                format!("↪ {}", "y".repeat(12))
            ]
        );
        assert_eq!(full("a\u{202e}b\r\x1b[2K", 80), [r"a\u{202e}b??[2K"]);
    }
}
