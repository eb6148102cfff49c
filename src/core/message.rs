//! The chat history as the provider sees it: plain structs that serialise to OpenAI's wire shape.
//!
//! Only `agent.rs` changes a history; this file just defines what a message is and how the
//! invariant "every tool call is answered exactly once" is checked and repaired before a request.

use crate::tools::support::todos::Todo;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Role {
    System,
    #[default]
    User,
    Assistant,
    Tool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub(crate) role: Role,
    /// Always serialised (as `null` when absent): some servers reject an assistant message
    /// with no `content` key at all.
    pub(crate) content: Option<String>,
    /// Kept only on assistant messages that carry tool calls: DeepSeek and Kimi thinking modes
    /// reject the next request if it is missing there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reasoning_content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tool_call_id: Option<String>,
    /// Anthropic's signed thinking blocks next to tool calls, as received, to send back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) thinking: Vec<serde_json::Value>,
}

/// One tool call, the one shape it has from the stream to the pool and back into the history:
/// `arguments` is the raw JSON text the model streamed, parsed only when the call runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// As chat completions (and the session log) spell a call:
/// `{"id", "type": "function", "function": {"name", "arguments"}}`.
impl Serialize for ToolCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let function = json!({"name": self.name, "arguments": self.arguments});
        json!({"id": self.id, "type": "function", "function": function}).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolCall {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ToolCall, D::Error> {
        let call = Value::deserialize(deserializer)?;
        let missing = || D::Error::custom("a tool call needs an id, a name and arguments");
        let text = |field: &Value| field.as_str().map(str::to_string).ok_or_else(missing);
        Ok(ToolCall {
            id: text(&call["id"])?,
            name: text(&call["function"]["name"])?,
            arguments: text(&call["function"]["arguments"])?,
        })
    }
}

/// One reply as the stream delivered it, before it joins the history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub(crate) text: String,
    pub(crate) reasoning: String,
    pub(crate) thinking: Vec<serde_json::Value>,
    /// In index order.
    pub tool_calls: Vec<ToolCall>,
    pub(crate) finish_reason: Option<String>,
    pub(crate) usage: Option<Usage>,
}

/// Tokens one request used, as the provider reported them (or as estimated when it did not).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// The part of `prompt_tokens` served from the provider's cache (billed at the cached rate).
    pub cached_tokens: u64,
    /// Of `prompt_tokens`, those written to the cache (Anthropic bills them above input).
    pub cache_write_tokens: u64,
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
    pub(crate) fn from_reply(reply: &Reply) -> Message {
        let (mut seen, mut tool_calls) = (HashSet::new(), reply.tool_calls.clone());
        for (i, call) in tool_calls.iter_mut().enumerate() {
            if call.id.is_empty() || !seen.insert(call.id.clone()) {
                call.id = format!("call_{i}_{}", call.id);
                seen.insert(call.id.clone());
            }
        }
        let kept = |text: &str| (!text.is_empty()).then(|| text.to_string());
        Message {
            content: kept(&reply.text),
            reasoning_content: kept(&reply.reasoning),
            thinking: reply.thinking.clone(),
            tool_calls,
            ..Message::assistant("")
        }
    }

    fn plain(role: Role, text: &str) -> Message {
        let content = Some(text.to_string());
        Message {
            role,
            content,
            ..Message::default()
        }
    }
}

/// Make every assistant tool call answered by exactly one `tool` message, and drop `tool`
/// messages that answer nothing. A call left unanswered (e.g. by Ctrl+C) gets `[interrupted]`.
/// Returns how many repairs were made. Providers reject the whole request otherwise.
pub(crate) fn repair_tool_pairs(history: &mut Vec<Message>) -> usize {
    let mut repaired = Vec::with_capacity(history.len());
    let (mut repairs, mut open) = (0, Vec::<String>::new());
    let interrupted = |id: String| Message::tool_result(&id, "[interrupted]");
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
        repaired.extend(open.drain(..).map(interrupted));
        if message.role == Role::Assistant {
            open = message.tool_calls.iter().map(|c| c.id.clone()).collect();
        }
        repaired.push(message);
    }
    repairs += open.len();
    repaired.extend(open.drain(..).map(interrupted));
    *history = repaired;
    repairs
}

/// What a tool call produced: the text the model reads, and a change the loop applies.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub text: String,
    pub(crate) effect: Effect,
}

/// A change to session state, applied by the loop after the batch, in call order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Effect {
    None,
    ChangeDir(PathBuf),
    SetTodos(Vec<Todo>),
}

impl Outcome {
    pub(crate) fn text(text: impl Into<String>) -> Outcome {
        Outcome {
            text: text.into(),
            effect: Effect::None,
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
}
