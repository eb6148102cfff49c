//! The chat history as the provider sees it: plain structs that serialise to OpenAI's wire shape.
//!
//! Only `agent.rs` changes a history; this file just defines what a message is and how the
//! invariant "every tool call is answered exactly once" is checked and repaired before a request.

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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// The raw JSON text the model streamed; parsed only when the call runs.
    pub arguments: String,
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
