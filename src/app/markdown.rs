//! The answer's Markdown drawn for a terminal as it streams: headings, bold and italic, inline
//! code, fenced code blocks set off with their language named, lists, quotes, links as
//! `text (url)`, tables aligned by display width (a CJK character takes two columns).
//!
//! `terminal.rs`'s `Display` feeds it each text delta when stdout is a terminal and colour is
//! allowed (a pipe and `--output-format json` get the model's bytes untouched, `NO_COLOR` on a
//! terminal its text with control characters as `?`), and prints what `Markdown::feed` returns; `Markdown::finish` draws what is held when the reply
//! ends or anything else is printed. A line is drawn when its newline arrives; the unfinished
//! tail is held, not printed raw and redrawn: a line that wrapped cannot be erased without the
//! terminal's width, and `**bo` + `ld**` would flash raw first. (Codex holds lines too.) A
//! table is held until a line that is not a row: its columns are as wide as its widest cell.
//! The model's control characters show as `?`, so the only escapes are the styles drawn here.
//! Nothing here writes; there is no highlighter and no wrapping. Over 300 lines (about 380)
//! on purpose: issue 22 asks for the renderer in one file, and its block, inline and table
//! passes share the styles and `inline`.

use crate::tools::support::text::printable;

// The terminal's styles, here and for the rest of `app/` (`Display::paint`).
pub(crate) const BOLD: &str = "\x1b[1m";
pub(crate) const DIM: &str = "\x1b[2m";
const ITALIC: &str = "\x1b[3m";
const UNDERLINE: &str = "\x1b[4m";
/// A level-1 heading: bold and underlined.
const TITLE: &str = "\x1b[1;4m";
pub(crate) const RED: &str = "\x1b[31m";
pub(crate) const GREEN: &str = "\x1b[32m";
pub(crate) const YELLOW: &str = "\x1b[33m";
/// Tool calls, and code spans.
pub(crate) const CYAN: &str = "\x1b[36m";
pub(crate) const RESET: &str = "\x1b[0m";

/// Most cells a table is drawn with: one row of 50,000 pipes would otherwise pad every other
/// row to 50,000 cells.
const MAX_CELLS: usize = 100_000;

/// Most spans drawn inside one another (a heading's style counts as one).
const MAX_NESTING: usize = 8;

/// The renderer's state between deltas: the unfinished line, an open code fence, table rows.
#[derive(Default)]
pub(crate) struct Markdown {
    tail: String,
    fence: Option<Fence>,
    table: Vec<String>,
}

/// An open code fence: closed by a line of `run` or more `mark`s (backticks or tildes); its
/// code lines lose the opening line's indent.
#[derive(Clone, Copy)]
struct Fence {
    mark: char,
    run: usize,
    indent: usize,
}

impl Markdown {
    /// Take one delta; returns the lines it completed, drawn (often nothing).
    pub(crate) fn feed(&mut self, delta: &str) -> String {
        let start = self.tail.len();
        self.tail.push_str(delta);
        // Only the delta is searched: a long line in small deltas is not scanned at each one.
        let Some(last) = delta.rfind('\n') else {
            return String::new();
        };
        let complete: String = self.tail.drain(..=start + last).collect();
        (complete.lines()).map(|line| self.line(line)).collect()
    }

    /// The reply ended: draw the held line and table, close an open fence, start afresh.
    pub fn finish(&mut self) -> String {
        // A last line without its newline is drawn as if it had one.
        let mut out = self.feed(if self.tail.is_empty() { "" } else { "\n" });
        out += &self.end_table();
        if self.fence.take().is_some() {
            out += &format!("{DIM}╰─{RESET}\n");
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
        let out = self.end_table();
        let Some((fence, language)) = fence_opening(&line) else {
            return out + &prose(&line) + "\n";
        };
        self.fence = Some(fence);
        out + &format!("{DIM}╭─ {language}{RESET}\n")
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

    /// The held table, aligned; rows without a delimiter row under the first, or with more
    /// than `MAX_CELLS` once ragged rows are padded, are prose.
    fn end_table(&mut self) -> String {
        let lines = std::mem::take(&mut self.table);
        let rows: Vec<Vec<String>> = lines.iter().map(|row| cells(row)).collect();
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        let fits = columns.saturating_mul(rows.len()) <= MAX_CELLS;
        match fits && rows.get(1).is_some_and(|second| is_delimiter_row(second)) {
            true => table(&rows, columns),
            false => lines.iter().map(|line| prose(line) + "\n").collect(),
        }
    }
}

/// A line opening a code fence: three or more backticks or tildes, then the language.
fn fence_opening(line: &str) -> Option<(Fence, String)> {
    let text = line.trim_start();
    let mark = text.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = text.len() - text.trim_start_matches(mark).len();
    let info = text[run..].trim();
    // "```x```" on one line is inline code, not a fence.
    if run < 3 || (mark == '`' && info.contains('`')) {
        return None;
    }
    let language = info.split_whitespace().next().unwrap_or("").to_string();
    let indent = line.len() - text.len();
    Some((Fence { mark, run, indent }, language))
}

/// A line outside code and tables: heading, quote, list item or paragraph (a rule, `---`,
/// reads well as it is).
fn prose(line: &str) -> String {
    let text = line.trim_start();
    let indent = &line[..line.len() - text.len()];
    let hashes = text.len() - text.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) && text[hashes..].starts_with(' ') {
        let style = if hashes == 1 { TITLE } else { BOLD };
        return paint(style, &inline(text[hashes..].trim(), style), "");
    }
    // A loop, not a call per `>`: a line of 100,000 `>` must not overflow the stack.
    let (mut quoted, mut bars) = (text, String::new());
    while let Some(rest) = quoted.strip_prefix('>') {
        (quoted, bars) = (rest.trim_start(), bars + DIM + "│" + RESET + " ");
    }
    if !bars.is_empty() {
        return format!("{indent}{bars}{}", prose(quoted));
    }
    match list_item(text) {
        Some((marker, rest)) => format!("{indent}{DIM}{marker}{RESET} {}", inline(rest, "")),
        None => format!("{indent}{}", inline(text, "")),
    }
}

/// A bullet (`-`, `*`, `+`) as `•`, or a number (`1.`, `2)`) as it is; then the item's text.
fn list_item(text: &str) -> Option<(&str, &str)> {
    if let Some(rest) = ["- ", "* ", "+ "].iter().find_map(|b| text.strip_prefix(b)) {
        return Some(("•", rest));
    }
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let after = &text[digits..];
    let numbered = digits > 0 && (after.starts_with(". ") || after.starts_with(") "));
    numbered.then(|| (&text[..digits + 1], &text[digits + 2..]))
}

/// Inline Markdown as styled text: code spans, emphasis, links, `\` escapes. `outer` is the
/// style around `text`, put back after each span (a reset would end a heading's bold at its
/// first `code`). A marker found to have no closer is remembered, so a long line of unclosed
/// markers costs a scan per kind of marker, not one per marker.
fn inline(text: &str, outer: &str) -> String {
    // `outer` holds an escape per span around this one: past `MAX_NESTING`, markers are
    // text, so no crafted line nests deep enough to overflow the stack.
    if outer.matches('\x1b').count() > MAX_NESTING {
        return text.to_string();
    }
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
    if rest.starts_with('[') {
        return link(rest, outer, unclosed).map(|(shown, used)| (shown, at + used));
    }
    let marker = marker_at(rest)?;
    let literal = Some((marker.to_string(), at + marker.len()));
    let code = marker.starts_with('`');
    let before = text[..at].chars().next_back();
    // Emphasis is 1 to 3 marks. Code runs past 16 backticks are text: a line holding runs of
    // every length would otherwise be searched to its end once per length.
    let too_long = marker.len() > if code { 16 } else { 3 };
    let skip = too_long || unclosed.iter().any(|m| m == marker);
    if skip || (!code && !opens(rest, marker, before)) {
        return literal;
    }
    let Some(close) = closer(rest, marker) else {
        unclosed.push(marker.to_string());
        return literal;
    };
    let (inner, end) = (&rest[marker.len()..close], at + close + marker.len());
    let style = match marker.len() {
        _ if code => return Some((paint(CYAN, inner, outer), end)),
        1 => ITALIC.to_string(),
        2 => BOLD.to_string(),
        _ => format!("{BOLD}{ITALIC}"),
    };
    let inner = inline(inner, &format!("{outer}{style}"));
    Some((paint(&style, &inner, outer), end))
}

/// The run of backticks, `*` or `_` that `rest` starts with.
fn marker_at(rest: &str) -> Option<&str> {
    let c = rest.chars().next().filter(|c| "`*_".contains(*c))?;
    Some(&rest[..rest.len() - rest.trim_start_matches(c).len()])
}

/// An emphasis marker opens when text follows it; `_` also not inside a word (`snake_case`).
fn opens(rest: &str, marker: &str, before: Option<char>) -> bool {
    let after = rest[marker.len()..].chars().next();
    let in_word = marker.starts_with('_') && before.is_some_and(char::is_alphanumeric);
    after.is_some_and(|c| !c.is_whitespace()) && !in_word
}

/// Where the marker `rest` opens with closes: the same run, not part of a longer one; for
/// emphasis, after text, not inside a word for `_`, and not inside a code span (an odd count
/// of backticks passed).
fn closer(rest: &str, marker: &str) -> Option<usize> {
    let c = marker.chars().next()?;
    let body = &rest[marker.len()..];
    let (mut ticks, mut counted) = (0, 0);
    for (found, _) in body.match_indices(marker) {
        ticks += body[counted..found].matches('`').count();
        counted = found;
        let before = body[..found].chars().next_back().unwrap_or(' ');
        let after = body[found + marker.len()..].chars().next().unwrap_or(' ');
        let in_word = c == '_' && after.is_alphanumeric();
        let emphasis = !before.is_whitespace() && ticks % 2 == 0 && !in_word;
        if before != c && after != c && (c == '`' || emphasis) {
            return Some(found + marker.len());
        }
    }
    None
}

/// `[text](url)` as `text (url)`, or only the url when the text is the url. The text ends at
/// the first `]`: a `[` before it means this `[` is plain text.
fn link(rest: &str, outer: &str, unclosed: &mut Vec<String>) -> Option<(String, usize)> {
    let close = 1 + rest[1..].find(['[', ']'])?;
    if !rest[close..].starts_with("](") || unclosed.iter().any(|m| m == ")") {
        return None;
    }
    let Some(url_len) = rest[close + 2..].find(')') else {
        unclosed.push(")".to_string());
        return None;
    };
    let (label, url) = (&rest[1..close], &rest[close + 2..close + 2 + url_len]);
    if url.contains(char::is_whitespace) {
        return None;
    }
    let underlined = format!("{outer}{UNDERLINE}");
    let shown = match label == url {
        true => paint(UNDERLINE, url, outer),
        false => {
            paint(UNDERLINE, &inline(label, &underlined), outer)
                + &paint(DIM, &format!(" ({url})"), outer)
        }
    };
    Some((shown, close + 3 + url_len))
}

/// `text` in `style`, then back to `outer`.
fn paint(style: &str, text: &str, outer: &str) -> String {
    format!("{style}{text}{RESET}{outer}")
}

/// A row's cells: split at each `|` outside a code span, less the empty ones the outer pipes
/// leave (a row starts with one).
fn cells(row: &str) -> Vec<String> {
    let (mut cells, mut cell, mut in_code) = (Vec::new(), String::new(), false);
    for c in row.trim().chars() {
        match c {
            '|' if !in_code => cells.push(std::mem::take(&mut cell).trim().to_string()),
            _ => cell.push(if c == '\t' { ' ' } else { c }),
        }
        in_code ^= c == '`';
    }
    if !cell.trim().is_empty() {
        cells.push(cell.trim().to_string());
    }
    cells.remove(0);
    cells
}

/// The row under the header: dashes, each cell maybe with colons (`:--`, `--:`).
fn is_delimiter_row(cells: &[String]) -> bool {
    let dashes = |cell: &String| cell.trim_matches(':').chars().all(|c| c == '-');
    !cells.is_empty() && cells.iter().all(|cell| cell.contains('-') && dashes(cell))
}

/// The header (bold), a rule, and the body rows, each column as wide as its widest cell; a
/// ragged row gets empty cells.
fn table(rows: &[Vec<String>], columns: usize) -> String {
    let drawn: Vec<Vec<String>> = (rows.iter().enumerate().filter(|(i, _)| *i != 1))
        .map(|(i, row)| {
            let cell = |c: usize| row.get(c).map_or("", String::as_str);
            let drawn = |c: usize| match i {
                0 => paint(BOLD, &inline(cell(c), BOLD), ""),
                _ => inline(cell(c), ""),
            };
            (0..columns).map(drawn).collect()
        })
        .collect();
    let widths: Vec<usize> = (0..columns)
        .map(|c| drawn.iter().map(|row| width(&row[c])).max().unwrap_or(0))
        .collect();
    let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    let line = |row: &Vec<String>| {
        let pad = |c: usize| " ".repeat(widths[c] - width(&row[c]));
        let cells: Vec<String> = (0..columns)
            .map(|c| format!("{}{}", row[c], pad(c)))
            .collect();
        cells.join(&format!(" {DIM}│{RESET} ")) + "\n"
    };
    let header = line(&drawn[0]) + &format!("{DIM}{}{RESET}\n", rule.join("─┼─"));
    header + &drawn[1..].iter().map(line).collect::<String>()
}

/// Columns `text` takes on a terminal; the escape sequences drawn here take none.
fn width(text: &str) -> usize {
    let mut chars = text.chars();
    let mut columns = 0;
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => _ = chars.by_ref().find(|c| c.is_ascii_alphabetic()),
            _ => columns += char_width(c),
        }
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
        assert_eq!(
            markdown.feed("ld** b\n"),
            format!("a {BOLD}bold{RESET} b\n")
        );
        assert_eq!(markdown.finish(), "");
    }

    #[test]
    fn headings_emphasis_and_code_are_styled_and_nest() {
        let out = render(&[
            "# Title with `code`\n",
            "*it* and ***both*** and __strong__\n",
        ]);
        let title = format!("{TITLE}Title with {CYAN}code{RESET}{TITLE}");
        assert!(out.starts_with(&title), "{out:?}");
        assert!(out.contains(&format!("{ITALIC}it{RESET}")), "{out:?}");
        assert!(
            out.contains(&format!("{BOLD}{ITALIC}both{RESET}")),
            "{out:?}"
        );
        assert!(out.contains(&format!("{BOLD}strong{RESET}")), "{out:?}");
        assert_eq!(visible(&out), "Title with code\nit and both and strong\n");
    }

    #[test]
    fn stars_and_underscores_inside_code_stay_as_they_are() {
        let out = render(&["*nix has `a*b` and `__init__` but snake_case_words stay\n"]);
        assert!(out.contains(&format!("{CYAN}a*b{RESET}")), "{out:?}");
        assert!(out.contains(&format!("{CYAN}__init__{RESET}")), "{out:?}");
        assert!(!out.contains(ITALIC) && !out.contains(BOLD), "{out:?}");
        let visible = visible(&out);
        assert_eq!(
            visible,
            "*nix has a*b and __init__ but snake_case_words stay\n"
        );
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
        assert_eq!(
            visible(&render(&["```a``` is code\n"])),
            "a is code\n",
            "not a fence"
        );
    }

    #[test]
    fn lists_quotes_and_links_with_a_rule_left_as_sent() {
        let out = visible(&render(&[
            "- one\n  * two\n3. three\n> quoted **x**\n> > deeper\n---\n## Two\n",
            "see [the docs](https://x.dev/a_b) or [https://y.dev](https://y.dev)\n",
            "[not a link] and [a](b [c](d)\n",
        ]));
        let expected = "• one\n  • two\n3. three\n│ quoted x\n│ │ deeper\n---\nTwo\nsee the docs \
             (https://x.dev/a_b) or https://y.dev\n[not a link] and [a](b c (d)\n";
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
        assert_eq!(out, "a         │ b  \n──────────┼────\nlong cell │ xyz\n");
    }

    #[test]
    fn nesting_and_code_runs_are_bounded_so_no_line_is_read_too_often() {
        let deep = ITALIC.repeat(MAX_NESTING + 1);
        assert_eq!(
            inline("*a* `b`", &deep),
            "*a* `b`",
            "past the bound, markers are text"
        );
        let bound = ITALIC.repeat(MAX_NESTING);
        assert_eq!(inline("*a*", &bound), paint(ITALIC, "a", &bound));
        let runs: String = (1..1_000).map(|n| "`".repeat(n) + " ").collect();
        assert!(
            render(&[&runs]) == runs.clone() + "\n",
            "no two runs are alike"
        );
        let quotes = ">".repeat(100_000) + " deep\n";
        assert!(visible(&render(&[&quotes])).ends_with("│ deep\n"));
    }

    #[test]
    fn a_table_too_big_to_pad_is_left_as_it_was_sent() {
        let wide = format!("|{}\n", "|".repeat(200_000));
        let rows = "| a |\n|---|\n".to_string() + &"| b |\n".repeat(1_000) + &wide;
        let out = visible(&render(&[&rows]));
        assert!(out == rows, "{} lines", out.lines().count());
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
        assert!(
            out == format!("{line}\n"),
            "nothing closes, so nothing is styled"
        );
        let brackets = "[".repeat(200_000) + "](" + &"(".repeat(200_000);
        assert!(render(&[&brackets]) == format!("{brackets}\n"));
        let mut markdown = Markdown::default();
        let short = &line[..200_000];
        let streamed: String = short
            .chars()
            .map(|c| markdown.feed(&c.to_string()))
            .collect();
        assert!(streamed.is_empty() && markdown.finish() == format!("{short}\n"));
        let long_bold = format!("**{}**\n", "word ".repeat(50_000).trim_end());
        assert_eq!(visible(&render(&[&long_bold])).len(), long_bold.len() - 4);
    }
}
