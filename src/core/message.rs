//! The chat history as the provider sees it: plain structs that serialise to OpenAI's wire
//! shape, the repair that keeps "every tool call is answered exactly once" before a request,
//! and the token estimate: how big a history is before the provider says so.
//!
//! Only `agent.rs` changes a history; this file just defines what a message is, repairs it,
//! and sizes it. The estimate counts text line by line (CJK characters apart, the rest as code
//! or prose), and `Estimator` anchors the sum on the last prompt size the provider reported.
//! No tokenizer: a rough figure is all compaction (`context.rs`) needs, and the calibration
//! corrects it every round.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    /// Always serialised (as `null` when absent): some servers reject an assistant message
    /// with no `content` key at all.
    pub content: Option<String>,
    /// Kept only on assistant messages that carry tool calls: DeepSeek and Kimi thinking modes
    /// reject the next request if it is missing there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// One tool call, the one shape it has from the stream to the pool and back into the history:
/// `arguments` is the raw JSON text the model streamed, parsed only when the call runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "WireCall", into = "WireCall")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A call as chat completions (and the session log) spell it:
/// `{"id", "type": "function", "function": {"name", "arguments"}}`.
#[derive(Serialize, Deserialize)]
struct WireCall {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    function: WireFunction,
}

#[derive(Serialize, Deserialize)]
struct WireFunction {
    name: String,
    arguments: String,
}

impl From<WireCall> for ToolCall {
    fn from(wire: WireCall) -> ToolCall {
        let WireFunction { name, arguments } = wire.function;
        ToolCall {
            id: wire.id,
            name,
            arguments,
        }
    }
}

impl From<ToolCall> for WireCall {
    fn from(call: ToolCall) -> WireCall {
        let (name, arguments) = (call.name, call.arguments);
        let function = WireFunction { name, arguments };
        WireCall {
            id: call.id,
            kind: "function".to_string(),
            function,
        }
    }
}

/// One reply as the stream delivered it, before it joins the history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub text: String,
    pub reasoning: String,
    /// In index order.
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<String>,
    /// None if the provider sent none.
    pub usage: Option<Usage>,
}

/// Tokens one request used, as the provider reported them (or as estimated when it did not).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    /// US$ the provider says the request cost (OpenRouter's `usage.cost`); it wins over the table.
    pub cost: Option<f64>,
}

impl Message {
    pub fn system(text: &str) -> Message {
        Message::plain(Role::System, text)
    }

    pub fn user(text: &str) -> Message {
        Message::plain(Role::User, text)
    }

    pub fn assistant(text: &str) -> Message {
        Message::plain(Role::Assistant, text)
    }

    pub fn tool_result(call_id: &str, text: &str) -> Message {
        Message {
            tool_call_id: Some(call_id.to_string()),
            ..Message::plain(Role::Tool, text)
        }
    }

    /// The assistant turn as history keeps it. Reasoning stays only next to tool calls, where
    /// DeepSeek and Kimi thinking modes require it; ids are made unique if a provider repeated one.
    pub fn from_reply(reply: &Reply) -> Message {
        let mut seen = std::collections::HashSet::new();
        let tool_calls = reply
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, call): (usize, &ToolCall)| {
                let mut id = call.id.clone();
                if id.is_empty() || !seen.insert(id.clone()) {
                    id = format!("call_{i}_{}", call.id);
                    seen.insert(id.clone());
                }
                ToolCall { id, ..call.clone() }
            })
            .collect();
        let reasoning = (!reply.reasoning.is_empty()).then(|| reply.reasoning.clone());
        Message {
            content: (!reply.text.is_empty()).then(|| reply.text.clone()),
            reasoning_content: reasoning,
            tool_calls,
            ..Message::assistant("")
        }
    }

    fn plain(role: Role, text: &str) -> Message {
        Message {
            role,
            content: Some(text.to_string()),
            reasoning_content: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// Make every assistant tool call answered by exactly one `tool` message, and drop `tool`
/// messages that answer nothing. A call left unanswered (e.g. by Ctrl+C) gets `[interrupted]`.
/// Returns how many repairs were made. Providers reject the whole request otherwise.
pub fn repair_tool_pairs(history: &mut Vec<Message>) -> usize {
    let mut repaired = Vec::with_capacity(history.len());
    let mut repairs = 0;
    let mut open: Vec<String> = Vec::new();
    for message in history.drain(..) {
        if message.role == Role::Tool {
            let id = message.tool_call_id.clone().unwrap_or_default();
            match open.iter().position(|pending| *pending == id) {
                Some(i) => {
                    open.remove(i);
                    repaired.push(message);
                }
                None => repairs += 1,
            }
            continue;
        }
        // Any other message closes the previous call group: answer what is still open.
        repairs += open.len();
        for id in open.drain(..) {
            repaired.push(Message::tool_result(&id, "[interrupted]"));
        }
        if message.role == Role::Assistant {
            open = message.tool_calls.iter().map(|c| c.id.clone()).collect();
        }
        repaired.push(message);
    }
    repairs += open.len();
    for id in open.drain(..) {
        repaired.push(Message::tool_result(&id, "[interrupted]"));
    }
    *history = repaired;
    repairs
}

/// What the user (and the reliability tests, which count these lines) see after a repair.
pub fn repair_notice(changed: usize, when: &str) -> String {
    format!("history repaired {when}: {changed} tool messages added as [interrupted] or dropped")
}

// The token estimate, asked before every request whether to compact.

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

    fn calls(ids: &[&str]) -> Message {
        let tool_calls = ids
            .iter()
            .map(|id| ToolCall {
                id: id.to_string(),
                name: "glob".into(),
                arguments: "{}".into(),
            })
            .collect();
        Message {
            tool_calls,
            ..Message::assistant("")
        }
    }

    type Shape = Vec<(Role, Option<String>, Option<String>)>;

    fn check(mut history: Vec<Message>) -> (usize, Shape) {
        let repairs = repair_tool_pairs(&mut history);
        let shape = history
            .into_iter()
            .map(|m| (m.role, m.tool_call_id, m.content))
            .collect();
        (repairs, shape)
    }

    fn answer(id: &str) -> Message {
        Message::tool_result(id, "ok")
    }

    #[test]
    fn a_valid_history_is_left_alone() {
        let history = vec![
            Message::user("hi"),
            calls(&["a", "b"]),
            answer("a"),
            answer("b"),
        ];
        assert_eq!(check(history).0, 0);
    }

    #[test]
    fn unanswered_calls_get_interrupted_results() {
        let history = vec![calls(&["a", "b"]), answer("a"), Message::user("next")];
        let (repairs, shape) = check(history);
        assert_eq!(repairs, 1);
        let b = (
            Role::Tool,
            Some("b".to_string()),
            Some("[interrupted]".to_string()),
        );
        assert_eq!(shape[2], b);
        assert_eq!(shape[3].0, Role::User);
        let (repairs, shape) = check(vec![calls(&["a"])]);
        assert_eq!((repairs, shape.len()), (1, 2));
    }

    #[test]
    fn orphans_and_duplicates_are_dropped() {
        let history = vec![
            Message::user("hi"),
            answer("x"),
            calls(&["a"]),
            answer("a"),
            answer("a"),
        ];
        let (repairs, shape) = check(history);
        assert_eq!(repairs, 2);
        assert_eq!(shape.len(), 3);
    }

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
