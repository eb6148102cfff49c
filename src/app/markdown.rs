//! The answer's Markdown drawn for a terminal as it streams: headings, bold and italic, inline
//! code, fenced code blocks set off with their language named, lists, quotes, links as
//! `text (url)`, and tables aligned by display width (a CJK character is two columns).
//!
//! `terminal.rs`'s `Display` feeds each text delta to `Markdown::feed` and prints what comes
//! back; `Markdown::finish` at the end of a reply (or before anything else is printed) draws
//! what is held. Only a stdout that is a terminal, with colour allowed, gets here: a pipe,
//! `NO_COLOR` and `--output-format json` print the model's bytes untouched.
//!
//! A line is drawn when its newline arrives; the unfinished tail is held, not printed raw and
//! redrawn: a raw line that wrapped on screen cannot be erased without knowing the terminal's
//! width and how it wrapped, and a marker split across deltas (`**bo` + `ld**`) would show
//! first raw, then styled. Codex holds lines the same way. A table is held whole until a line
//! that is not a row, because its columns are as wide as its widest cell. Every control
//! character the model sends is shown as `?` (`printable`), so the only escapes on screen are
//! the styles drawn here. Nothing here writes; it has no highlighter and never wraps lines.

use crate::tools::support::text::printable;

const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const ITALIC: &str = "\x1b[3m";
const UNDERLINE: &str = "\x1b[4m";
const STRIKE: &str = "\x1b[9m";
const CODE: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// The renderer's state between deltas: the unfinished line, an open code fence, table rows.
#[derive(Default)]
pub struct Markdown {
    tail: String,
    fence: Option<Fence>,
    table: Vec<String>,
}

/// An open fenced code block: what closes it (as many backticks or tildes as opened it, or
/// more) and how far its opening line was indented (its code lines lose as much).
#[derive(Clone, Copy)]
struct Fence {
    mark: char,
    run: usize,
    indent: usize,
}

impl Markdown {
    /// Take one delta; returns the lines it completed, drawn (often nothing).
    pub fn feed(&mut self, delta: &str) -> String {
        self.tail.push_str(delta);
        let Some(last) = self.tail.rfind('\n') else {
            return String::new();
        };
        let complete: String = self.tail.drain(..=last).collect();
        (complete.lines()).map(|line| self.line(line)).collect()
    }

    /// The reply ended: draw the held line and table, close an open fence, start afresh.
    pub fn finish(&mut self) -> String {
        let tail = std::mem::take(&mut self.tail);
        let mut out = match tail.is_empty() {
            true => String::new(),
            false => self.line(&tail),
        };
        out.push_str(&self.end_table());
        if self.fence.take().is_some() {
            out.push_str(&format!("{DIM}╰─{RESET}\n"));
        }
        out
    }

    /// One whole line (without its newline), drawn with its newline; a table row is held.
    fn line(&mut self, raw: &str) -> String {
        let line = printable(raw.strip_suffix('\r').unwrap_or(raw));
        if let Some(fence) = self.fence {
            return self.code_line(&line, fence);
        }
        if line.trim_start().starts_with('|') {
            self.table.push(line);
            return String::new();
        }
        let mut out = self.end_table();
        match fence_opening(&line) {
            Some((fence, language)) => {
                out.push_str(&format!("{DIM}╭─ {language}{RESET}\n"));
                self.fence = Some(fence);
            }
            None => out.push_str(&format!("{}\n", prose(&line))),
        }
        out
    }

    /// A line inside a fence: the code as it is behind a bar, or the fence's end.
    fn code_line(&mut self, line: &str, fence: Fence) -> String {
        let closer = line.trim();
        if closer.len() >= fence.run && closer.chars().all(|c| c == fence.mark) {
            self.fence = None;
            return format!("{DIM}╰─{RESET}\n");
        }
        let spaces = line.len() - line.trim_start_matches(' ').len();
        format!("{DIM}│{RESET} {}\n", &line[spaces.min(fence.indent)..])
    }

    /// The held table, aligned; rows that turn out not to be a table are drawn as prose.
    fn end_table(&mut self) -> String {
        let rows: Vec<Vec<String>> = self.table.iter().map(|row| cells(row)).collect();
        let lines = std::mem::take(&mut self.table);
        match rows.get(1).and_then(|second| alignments(second)) {
            Some(aligns) => table(&rows, &aligns),
            None => lines
                .iter()
                .map(|line| format!("{}\n", prose(line)))
                .collect(),
        }
    }
}

/// A line opening a code fence: three or more backticks or tildes, then the language.
fn fence_opening(line: &str) -> Option<(Fence, String)> {
    let text = line.trim_start();
    let c = text.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = text.len() - text.trim_start_matches(c).len();
    let info = text[run..].trim();
    // "```x```" on one line is inline code, not a fence.
    if run < 3 || (c == '`' && info.contains('`')) {
        return None;
    }
    let language = info.split_whitespace().next().unwrap_or("").to_string();
    let indent = line.len() - text.len();
    let fence = Fence {
        mark: c,
        run,
        indent,
    };
    Some((fence, language))
}

/// A line outside code and tables: heading, rule, quote, list item or paragraph.
fn prose(line: &str) -> String {
    let text = line.trim_start();
    let indent = &line[..line.len() - text.len()];
    let hashes = text.len() - text.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) && text[hashes..].starts_with(' ') {
        let style = match hashes {
            1 => format!("{BOLD}{UNDERLINE}"),
            2 => BOLD.to_string(),
            _ => format!("{BOLD}{ITALIC}"),
        };
        return paint(&style, &inline(text[hashes..].trim(), &style), "");
    }
    if is_rule(text) {
        return format!("{DIM}{}{RESET}", "─".repeat(40));
    }
    if let Some(quoted) = text.strip_prefix('>') {
        let quoted = quoted.strip_prefix(' ').unwrap_or(quoted);
        return format!("{indent}{DIM}│{RESET} {}", prose(quoted));
    }
    if let Some((marker, rest)) = list_item(text) {
        return format!("{indent}{DIM}{marker}{RESET} {}", inline(rest, ""));
    }
    format!("{indent}{}", inline(text, ""))
}

/// `---`, `***` or `___` (three or more, spaces between allowed).
fn is_rule(text: &str) -> bool {
    let marks: String = text.chars().filter(|c| *c != ' ').collect();
    let first = marks.chars().next().unwrap_or(' ');
    marks.len() >= 3 && "-*_".contains(first) && marks.chars().all(|c| c == first)
}

/// A bullet (`-`, `*`, `+`) as `•`, or a number (`1.`, `2)`) as it is; then the item's text.
fn list_item(text: &str) -> Option<(&str, &str)> {
    if let Some(rest) = ["- ", "* ", "+ "].iter().find_map(|b| text.strip_prefix(b)) {
        return Some(("•", rest));
    }
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let after = &text[digits..];
    let numbered =
        (1..=9).contains(&digits) && (after.starts_with(". ") || after.starts_with(") "));
    numbered.then(|| (&text[..digits + 1], &text[digits + 2..]))
}

/// Inline Markdown as styled text: code spans, emphasis, strikethrough, links, `\` escapes.
/// `outer` is the style around `text`, put back after each span (a plain reset would end a
/// heading's bold at its first `code`). A marker found to have no closer is remembered, so a
/// long line of unclosed markers costs one scan per kind, not one per marker.
fn inline(text: &str, outer: &str) -> String {
    let mut out = String::new();
    let mut unclosed: Vec<String> = Vec::new();
    let mut at = 0;
    while let Some(c) = text[at..].chars().next() {
        if let Some((shown, end)) = span(text, at, outer, &mut unclosed) {
            out.push_str(&shown);
            at = end;
            continue;
        }
        let next = text[at + c.len_utf8()..].chars().next();
        let escaped = next.filter(|n| c == '\\' && n.is_ascii_punctuation());
        out.push(escaped.unwrap_or(c));
        at += c.len_utf8() + escaped.map_or(0, char::len_utf8);
    }
    out
}

/// The span starting at byte `at` of `text`, drawn, and where it ends; a marker that opens
/// nothing comes back as itself. `None` where no marker starts.
fn span(text: &str, at: usize, outer: &str, unclosed: &mut Vec<String>) -> Option<(String, usize)> {
    let rest = &text[at..];
    if rest.starts_with('[') || rest.starts_with("![") {
        return link(rest, outer, unclosed).map(|(shown, used)| (shown, at + used));
    }
    let marker = marker_at(rest)?;
    let literal = Some((marker.to_string(), at + marker.len()));
    let code = marker.starts_with('`');
    let before = text[..at].chars().next_back();
    if unclosed.iter().any(|m| m == marker) || (!code && !opens(rest, marker, before)) {
        return literal;
    }
    let Some(close) = closer(rest, marker) else {
        unclosed.push(marker.to_string());
        return literal;
    };
    let inner = &rest[marker.len()..close];
    let end = at + close + marker.len();
    if code {
        let inner = match inner.starts_with(' ') && inner.ends_with(' ') && !inner.trim().is_empty()
        {
            true => &inner[1..inner.len() - 1],
            false => inner,
        };
        return Some((paint(CODE, inner, outer), end));
    }
    let style = match marker.len() {
        _ if marker == "~~" => STRIKE.to_string(),
        1 => ITALIC.to_string(),
        2 => BOLD.to_string(),
        _ => format!("{BOLD}{ITALIC}"),
    };
    let inner = inline(inner, &format!("{outer}{style}"));
    Some((paint(&style, &inner, outer), end))
}

/// The marker `rest` starts with: a run of backticks, `*` or `_` (up to three), or `~~`.
fn marker_at(rest: &str) -> Option<&str> {
    let c = rest.chars().next().filter(|c| "`*_~".contains(*c))?;
    let run = rest.len() - rest.trim_start_matches(c).len();
    match c {
        '`' => Some(&rest[..run]),
        '~' if run == 2 => Some("~~"),
        '*' | '_' if run <= 3 => Some(&rest[..run]),
        _ => None,
    }
}

/// An emphasis marker opens when text follows it; `_` also not inside a word (`snake_case`).
fn opens(rest: &str, marker: &str, before: Option<char>) -> bool {
    let after = rest[marker.len()..].chars().next();
    let in_word = marker.starts_with('_') && before.is_some_and(char::is_alphanumeric);
    after.is_some_and(|c| !c.is_whitespace()) && !in_word
}

/// Where in `rest` the marker it opens with is closed: the same run, not part of a longer one,
/// after text; for emphasis, not inside a code span (an even count of backticks before it).
fn closer(rest: &str, marker: &str) -> Option<usize> {
    let c = marker.chars().next()?;
    let body = &rest[marker.len()..];
    let mut ticks = 0;
    let mut counted = 0;
    for (found, _) in body.match_indices(marker) {
        ticks += body[counted..found].matches('`').count();
        counted = found;
        let before = body[..found].chars().next_back();
        let after = body[found + marker.len()..].chars().next();
        let whole_run = before.is_some_and(|b| b != c) && after != Some(c);
        let closes = whole_run && !(c == '_' && after.is_some_and(char::is_alphanumeric));
        let after_text = before.is_some_and(|b| c == '`' || !b.is_whitespace());
        if closes && after_text && (c == '`' || ticks % 2 == 0) {
            return Some(found + marker.len());
        }
    }
    None
}

/// `[text](url)` as `text (url)` (only the url when they are the same); `![alt](url)` too.
/// The text ends at the first `]`: a `[` before it means this `[` is plain text.
fn link(rest: &str, outer: &str, unclosed: &mut Vec<String>) -> Option<(String, usize)> {
    let start = if rest.starts_with('!') { 2 } else { 1 };
    let close = start + rest[start..].find(['[', ']'])?;
    if !rest[close..].starts_with("](") || unclosed.iter().any(|m| m == ")") {
        return None;
    }
    let Some(url_len) = rest[close + 2..].find(')') else {
        unclosed.push(")".to_string());
        return None;
    };
    let (label, url) = (&rest[start..close], &rest[close + 2..close + 2 + url_len]);
    let shown_label = paint(
        UNDERLINE,
        &inline(label, &format!("{outer}{UNDERLINE}")),
        outer,
    );
    let shown = match (label == url, url.is_empty()) {
        (true, _) => paint(UNDERLINE, url, outer),
        (false, true) => shown_label,
        (false, false) => format!("{shown_label} {}", paint(DIM, &format!("({url})"), outer)),
    };
    Some((shown, close + 3 + url_len))
}

/// `text` in `style`, then back to `outer`.
fn paint(style: &str, text: &str, outer: &str) -> String {
    format!("{style}{text}{RESET}{outer}")
}

/// A row's cells: split at each `|` that is not escaped or inside a code span.
fn cells(row: &str) -> Vec<String> {
    let row = row.trim();
    let (mut cells, mut cell) = (Vec::new(), String::new());
    let (mut in_code, mut escaped) = (false, false);
    for c in row.chars() {
        match c {
            '|' if !in_code && !escaped => cells.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
        in_code ^= c == '`';
        escaped = c == '\\' && !escaped;
    }
    cells.push(cell);
    // The outer pipes make an empty first and last cell.
    if row.starts_with('|') {
        cells.remove(0);
    }
    if row.ends_with('|') && cells.len() > 1 && cells.last().is_some_and(|c| c.is_empty()) {
        cells.pop();
    }
    (cells.iter())
        .map(|c| c.trim().replace("\\|", "|").replace('\t', " "))
        .collect()
}

/// How a column is aligned, from the row under the header (`:--`, `:-:`, `--:`).
#[derive(Clone, Copy, PartialEq)]
enum Align {
    Left,
    Center,
    Right,
}

/// The alignments the delimiter row sets, or `None` if `cells` is not a delimiter row.
fn alignments(cells: &[String]) -> Option<Vec<Align>> {
    let align = |cell: &String| {
        let dashes = cell.trim_start_matches(':').trim_end_matches(':');
        let valid = !dashes.is_empty() && dashes.chars().all(|c| c == '-');
        valid.then(|| match (cell.starts_with(':'), cell.ends_with(':')) {
            (true, true) => Align::Center,
            (false, true) => Align::Right,
            _ => Align::Left,
        })
    };
    cells.iter().map(align).collect()
}

/// The rows (header, delimiter, body) with columns as wide as their widest cell; a ragged row
/// gets empty cells.
fn table(rows: &[Vec<String>], aligns: &[Align]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let drawn: Vec<Vec<String>> = (rows.iter().enumerate().filter(|(i, _)| *i != 1))
        .map(|(i, row)| {
            let style = if i == 0 { BOLD } else { "" };
            let cell = |c: usize| row.get(c).map_or("", String::as_str);
            (0..columns)
                .map(|c| paint(style, &inline(cell(c), style), ""))
                .collect()
        })
        .collect();
    let widths: Vec<usize> = (0..columns)
        .map(|c| drawn.iter().map(|row| width(&row[c])).max().unwrap_or(0))
        .collect();
    let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    let mut out = String::new();
    for (i, row) in drawn.iter().enumerate() {
        let padded = (row.iter().enumerate()).map(|(c, cell)| {
            let align = aligns.get(c).copied().unwrap_or(Align::Left);
            pad(cell, widths[c], align)
        });
        out.push_str(&padded.collect::<Vec<_>>().join(&format!(" {DIM}│{RESET} ")));
        out.push('\n');
        if i == 0 {
            out.push_str(&format!("{DIM}{}{RESET}\n", rule.join("─┼─")));
        }
    }
    out
}

/// `cell` padded with spaces to `wide` columns.
fn pad(cell: &str, wide: usize, align: Align) -> String {
    let gap = wide.saturating_sub(width(cell));
    let (left, right) = match align {
        Align::Left => (0, gap),
        Align::Center => (gap / 2, gap - gap / 2),
        Align::Right => (gap, 0),
    };
    format!("{}{cell}{}", " ".repeat(left), " ".repeat(right))
}

/// Columns `text` takes on a terminal; the escape sequences drawn here take none.
pub fn width(text: &str) -> usize {
    let mut chars = text.chars();
    let mut columns = 0;
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            chars.by_ref().find(|c| c.is_ascii_alphabetic());
            continue;
        }
        columns += char_width(c);
    }
    columns
}

/// East Asian wide and full-width characters (and the common emoji) take two columns;
/// combining marks, zero-width spaces, variation selectors and controls none.
fn char_width(c: char) -> usize {
    match c as u32 {
        0x0300..=0x036F | 0x200B..=0x200F | 0xFE00..=0xFE0F => 0,
        0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF => 2,
        0x4E00..=0x9FFF | 0xA000..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF => 2,
        0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 => 2,
        0x1F300..=0x1F64F | 0x1F900..=0x1F9FF | 0x20000..=0x3FFFD => 2,
        _ if c.is_control() => 0,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every delta fed, then the reply's end.
    fn render(deltas: &[&str]) -> String {
        let mut markdown = Markdown::default();
        let mut out: String = deltas.iter().map(|d| markdown.feed(d)).collect();
        out.push_str(&markdown.finish());
        out
    }

    /// What a person reads: the output without its escape sequences.
    fn visible(drawn: &str) -> String {
        let mut chars = drawn.chars();
        let mut out = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\x1b' => _ = chars.by_ref().find(|c| c.is_ascii_alphabetic()),
                _ => out.push(c),
            }
        }
        out
    }

    #[test]
    fn a_marker_split_across_deltas_is_drawn_once_whole() {
        let mut markdown = Markdown::default();
        assert_eq!(markdown.feed("a **bo"), "", "a line is held until it ends");
        assert_eq!(markdown.feed("ld** b\n"), format!("a {BOLD}bold{RESET} b\n"));
        assert_eq!(markdown.finish(), "");
    }

    #[test]
    fn headings_emphasis_and_code_are_styled_and_nest() {
        let out = render(&["# Title with `code`\n", "*it* and ***both*** and ~~gone~~\n"]);
        let title = format!("{BOLD}{UNDERLINE}Title with {CODE}code{RESET}{BOLD}{UNDERLINE}");
        assert!(out.starts_with(&title), "{out:?}");
        assert!(out.contains(&format!("{ITALIC}it{RESET}")), "{out:?}");
        assert!(out.contains(&format!("{BOLD}{ITALIC}both{RESET}")), "{out:?}");
        assert!(out.contains(&format!("{STRIKE}gone{RESET}")), "{out:?}");
        assert_eq!(visible(&out), "Title with code\nit and both and gone\n");
    }

    #[test]
    fn stars_and_underscores_inside_code_stay_as_they_are() {
        let out = render(&["*nix has `a*b` and `__init__` but snake_case_words stay\n"]);
        assert!(out.contains(&format!("{CODE}a*b{RESET}")), "{out:?}");
        assert!(out.contains(&format!("{CODE}__init__{RESET}")), "{out:?}");
        assert!(!out.contains(ITALIC) && !out.contains(BOLD), "{out:?}");
        let visible = visible(&out);
        assert_eq!(visible, "*nix has a*b and __init__ but snake_case_words stay\n");
        let fenced = render(&["```py\n", "x = a*b*c  # _private_ **kw\n", "```\n"]);
        assert_eq!(
            fenced,
            format!(
                "{DIM}╭─ py{RESET}\n{DIM}│{RESET} x = a*b*c  # _private_ **kw\n{DIM}╰─{RESET}\n"
            )
        );
    }

    #[test]
    fn an_unclosed_fence_is_closed_at_the_end_and_holds_no_markdown() {
        let out = render(&["text\n```rust\nlet s = \"# not a heading\";\n- not a list"]);
        let shown = visible(&out);
        assert_eq!(
            shown,
            "text\n╭─ rust\n│ let s = \"# not a heading\";\n│ - not a list\n╰─\n"
        );
        // The next reply starts outside any fence.
        let mut markdown = Markdown::default();
        markdown.feed("~~~~\ncode\n```\nstill code\n");
        markdown.finish();
        assert_eq!(visible(&markdown.feed("**b**\n")), "b\n");
    }

    #[test]
    fn a_fence_indented_in_a_list_takes_its_indent_off_the_code() {
        let out = visible(&render(&["1. step\n   ```sh\n   make test\n   ```\n"]));
        assert_eq!(out, "1. step\n╭─ sh\n│ make test\n╰─\n");
        assert_eq!(visible(&render(&["```a``` is code\n"])), "a is code\n", "not a fence");
    }

    #[test]
    fn lists_quotes_rules_and_links() {
        let out = visible(&render(&[
            "- one\n  * two\n3. three\n> quoted **x**\n> > deeper\n---\n",
            "see [the docs](https://x.dev/a_b) or [https://y.dev](https://y.dev)\n",
            "![logo](l.png) [not a link] [empty]()\n",
        ]));
        let rule = "─".repeat(40);
        let expected = format!(
            "• one\n  • two\n3. three\n│ quoted x\n│ │ deeper\n{rule}\nsee the docs \
             (https://x.dev/a_b) or https://y.dev\nlogo (l.png) [not a link] empty\n"
        );
        assert_eq!(out, expected);
    }

    #[test]
    fn a_line_without_its_newline_is_drawn_at_the_end() {
        let mut markdown = Markdown::default();
        assert_eq!(markdown.feed("last **words**"), "");
        assert_eq!(markdown.finish(), format!("last {BOLD}words{RESET}\n"));
        assert_eq!(markdown.finish(), "", "nothing is drawn twice");
    }

    #[test]
    fn control_characters_from_the_model_cannot_reach_the_terminal() {
        let out = render(&["a\x1b]52;c;aGk=\x07b \x1b[2Jc\r\n"]);
        assert_eq!(out, "a?]52;c;aGk=?b ?[2Jc\n");
    }

    #[test]
    fn widths_count_cjk_and_full_width_as_two_and_escapes_as_none() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("漢字かな한글"), 12);
        assert_eq!(width("ＡＢ"), 4, "full-width Latin");
        assert_eq!(width("ｱｲ"), 2, "half-width katakana");
        assert_eq!(width("e\u{301}"), 1, "a combining accent takes no column");
        assert_eq!(width(&format!("{BOLD}中{RESET}")), 2);
    }

    #[test]
    fn a_ragged_table_with_cjk_cells_is_aligned_when_it_ends() {
        let mut markdown = Markdown::default();
        let held = markdown.feed("| name | n |\n|:--|--:|\n| 漢字 | 1 |\n| a `|` b |\n");
        assert_eq!(held, "", "rows are held until the table ends");
        let out = visible(&(markdown.feed("after\n") + &markdown.finish()));
        let expected = "name  │ n\n──────┼──\n漢字  │ 1\na | b │  \nafter\n";
        assert_eq!(out, expected);
        let widths: Vec<usize> = out.lines().take(4).map(width).collect();
        assert_eq!(widths, [9, 9, 9, 9], "{out}");
    }

    #[test]
    fn a_table_at_the_end_of_the_reply_is_drawn_by_finish() {
        let out = visible(&render(&["| a | b |\n| - | :-: |\n| long cell | xyz |"]));
        assert_eq!(out, "a         │  b \n──────────┼────\nlong cell │ xyz\n");
    }

    #[test]
    fn pipes_that_are_not_a_table_are_prose() {
        let out = visible(&render(&["| just a line with *it*\n| and another\n"]));
        assert_eq!(out, "| just a line with it\n| and another\n");
    }

    #[test]
    fn very_long_lines_of_unclosed_markers_keep_every_character() {
        let line = "`".to_string() + &"*a _b [d](e ~~f **g ".repeat(50_000);
        let out = render(&[&line, "\n"]);
        assert!(out == format!("{line}\n"), "nothing closes, so nothing is styled");
        let brackets = "[".repeat(200_000) + "](" + &"(".repeat(200_000);
        assert!(render(&[&brackets]) == format!("{brackets}\n"));
        let long_bold = format!("**{}**\n", "word ".repeat(100_000).trim_end());
        assert_eq!(visible(&render(&[&long_bold])).len(), long_bold.len() - 4);
    }
}
