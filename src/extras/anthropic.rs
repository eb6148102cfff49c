//! Anthropic's Messages API, the request side: where it goes (`{base}/v1/messages`), its
//! headers (`x-api-key`, `anthropic-version`) and the body mapped from our history, which
//! stays in chat-completions shape (`core/message.rs`) so a session resumes in any dialect.
//! The stream that comes back is read by `anthropic/stream.rs`.
//!
//! The mapping: system messages become top-level `system` blocks; a tool call becomes a
//! `tool_use` block of its assistant message, after the signed thinking blocks the reply
//! carried (`Message::thinking`, returned as received: the API rejects the next request
//! otherwise); tool results become `tool_result` blocks of one user message (`is_error` when
//! the result is a failure: an `Error`, or a command that exited non-zero or timed out); consecutive messages of one role are merged into one. Prompt
//! caching: `cache_control` on the system prompt and on the newest message's last block, so
//! each request reads the one before from the cache. Last, the shapes of the stream's events
//! that `stream.rs` reads. `dialect.rs` chooses this file; nothing here sends or reads a byte.

pub(crate) mod stream;

use crate::core::config::{Config, ToolChoice};
use crate::core::event::{Broke, Error};
use crate::core::message::{Message, Role};
use crate::tools::support::tokens::lenient;
use serde::Deserialize;
use serde_json::{Value, json};
use std::borrow::Cow;

/// The API version every request names (the only one the Messages API has).
pub(crate) const VERSION: &str = "2023-06-01";

/// `{base}/v1/messages`; a base that already ends in `/v1` gets `/messages` only.
pub(crate) fn url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    match base.ends_with("/v1") {
        true => format!("{base}/messages"),
        false => format!("{base}/v1/messages"),
    }
}

/// The key goes in `x-api-key`, never in `Authorization`; a server without a key gets none.
pub(crate) fn headers(config: &Config) -> Vec<(&'static str, String)> {
    let key = config.api_key.iter().map(|key| ("x-api-key", key.clone()));
    key.chain([("anthropic-version", VERSION.to_string())])
        .collect()
}

/// The Messages body for `messages` (our history) and `tools` (chat-completions schemas).
pub(crate) fn request_body(
    config: &Config,
    model: &str,
    messages: &[Message],
    tools: &[Value],
) -> Value {
    let mut system: Vec<Value> = Vec::new();
    let mut turns: Vec<(Role, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message.role {
            Role::System => {
                system.extend(text_block(&message.content));
                continue;
            }
            Role::User => (
                Role::User,
                text_block(&message.content).into_iter().collect(),
            ),
            Role::Assistant => (Role::Assistant, assistant_blocks(message)),
            Role::Tool => (Role::User, vec![tool_result(message)]),
        };
        match turns.last_mut() {
            // The API wants the roles to alternate: one role twice in a row is one message.
            Some((last, merged)) if *last == role => merged.extend(blocks),
            _ if blocks.is_empty() => {}
            _ => turns.push((role, blocks)),
        }
    }
    mark_for_cache(system.last_mut());
    let last_turn = turns.last_mut().and_then(|(_, blocks)| blocks.last_mut());
    mark_for_cache(last_turn.filter(|block| !is_thinking(block)));
    let turns: Vec<Value> = (turns.into_iter())
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body = json!({"model": model, "max_tokens": config.max_tokens, "messages": turns});
    if !system.is_empty() {
        body["system"] = json!(system);
    }
    if !tools.is_empty() {
        body["tools"] = tools.iter().map(tool).collect();
        if let Some(choice) = &config.tool_choice {
            body["tool_choice"] = tool_choice(choice);
        }
    }
    body["temperature"] = json!(config.temperature);
    body["stream"] = json!(true);
    body
}

/// A text block, or none for empty text (the API refuses an empty text block).
fn text_block(text: &Option<String>) -> Option<Value> {
    let text = text.as_deref().filter(|text| !text.is_empty())?;
    Some(json!({"type": "text", "text": text}))
}

/// Thinking blocks first, as the reply had them, then the text, then one `tool_use` per call.
fn assistant_blocks(message: &Message) -> Vec<Value> {
    // Responses' reasoning items (a session begun there) would be refused here.
    let thinking = message.thinking.iter().filter(|block| is_thinking(block));
    let mut blocks: Vec<Value> = thinking.cloned().collect();
    blocks.extend(text_block(&message.content));
    for call in &message.tool_calls {
        // `input` must be an object; arguments the model garbled were answered with an error.
        let input = serde_json::from_str::<Value>(&call.arguments).ok();
        let input = input.filter(Value::is_object).unwrap_or_else(|| json!({}));
        let (id, name) = (&call.id, &call.name);
        blocks.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
    }
    blocks
}

/// A tool's result; one that failed says so (`is_error`, as Claude Code marks it: the model
/// reads failure better).
fn tool_result(message: &Message) -> Value {
    let text = message.content.as_deref().unwrap_or("");
    let id = message.tool_call_id.as_deref().unwrap_or("");
    let mut block = json!({"type": "tool_result", "tool_use_id": id, "content": text});
    if failed(text) {
        block["is_error"] = json!(true);
    }
    block
}

/// `dispatch` starts a failed call's result with "Error"; `bash` ends a command that failed
/// with `[exit code: N]` (N ≠ 0) or `[timed out after …]`, before at most one more note of its
/// own (stragglers killed). The history keeps only the text, so the text is what tells.
fn failed(text: &str) -> bool {
    let code = |line: &str| {
        line.strip_prefix("[exit code: ")?
            .strip_suffix(']')?
            .parse::<i32>()
            .ok()
    };
    let timed_out = |line: &str| line.starts_with("[timed out after ") && line.ends_with("killed]");
    let ending = |line: &str| code(line).is_some() || timed_out(line);
    text.starts_with("Error") || text.lines().rev().take(2).any(ending)
}

fn is_thinking(block: &Value) -> bool {
    matches!(
        block["type"].as_str(),
        Some("thinking" | "redacted_thinking")
    )
}

/// A cache breakpoint: the prompt up to this block is written to (or read from) the cache.
fn mark_for_cache(block: Option<&mut Value>) {
    if let Some(block) = block {
        block["cache_control"] = json!({"type": "ephemeral"});
    }
}

/// `{"type": "function", "function": {name, description, parameters}}` as the API spells it.
fn tool(schema: &Value) -> Value {
    let function = &schema["function"];
    let parameters = match &function["parameters"] {
        Value::Null => json!({"type": "object", "properties": {}}),
        parameters => parameters.clone(),
    };
    json!({
        "name": function["name"],
        "description": function["description"].as_str().unwrap_or(""),
        "input_schema": parameters,
    })
}

fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({"type": "auto"}),
        ToolChoice::Required => json!({"type": "any"}),
        ToolChoice::NoCalls => json!({"type": "none"}),
        ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
    }
}

// The stream's events, as `stream.rs` reads them.

/// Only the fields read; `delta` serves both `content_block_delta` and `message_delta`.
#[derive(Deserialize)]
struct WireEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    index: Option<usize>,
    #[serde(borrow)]
    delta: Option<WireDelta<'a>>,
    content_block: Option<Value>,
    message: Option<WireMessage>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireDelta<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    signature: Option<Cow<'a, str>>,
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    usage: Option<WireUsage>,
}

/// Counts as the API reports them: `message_start` has them all, `message_delta` what changed.
#[derive(Deserialize, Default, Clone, Copy)]
struct WireUsage {
    #[serde(default, deserialize_with = "lenient")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    output_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    cache_read_input_tokens: Option<u64>,
}

/// The stop reasons the loop knows by their chat-completions names.
fn finish_reason(reason: &str) -> String {
    let reason = match reason {
        "end_turn" | "stop_sequence" => "stop",
        "tool_use" => "tool_calls",
        "max_tokens" => "length",
        other => other,
    };
    reason.to_string()
}

/// `{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`.
fn provider_error(error: Option<&Value>) -> Error {
    let error = error.cloned().unwrap_or_default();
    let message = error["message"].as_str().unwrap_or("(no message)");
    let said = match error["type"].as_str() {
        Some(kind) => format!("{kind}: {message}"),
        None => message.to_string(),
    };
    Error::Stream(Broke::Provider(said))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::ToolCall;

    fn calls(ids: &[&str]) -> Message {
        let call = |id: &&str| ToolCall {
            id: id.to_string(),
            name: "read_file".into(),
            arguments: r#"{"file_path":"a.rs"}"#.into(),
        };
        Message {
            tool_calls: ids.iter().map(call).collect(),
            ..Message::assistant("Let me look.")
        }
    }

    fn body(messages: &[Message]) -> Value {
        let schema = json!({"type": "function", "function": {"name": "read_file",
            "description": "Read a file", "parameters": {"type": "object"}}});
        request_body(&Config::default(), "claude-x", messages, &[schema])
    }

    #[test]
    fn the_url_and_headers_are_the_messages_apis() {
        assert_eq!(
            url("https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            url("http://127.0.0.1:9/v1/"),
            "http://127.0.0.1:9/v1/messages"
        );
        let config = Config {
            api_key: Some("sk-test".into()),
            ..Config::default()
        };
        let headers = headers(&config);
        assert_eq!(headers[0], ("x-api-key", "sk-test".to_string()));
        assert_eq!(headers[1], ("anthropic-version", VERSION.to_string()));
        assert_eq!(super::headers(&Config::default()).len(), 1);
    }

    #[test]
    fn system_tools_and_the_required_fields() {
        let body = body(&[Message::system("Be brief."), Message::user("hi")]);
        assert_eq!(body["system"][0]["text"], "Be brief.");
        assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
        assert_eq!(
            (body["max_tokens"].as_u64(), &body["stream"]),
            (Some(4096), &json!(true))
        );
        let tool = &body["tools"][0];
        assert_eq!(tool["name"], "read_file");
        assert_eq!(tool["input_schema"], json!({"type": "object"}));
        assert!(tool.get("function").is_none(), "{tool}");
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 1, "the system prompt is not a message");
        assert_eq!(
            messages[0]["content"][0]["cache_control"]["type"],
            "ephemeral"
        );
    }

    /// A command that exited non-zero or timed out failed, as an `Error` did; output that only
    /// mentions an exit code, or a command that exited 0, did not.
    #[test]
    fn a_failed_command_is_a_failed_result() {
        let failures = [
            "Error: no such file",
            "out\n[stderr]\nerr\n[exit code: 3]",
            "[exit code: 2]",
            "[timed out after 30s; process group killed]",
            "x\n[exit code: 1]\n[background processes still holding the output were killed]",
        ];
        assert!(failures.iter().all(|text| failed(text)), "{failures:?}");
        let fine = [
            "fn main() {}",
            "(no output)",
            "[exit code: 3] was printed\nand then 0",
        ];
        assert!(!fine.iter().any(|text| failed(text)), "{fine:?}");
    }

    /// Two results in a row are one user message of two `tool_result` blocks; the failed one
    /// says so; the next task joins that same user message.
    #[test]
    fn calls_and_results_map_to_blocks() {
        let body = body(&[
            Message::system("s"),
            Message::user("read both"),
            calls(&["t1", "t2"]),
            Message::tool_result("t1", "fn main() {}"),
            Message::tool_result("t2", "Error: no such file"),
            Message::user("and now?"),
        ]);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3, "{messages:#?}");
        let assistant = &messages[1]["content"];
        assert_eq!(
            assistant[0],
            json!({"type": "text", "text": "Let me look."})
        );
        assert_eq!(assistant[1]["type"], "tool_use");
        assert_eq!(assistant[1]["input"], json!({"file_path": "a.rs"}));
        assert_eq!(assistant[2]["id"], "t2");
        let results = messages[2]["content"].as_array().unwrap();
        assert_eq!(
            (messages[2]["role"].as_str(), results.len()),
            (Some("user"), 3)
        );
        assert_eq!(results[0]["tool_use_id"], "t1");
        assert!(results[0].get("is_error").is_none());
        assert_eq!(results[1]["is_error"], true);
        assert_eq!(results[2]["text"], "and now?");
        assert_eq!(results[2]["cache_control"]["type"], "ephemeral");
        assert!(results[1].get("cache_control").is_none());
    }

    #[test]
    fn thinking_goes_back_first_and_as_received() {
        let signed = json!({"type": "thinking", "thinking": "hmm", "signature": "c2ln"});
        let redacted = json!({"type": "redacted_thinking", "data": "ZW5j"});
        let mut assistant = calls(&["t1"]);
        let reasoning = json!({"type": "reasoning", "summary": [], "encrypted_content": "gAAA"});
        assistant.thinking = vec![signed.clone(), reasoning, redacted.clone()];
        assistant.content = None;
        let body = body(&[
            Message::user("go"),
            assistant,
            Message::tool_result("t1", "ok"),
        ]);
        let blocks = &body["messages"][1]["content"];
        assert_eq!((&blocks[0], &blocks[1]), (&signed, &redacted));
        assert_eq!(blocks[2]["type"], "tool_use");
    }

    #[test]
    fn empty_text_and_garbled_arguments_still_make_a_valid_request() {
        let mut garbled = calls(&["t1"]);
        garbled.tool_calls[0].arguments = "{not json".into();
        garbled.content = Some(String::new());
        let body = body(&[Message::user("x"), Message::assistant(""), garbled]);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 2, "{messages:#?}");
        assert_eq!(messages[1]["content"][0]["input"], json!({}));
    }
}
