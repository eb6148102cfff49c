//! The token estimate: how big a prompt is before the provider says so.
//!
//! `context.rs` asks before every request whether to compact; the answer starts here. Text is
//! counted line by line (CJK characters apart, the rest as code or prose), and `Estimator`
//! anchors the sum on the last prompt size the provider reported. No tokenizer: a rough figure
//! is all compaction needs, and the calibration corrects it every round.

use crate::core::message::Message;

/// Characters per token, measured roughly on common BPE tokenizers.
const CJK_CHARS_PER_TOKEN: f64 = 1.5;
const CODE_CHARS_PER_TOKEN: f64 = 2.8;
const PROSE_CHARS_PER_TOKEN: f64 = 3.4;
/// A line with at least this share (percent) of ASCII punctuation counts as code.
const CODE_SYMBOL_PERCENT: usize = 8;
/// Role markers and separators the provider adds around every message.
const MESSAGE_OVERHEAD_TOKENS: usize = 4;

/// Tokens for `text`, line by line: CJK characters apart, the rest as code or prose.
pub fn estimate_text(text: &str) -> usize {
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

/// How many bytes are ASCII punctuation. Summed as u8 over 255-byte chunks (where a u8 cannot
/// overflow) so the compiler can count 32 bytes at a time (DESIGN.md, "The token estimate").
fn ascii_punctuation(bytes: &[u8]) -> usize {
    let count = |chunk: &[u8]| -> u8 {
        chunk
            .iter()
            .map(|b| u8::from(b.is_ascii_punctuation()))
            .sum()
    };
    bytes
        .chunks(255)
        .map(|chunk| usize::from(count(chunk)))
        .sum()
}

/// Han, kana, Hangul and full-width forms: each is roughly a token of its own or less.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x20000..=0x2FFFF)
}

/// Tokens for a request's messages: content, reasoning, tool-call names and arguments.
pub fn estimate_messages(messages: &[Message]) -> usize {
    let text = |t: &Option<String>| t.as_deref().map_or(0, estimate_text);
    messages
        .iter()
        .map(|m| {
            let calls: usize = (m.tool_calls.iter())
                .map(|c| estimate_text(&c.name) + estimate_text(&c.arguments))
                .sum();
            MESSAGE_OVERHEAD_TOKENS + text(&m.content) + text(&m.reasoning_content) + calls
        })
        .sum()
}

/// The estimate, anchored on the last prompt size the provider actually reported.
#[derive(Debug, Clone, Default)]
pub struct Estimator {
    /// `(history_len, prompt_tokens)` of the last request the provider measured.
    calibrated: Option<(usize, usize)>,
}

impl Estimator {
    pub fn new() -> Estimator {
        Estimator::default()
    }

    /// The request that sent `history[..history_len]` cost `actual_prompt_tokens`.
    pub fn calibrate(&mut self, history_len: usize, actual_prompt_tokens: u64) {
        let tokens = usize::try_from(actual_prompt_tokens).unwrap_or(usize::MAX);
        self.calibrated = Some((history_len, tokens));
    }

    /// Forget the calibration: call after `compact`, which may shrink messages in place (a snip
    /// keeps the length, so `estimate` could not notice on its own).
    pub fn reset(&mut self) {
        self.calibrated = None;
    }

    pub fn estimate(&self, history: &[Message]) -> usize {
        match self.calibrated {
            Some((len, tokens)) if len <= history.len() => {
                tokens.saturating_add(estimate_messages(&history[len..]))
            }
            _ => estimate_messages(history),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::ToolCall;

    fn within(actual: usize, expected: usize, percent: usize) -> bool {
        actual * 100 >= expected * (100 - percent) && actual * 100 <= expected * (100 + percent)
    }

    fn read_call(id: &str) -> Message {
        let call = ToolCall {
            id: id.to_string(),
            name: "read_file".into(),
            arguments: format!(r#"{{"path": "src/{id}.rs"}}"#),
        };
        Message {
            tool_calls: vec![call],
            ..Message::assistant("")
        }
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

    #[test]
    fn message_estimates_count_calls_reasoning_and_overhead() {
        assert_eq!(
            estimate_messages(&[Message::assistant("")]),
            MESSAGE_OVERHEAD_TOKENS
        );
        let mut call = read_call("a");
        let bare = estimate_messages(std::slice::from_ref(&call));
        assert!(bare > MESSAGE_OVERHEAD_TOKENS + 5);
        call.reasoning_content = Some("I should look at the file first.".repeat(10));
        assert!(estimate_messages(&[call]) > bare + 50);
    }

    #[test]
    fn the_estimator_builds_on_the_reported_size() {
        let mut history = vec![Message::system("sys"), Message::user("task")];
        let result = "    let value = compute(input); // a line of code\n".repeat(100);
        history.extend([read_call("r"), Message::tool_result("r", &result)]);
        let mut estimator = Estimator::new();
        assert_eq!(estimator.estimate(&history), estimate_messages(&history));
        estimator.calibrate(2, 5_000);
        assert_eq!(
            estimator.estimate(&history),
            5_000 + estimate_messages(&history[2..])
        );
        assert_eq!(estimator.estimate(&history[..2]), 5_000);
        // Shorter than what was measured: the history was compacted, start over.
        assert_eq!(
            estimator.estimate(&history[..1]),
            estimate_messages(&history[..1])
        );
        estimator.reset();
        assert_eq!(estimator.estimate(&history), estimate_messages(&history));
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
