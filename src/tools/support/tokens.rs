//! The token estimate of a text, before the provider says how big a prompt is: line by line,
//! CJK characters apart, the rest as code or prose. No tokenizer: a rough figure is all
//! compaction needs (`core/prompt.rs` sums it over messages; `extras/calibration.rs` anchors
//! it on the provider's own count).

use crate::tools::support::text::{ascii_punctuation, is_cjk};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Characters per token, measured roughly on common BPE tokenizers.
const CJK_CHARS_PER_TOKEN: f64 = 1.5;
const CODE_CHARS_PER_TOKEN: f64 = 2.8;
const PROSE_CHARS_PER_TOKEN: f64 = 3.4;
/// A line with at least this share (percent) of ASCII punctuation counts as code.
const CODE_SYMBOL_PERCENT: usize = 8;
/// A count a provider reported, read as any JSON value so that a strange one cannot fail the
/// reply it came in: absent or `null` is 0, a whole number is itself, anything else (negative,
/// fractional, past `u64`, a string) is `u64::MAX`, a count no request has, which the account
/// replaces by the estimate and says so (`extras/cost.rs`, `impossible`).
pub(crate) fn reported(count: Option<&Value>) -> u64 {
    match count {
        None | Some(Value::Null) => 0,
        Some(value) => value.as_u64().unwrap_or(u64::MAX),
    }
}

/// `reported` for a `serde` field: `#[serde(default, deserialize_with = "lenient")]`.
pub(crate) fn lenient<'de, D: Deserializer<'de>>(counted: D) -> Result<Option<u64>, D::Error> {
    let value = Option::<Value>::deserialize(counted)?;
    Ok(value.as_ref().map(|value| reported(Some(value))))
}

/// Tokens for `text`, line by line: CJK characters apart, the rest as code or prose.
pub(crate) fn estimate_text(text: &str) -> usize {
    let mut tokens = 0.0;
    for line in text.split_inclusive('\n') {
        let (mut cjk, mut other, mut symbols) = (0, 0, 0);
        // Most lines are ASCII, and the whole history is estimated every round: counting bytes
        // there is faster than decoding chars, and gives the same figures.
        if line.is_ascii() {
            other = line.len();
            symbols = ascii_punctuation(line.as_bytes());
        } else {
            for c in line.chars() {
                if is_cjk(c) {
                    cjk += 1;
                } else {
                    other += 1;
                    symbols += usize::from(c.is_ascii_punctuation());
                }
            }
        }
        let per_token = if symbols * 100 >= other * CODE_SYMBOL_PERCENT {
            CODE_CHARS_PER_TOKEN
        } else {
            PROSE_CHARS_PER_TOKEN
        };
        tokens += cjk as f64 / CJK_CHARS_PER_TOKEN + other as f64 / per_token;
    }
    tokens.ceil() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reported_count_is_a_whole_number_or_impossible() {
        let read = |text: &str| reported(Some(&serde_json::from_str(text).unwrap()));
        assert_eq!(read("12"), 12);
        assert_eq!(read("null"), 0);
        assert_eq!(reported(None), 0);
        for absurd in ["-5", "1e30", "1.5", "\"7\"", "18446744073709551615"] {
            assert_eq!(read(absurd), u64::MAX, "{absurd}");
        }
    }

    fn within(actual: usize, expected: usize, percent: usize) -> bool {
        actual * 100 >= expected * (100 - percent) && actual * 100 <= expected * (100 + percent)
    }

    #[test]
    fn estimates_follow_the_kind_of_text() {
        let cjk: String = "上下文窗口管理".chars().cycle().take(1_000).collect();
        let prose =
            "The agent reads the file and then explains what it found to the user. ".repeat(50);
        let code = "    let total = items.iter().map(|x| x.len()).sum::<usize>();\n".repeat(50);
        let (c, p, k) = (
            estimate_text(&cjk),
            estimate_text(&prose),
            estimate_text(&code),
        );
        assert!(within(c, 667, 15), "cjk {c}");
        assert!(within(p, prose.len() * 10 / 34, 15), "prose {p}");
        assert!(within(k, code.len() * 10 / 28, 15), "code {k}");
        // Tokens per character: CJK > code > prose.
        assert!(c * 1000 / 1_000 > k * 1000 / code.len());
        assert!(k * 1000 / code.len() > p * 1000 / prose.len());
        assert_eq!(estimate_text(""), 0);
    }
}
