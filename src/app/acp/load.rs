//! `session/load`'s replay: a saved conversation, loaded by `setup::start_in` as `-r` loads it,
//! sent to the client as the `session/update`s it would have seen live, in order: the user's
//! messages as `user_message_chunk`, answers as `agent_message_chunk`, and each tool call as a
//! `tool_call` followed by a `tool_call_update` with its result.
//!
//! `acp.rs` calls `conversation` before answering `session/load`. Nothing is asked of the
//! model, nothing runs; paths resolve against the agent's `cwd`.

use crate::app::acp::jsonrpc::Out;
use crate::app::acp::updates::{path_of, text_content, tool_call};
use crate::core::agent::Agent;
use crate::core::message::{Message, Role};
use crate::tools::preview;
use serde_json::{Value, json};

/// Send the agent's history (but the system prompt) to the client, message by message.
pub(crate) fn conversation(agent: &Agent, session: &str, out: &mut Out) {
    let history = agent.history().get(1..).unwrap_or_default();
    for update in history.iter().flat_map(|m| updates(m, agent)) {
        out.notify(
            "session/update",
            json!({"sessionId": session, "update": update}),
        );
    }
}

/// The updates one message becomes.
fn updates(message: &Message, agent: &Agent) -> Vec<Value> {
    let text = message.content.as_deref().unwrap_or("");
    let chunk =
        |kind: &str| json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}});
    match message.role {
        Role::User if !text.is_empty() => vec![chunk("user_message_chunk")],
        Role::Assistant => {
            let mut updates: Vec<Value> = (!text.is_empty())
                .then(|| chunk("agent_message_chunk"))
                .into_iter()
                .collect();
            for call in &message.tool_calls {
                let (name, arguments) = (&call.name, Some(call.arguments.as_str()));
                let summary = preview::summary(name, &call.arguments);
                let path = path_of(name, arguments, &summary, &agent.cwd);
                updates.push(tool_call(
                    &call.id,
                    name,
                    &summary,
                    path.as_deref(),
                    arguments,
                ));
            }
            updates
        }
        Role::Tool => {
            let id = message.tool_call_id.as_deref().unwrap_or("");
            let status = match text.starts_with("Error") || text.starts_with("[not run") {
                true => "failed",
                false => "completed",
            };
            vec![json!({
                "sessionUpdate": "tool_call_update", "toolCallId": id, "status": status,
                "content": [text_content(text)],
            })]
        }
        _ => Vec::new(),
    }
}
