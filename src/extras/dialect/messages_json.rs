//! The messages of a chat-completions request, each serialised once. Between rewrites the
//! history only grows, so a round serialises what joined it since the last one and hands the
//! body the rest as shared pieces, which `http::post` streams to the socket (no copy of the
//! history into one string): the cost of a round follows what was added, not the size of the
//! history (issue 19's "flat cost per round"). `Dialects::body` asks for the array; the rest of
//! the body is built anew every time. A rewrite of the history (a compaction, a repair,
//! `/clear`) empties it (`Extras::rewritten`); besides, an entry is used only while its message
//! looks the same (role, ids, sizes, the first and last bytes of its texts), so a summary
//! request (another list) or a rewrite no one reported is serialised again. It holds no
//! history of its own.

use crate::core::message::{Message, Role};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, PoisonError};

/// Per agent (`Extras::for_sub_agent` starts it empty).
#[derive(Debug, Default)]
pub(crate) struct MessagesJson {
    /// Shared with the bodies that send them: a round copies no message's text.
    entries: Mutex<Vec<(Print, Arc<str>)>>,
}

/// What tells one message from another cheaply: the text itself is not read whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Print {
    role: Role,
    sizes: [usize; 5],
    ends: u64,
    empty_content: bool,
}

impl MessagesJson {
    /// The history was rewritten: nothing kept may be reused.
    pub(crate) fn forget(&self) {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Append `[m0,m1,…]` to the body's pieces as chat completions takes the messages: no
    /// `thinking` (Anthropic's, from a session begun there), and `""` for a missing content
    /// where `empty_content`.
    pub(crate) fn append_array(
        &self,
        out: &mut Vec<Arc<str>>,
        messages: &[Message],
        empty_content: bool,
    ) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let comma: Arc<str> = Arc::from(",");
        out.push(Arc::from("["));
        for (i, message) in messages.iter().enumerate() {
            let print = print(message, empty_content);
            if entries.get(i).is_none_or(|(seen, _)| *seen != print) {
                let entry = (print, Arc::from(to_json(message, empty_content)));
                match i < entries.len() {
                    true => entries[i] = entry,
                    false => entries.push(entry),
                }
            }
            if i > 0 {
                out.push(Arc::clone(&comma));
            }
            out.push(Arc::clone(&entries[i].1));
        }
        out.push(Arc::from("]"));
    }
}

fn print(message: &Message, empty_content: bool) -> Print {
    let text = message.content.as_deref().unwrap_or("");
    let reasoning = message.reasoning_content.as_deref().unwrap_or("");
    let id = message.tool_call_id.as_deref().unwrap_or("");
    let mut hash = ends(
        ends(ends(OFFSET, text.as_bytes()), reasoning.as_bytes()),
        id.as_bytes(),
    );
    let mut arguments = 0;
    for call in &message.tool_calls {
        hash = ends(
            ends(ends(hash, call.id.as_bytes()), call.name.as_bytes()),
            call.arguments.as_bytes(),
        );
        arguments += call.arguments.len();
    }
    Print {
        role: message.role,
        sizes: [
            text.len(),
            reasoning.len(),
            message.tool_calls.len(),
            arguments,
            id.len(),
        ],
        ends: hash,
        empty_content,
    }
}

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a, on from `hash`, over the first and the last 64 bytes of `text` (the whole of a short
/// one): a message rewritten in place almost always changes its length or its ends too, and
/// the text is not read whole.
fn ends(hash: u64, text: &[u8]) -> u64 {
    let (head, tail) = (
        &text[..text.len().min(64)],
        &text[text.len().saturating_sub(64)..],
    );
    let step = |hash: u64, byte: &u8| (hash ^ u64::from(*byte)).wrapping_mul(0x100_0000_01b3);
    tail.iter().fold(head.iter().fold(hash, step), step)
}

fn to_json(message: &Message, empty_content: bool) -> String {
    let missing = empty_content && message.content.is_none();
    if message.thinking.is_empty() && !missing {
        return serde_json::to_string(message).unwrap_or_default();
    }
    let mut value = json!(message);
    if let Some(fields) = value.as_object_mut() {
        fields.remove("thinking");
        if missing {
            fields.insert("content".to_string(), Value::from(""));
        }
    }
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::ToolCall;

    fn array(json: &MessagesJson, messages: &[Message], empty_content: bool) -> Value {
        let mut out = vec![];
        json.append_array(&mut out, messages, empty_content);
        serde_json::from_str(&out.concat()).expect("a JSON array")
    }

    #[test]
    fn the_array_is_what_serde_would_send_and_follows_every_change() {
        let json = MessagesJson::default();
        let mut history = vec![Message::system("sys"), Message::user("hi")];
        assert_eq!(
            array(&json, &history, false),
            serde_json::to_value(&history).unwrap()
        );
        history.push(Message::assistant("hello"));
        assert_eq!(
            array(&json, &history, false),
            serde_json::to_value(&history).unwrap()
        );
        // Rewritten in place, the same length: the ends tell.
        history[1] = Message::user("ho");
        assert_eq!(array(&json, &history, false)[1]["content"], "ho");
        // A shorter list (a summary request) and back again.
        let summary = [Message::system("condense"), Message::user("the talk")];
        assert_eq!(array(&json, &summary, false)[0]["content"], "condense");
        assert_eq!(
            array(&json, &history, false),
            serde_json::to_value(&history).unwrap()
        );
    }

    #[test]
    fn thinking_is_left_out_and_a_missing_content_may_be_empty() {
        let json = MessagesJson::default();
        let call = ToolCall {
            id: "call_1".into(),
            name: "read_file".into(),
            arguments: "{}".into(),
        };
        let message = Message {
            content: None,
            tool_calls: vec![call],
            thinking: vec![json!({"type": "thinking", "thinking": "hm", "signature": "s"})],
            ..Message::assistant("")
        };
        let sent = array(&json, std::slice::from_ref(&message), false);
        assert!(sent[0].get("thinking").is_none() && sent[0]["content"].is_null());
        let sent = array(&json, std::slice::from_ref(&message), true);
        assert_eq!(sent[0]["content"], "");
    }
}
