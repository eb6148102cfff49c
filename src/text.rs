//! Small text helpers the display, the wire and the trust question share: a line cut at a
//! word, and text made safe to print on a terminal.
//!
//! Pure functions; nothing here reads or writes anything.

/// At most `width` characters of `line`, cut at the last space before that (then " …").
pub fn cut_at_word(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_string();
    }
    let cut: String = line.chars().take(width).collect();
    match cut.rsplit_once(' ') {
        Some((head, _)) if head.len() > width / 2 => format!("{head} …"),
        _ => format!("{cut}…"),
    }
}

/// `text` with its control characters (a terminal escape, a `\r` that would draw over a line)
/// shown as `?`: what the model or a repository chose must not rewrite what the user reads,
/// least of all the command a consent question is about. Newlines and tabs stay.
pub fn printable(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    (text.chars())
        .map(|c| match c.is_control() && c != '\n' && c != '\t' {
            true => '?',
            false => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_a_word() {
        assert_eq!(cut_at_word("one two three four", 12), "one two …");
        assert_eq!(cut_at_word("abcdefghijklmnop", 8), "abcdefgh…");
        assert_eq!(cut_at_word("short", 8), "short");
    }

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(
            printable("ls\r\x1b[2Kok\r\nnext\tcol"),
            "ls??[2Kok\nnext\tcol"
        );
    }
}
