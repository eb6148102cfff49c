//! Small text helpers the display, the wire and the trust question share: the one family of
//! truncators (`cut_at_word`, `one_line`, `headline`, `echo`, `truncate_middle`), text made
//! safe to print on a terminal, the pattern-length refusal, the calendar date of a Unix day,
//! and the character classes the token estimate counts.
//!
//! Pure functions; nothing here reads or writes anything.

/// Most characters of a model-given path or pattern that a message repeats (`echo`).
const ECHO_CHARS: usize = 200;

/// At most `width` characters of `line`, cut at the last space before that (then " …").
pub(crate) fn cut_at_word(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_string();
    }
    let cut: String = line.chars().take(width).collect();
    match cut.rsplit_once(' ') {
        Some((head, _)) if head.len() > width / 2 => format!("{head} …"),
        _ => format!("{cut}…"),
    }
}

/// `text` on one line, its whitespace squeezed to single spaces; past `max` characters, its
/// first `max` and "…". For previews and summaries; `cut_at_word` is for a line a person reads.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let squeezed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match squeezed.chars().count() > max {
        true => format!("{}…", squeezed.chars().take(max).collect::<String>()),
        false => squeezed,
    }
}

/// The first `max` characters of `text` (all of it when shorter): a cut that adds nothing.
pub(crate) fn first_chars(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// A message as one short line for a notice: an HTML page's title, or else the first line
/// that says something, cut at a word near `ONE_LINE` characters.
pub(crate) fn headline(message: &str) -> String {
    const ONE_LINE: usize = 200;
    let first = message.lines().map(str::trim).find(|line| !line.is_empty());
    let line = html_title(message).or(first).unwrap_or("");
    cut_at_word(line, ONE_LINE)
}

/// The `<title>` of an HTML page, if `text` is one.
pub(crate) fn html_title(text: &str) -> Option<&str> {
    let lower = text.to_ascii_lowercase();
    let start = lower.find("<title>")? + "<title>".len();
    let end = start + lower[start..].find("</title>")?;
    Some(text[start..end].trim()).filter(|title| !title.is_empty())
}

/// `text` with its control characters (a terminal escape, a `\r` that would draw over a line)
/// shown as `?`, and its invisible format characters (bidi overrides and isolates that reorder
/// what is drawn, zero-width characters, tags) as `\u{202e}`: what the model or a repository
/// chose must not rewrite what the user reads, least of all the command a consent question is
/// about. Newlines and tabs stay. The one sanitiser for text bound for the terminal.
pub fn printable(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    let mut shown = String::with_capacity(text.len());
    let (mut chars, mut before) = (text.chars().peekable(), ' ');
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => shown.push(c),
            _ if c.is_control() => shown.push('?'),
            // A joiner between two pictures draws one emoji (👨‍💻) and hides no text.
            ZERO_WIDTH_JOINER
                if is_picture(before) && chars.peek().is_some_and(|&n| is_picture(n)) =>
            {
                shown.push(c)
            }
            _ if is_invisible(c) => shown.extend(c.escape_unicode()),
            _ => shown.push(c),
        }
        before = c;
    }
    shown
}

const ZERO_WIDTH_JOINER: char = '\u{200d}';

/// A symbol or emoji (from U+2600 on, variation selectors included), not itself invisible.
fn is_picture(c: char) -> bool {
    c as u32 >= 0x2600 && !is_invisible(c)
}

/// Characters drawn as nothing that still change what is drawn or hide what is there: the
/// format characters (Unicode's `Cf`: soft hyphen, Arabic letter mark, zero-width space and
/// joiners, the marks, bidi embeddings, overrides and isolates, word joiner, BOM, tags), the
/// line and paragraph separators, and the Hangul fillers that pass for blank letters.
fn is_invisible(c: char) -> bool {
    matches!(c as u32,
        0xAD | 0x61C | 0x115F | 0x1160 | 0x180E | 0x200B..=0x200F | 0x2028..=0x202E
        | 0x2060..=0x206F | 0x3164 | 0xFEFF | 0xFFA0 | 0xFFF9..=0xFFFB | 0xE0000..=0xE007F)
}

/// Longest glob or grep pattern the tools take: a real one fits on a line, and parsing a 10 MB
/// one took 1 GB of memory (the regex crate's size limit applies only after parsing).
pub(crate) const MAX_PATTERN_BYTES: usize = 8192;

/// The refusal of a pattern longer than `MAX_PATTERN_BYTES`, if it is.
pub(crate) fn pattern_too_long(tool: &str, pattern: &str) -> Option<String> {
    let length = pattern.len();
    (length > MAX_PATTERN_BYTES)
        .then(|| format!("the pattern is {length} bytes; {tool} takes up to {MAX_PATTERN_BYTES}"))
}

/// `text` as a message may repeat it: whole when short, else its start, its end and its
/// length. A 10 MB path echoed whole would make the next request 20 MB.
pub(crate) fn echo(text: &str) -> String {
    match head_and_tail(text, ECHO_CHARS) {
        None => text.to_string(),
        Some((head, total, tail)) => format!("{head}…[{total} characters]…{tail}"),
    }
}

/// Cut a long text to its head and tail, saying how much was left out.
pub(crate) fn truncate_middle(text: &str, max_chars: usize) -> String {
    match head_and_tail(text, max_chars) {
        None => text.to_string(),
        Some((head, total, tail)) => {
            let cut = total - head.chars().count() - tail.chars().count();
            format!("{head}\n\n... [{cut} characters cut] ...\n\n{tail}")
        }
    }
}

/// The first and last `max_chars / 2` characters of `text`, and its length in characters, if
/// it is longer than `max_chars`.
fn head_and_tail(text: &str, max_chars: usize) -> Option<(String, usize, String)> {
    let total = text.chars().count();
    if total <= max_chars {
        return None;
    }
    let keep = max_chars / 2;
    let head: String = text.chars().take(keep).collect();
    let tail: String = text.chars().skip(total - keep).collect();
    Some((head, total, tail))
}

/// Days since 1970-01-01 to (year, month, day): the date in the system prompt, and in session
/// file names.
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Today's UTC date as YYYY-MM-DD, from the civil-from-days algorithm (no date crate needed).
pub(crate) fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// How many bytes are ASCII punctuation (the token estimate's test for code, `core/prompt.rs`):
/// one table lookup a byte, fast whether or not the compiler vectorises the loop (the binary is
/// built for size; DESIGN.md, "The token estimate").
pub(crate) fn ascii_punctuation(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .map(|&b| usize::from(PUNCTUATION[usize::from(b)]))
        .sum()
}

/// 1 at each ASCII punctuation byte, 0 elsewhere.
const PUNCTUATION: [u8; 256] = {
    let mut table = [0; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = (byte as u8).is_ascii_punctuation() as u8;
        byte += 1;
    }
    table
};

/// Han, kana, Hangul and full-width forms: each is roughly a token of its own or less.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x20000..=0x2FFFF)
}

/// What a caught panic said (`panic!("...")` carries a `&str` or a `String`); empty otherwise.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    (panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// `a, b,,c` as `["a", "b", "c"]`.
pub(crate) fn comma_list(text: &str) -> Vec<String> {
    let names = text.split(',').map(|name| name.trim().to_string());
    names.filter(|name| !name.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headline_is_short_and_says_something() {
        let page =
            "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>nginx</body>\n</html>";
        assert_eq!(headline(page), "502 Bad Gateway");
        assert_eq!(headline("\n\n  first words\nsecond line"), "first words");
        let long = "word ".repeat(2000);
        let line = headline(&long);
        assert!(line.len() <= 205 && line.ends_with(" …"), "{line}");
        let unicode = headline(&"Ünïcode ".repeat(100));
        assert!(unicode.chars().count() <= 202, "{unicode}");
    }

    #[test]
    fn cuts_at_a_word() {
        assert_eq!(cut_at_word("one two three four", 12), "one two …");
        assert_eq!(cut_at_word("abcdefghijklmnop", 8), "abcdefgh…");
        assert_eq!(cut_at_word("short", 8), "short");
    }

    #[test]
    fn one_line_squeezes_and_cuts() {
        assert_eq!(one_line("  a\n\tb   c ", 10), "a b c");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("abc", 3), "abc");
    }

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(
            printable("ls\r\x1b[2Kok\r\nnext\tcol"),
            "ls??[2Kok\nnext\tcol"
        );
        // Trojan Source: an override and an isolate reorder what is drawn; a BOM, a zero-width
        // space and a tag character draw nothing. Each is shown as its code point.
        assert_eq!(
            printable("rm \u{202e}txt\u{2066}a\u{2069}\u{feff}\u{200b}\u{e0041}é"),
            r"rm \u{202e}txt\u{2066}a\u{2069}\u{feff}\u{200b}\u{e0041}é"
        );
        // An emoji's joiner stays; one beside a letter could hide where a word ends, so not.
        assert_eq!(
            printable("👨\u{200d}💻 🏳\u{fe0f}\u{200d}🌈"),
            "👨\u{200d}💻 🏳\u{fe0f}\u{200d}🌈"
        );
        assert_eq!(printable("r\u{200d}m 👨\u{200d}"), r"r\u{200d}m 👨\u{200d}");
    }

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(20_786), (2026, 11, 29));
    }

    #[test]
    fn ascii_punctuation_counts_what_decoding_chars_would() {
        let by_chars = |text: &str| text.chars().filter(char::is_ascii_punctuation).count();
        let code = "fn main() { let x = [1, 2]; } // done\n".repeat(40);
        let lines = [
            "",
            "a.b, (c)!",
            "plain words only",
            &";".repeat(1000),
            &code,
        ];
        for line in lines {
            assert_eq!(
                ascii_punctuation(line.as_bytes()),
                by_chars(line),
                "{line:?}"
            );
        }
    }
}
