//! Quoted text the splitter (`shell_words.rs`) hands over: what follows a `"` up to its end
//! (where `$( … )` and backticks still open a level), and `$'…'`, ANSI-C quoting, decoded as
//! bash decodes it: `$'\x72m'` is the word `rm`, and the danger gate must see `rm`.

use super::{Opener, Splitter};

impl Splitter {
    pub(super) fn in_double_quotes(&mut self, c: char) {
        match c {
            '"' => self.frame_mut().in_double_quotes = false,
            '\\' => match self.peek() {
                Some(escaped @ ('$' | '`' | '"' | '\\')) => {
                    self.pos += 1;
                    self.push(escaped);
                }
                Some('\n') => self.pos += 1,
                _ => self.push('\\'),
            },
            '$' if self.eat('(') => self.open_dollar(),
            '`' => self.open(Opener::Backtick),
            _ => self.push(c),
        }
    }

    /// Read up to the closing `'`, decoding `\n`, `\t`, `\\`, `\'`, `\xHH`, `\NNN` (octal),
    /// `\uHHHH`, `\UHHHHHHHH`, `\cX` and the other C escapes.
    pub(super) fn ansi_c_quoted(&mut self) {
        self.frame_mut().in_word = true;
        while let Some(c) = self.next().filter(|&c| c != '\'') {
            if c != '\\' {
                self.push(c);
                continue;
            }
            let Some(e) = self.next() else { return };
            let decoded = match e {
                'a' => Some('\u{7}'),
                'b' => Some('\u{8}'),
                'e' | 'E' => Some('\u{1b}'),
                'f' => Some('\u{c}'),
                'n' => Some('\n'),
                'r' => Some('\r'),
                't' => Some('\t'),
                'v' => Some('\u{b}'),
                'x' => self.number(16, 2),
                'u' => self.number(16, 4),
                'U' => self.number(16, 8),
                '0'..='7' => {
                    self.pos -= 1;
                    self.number(8, 3)
                }
                'c' => self.next().map(|x| char::from(x as u8 & 0x1f)),
                other => Some(other),
            };
            if let Some(d) = decoded {
                self.push(d);
            }
        }
    }

    /// Up to `digits` digits in `radix`, as a character (none when there are no digits).
    fn number(&mut self, radix: u32, digits: usize) -> Option<char> {
        let mut value = 0u32;
        let mut read = 0;
        while read < digits
            && let Some(d) = self.peek().and_then(|c| c.to_digit(radix))
        {
            value = value * radix + d;
            self.pos += 1;
            read += 1;
        }
        (read > 0).then(|| char::from_u32(value).unwrap_or('\u{fffd}'))
    }
}

#[cfg(test)]
mod tests {
    use super::super::split;

    #[test]
    fn ansi_c_quotes_are_decoded() {
        let words = &split(r"$'\x72m' $'\162\155' $'r\u006d' $'a\'b' $'\t' x$'\n'y")[0].words;
        assert_eq!(words, &["rm", "rm", "rm", "a'b", "\t", "x\ny"]);
    }
}
