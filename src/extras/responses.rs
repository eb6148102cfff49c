//! OpenAI's Responses API, the request side: where it goes (`{base}/responses`) and the body
//! mapped from our history, which stays in chat-completions shape (`core/message.rs`) so a
//! session resumes in any dialect. The stream that comes back is read by `responses/stream.rs`
//! (its calls put together by `responses/calls.rs`).
//!
//! The mapping: every message becomes an `input` item. System and user messages are `message`
//! items; an assistant turn is its reasoning items (`Message::thinking`, the ones of type
//! `reasoning`, sent back as received with their `encrypted_content`), then its text as a
//! `message`, then one `function_call` per call; a tool result is a `function_call_output`.
//! Calls and results are paired by `call_id`, which is our call's id. `store: false` keeps
//! nothing on OpenAI's side, so `include` asks for the encrypted reasoning the next request
//! needs. `dialect.rs` chooses this file; nothing here sends or reads a byte.

pub(crate) mod calls;
pub(crate) mod stream;
pub(crate) mod whole;

use crate::core::config::{Config, ToolChoice};
use crate::core::message::{Message, Role};
use serde_json::{Value, json};

/// `{base}/responses`, beside `{base}/chat/completions`: the same base URL serves both.
pub(crate) fn url(base: &str) -> String {
    format!("{}/responses", base.trim_end_matches('/'))
}

/// The Responses body for `messages` (our history) and `tools` (chat-completions schemas).
/// No `temperature`: the reasoning models this API is for refuse one.
pub(crate) fn request_body(
    config: &Config,
    model: &str,
    messages: &[Message],
    tools: &[Value],
) -> Value {
    let mut input = Vec::new();
    for message in messages {
        push_items(&mut input, message);
    }
    let mut body = json!({
        "model": model,
        "input": input,
        "stream": true,
        "store": false,
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": config.max_tokens,
    });
    if !tools.is_empty() {
        body["tools"] = tools.iter().map(tool).collect();
        body["tool_choice"] = match &config.tool_choice {
            Some(ToolChoice::Tool(name)) => json!({"type": "function", "name": name}),
            Some(choice) => json!(choice),
            None => return body,
        };
    }
    body
}

/// The items one message of our history becomes, in the order the API wants them.
fn push_items(input: &mut Vec<Value>, message: &Message) {
    let text = message.content.as_deref().unwrap_or("");
    let said = |role: &str| json!({"type": "message", "role": role, "content": text});
    match message.role {
        Role::System => input.push(said("system")),
        Role::User => input.push(said("user")),
        Role::Assistant => {
            // Another dialect's thinking blocks mean nothing here (a session resumed across),
            // and reasoning must come with the item it led to (a cut-off turn may have none).
            let led_to = !text.is_empty() || !message.tool_calls.is_empty();
            let reasoning = message.thinking.iter().filter(|item| is_reasoning(item));
            input.extend(reasoning.filter(|_| led_to).cloned());
            if !text.is_empty() {
                input.push(said("assistant"));
            }
            for call in &message.tool_calls {
                input.push(json!({"type": "function_call", "call_id": call.id,
                                  "name": call.name, "arguments": call.arguments}));
            }
        }
        Role::Tool => {
            let call_id = message.tool_call_id.as_deref().unwrap_or("");
            input.push(json!({"type": "function_call_output", "call_id": call_id, "output": text}));
        }
    }
}

/// A reasoning item of this API (`stream.rs` keeps only those that carry `encrypted_content`).
pub(crate) fn is_reasoning(item: &Value) -> bool {
    item["type"] == "reasoning"
}

/// `{"type": "function", "function": {name, description, parameters}}` flattened: the
/// function's own fields beside `type`. `strict: false` said outright: left out, the API makes
/// every parameter required.
fn tool(schema: &Value) -> Value {
    let mut tool = schema["function"].clone();
    if tool["parameters"].is_null() {
        tool["parameters"] = json!({"type": "object", "properties": {}});
    }
    tool["type"] = json!("function");
    tool["strict"] = json!(false);
    tool
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::ToolChoice;
    use crate::core::message::{Reply, ToolCall};

    /// An assistant turn as the loop keeps it (`Message::from_reply`): text, then `read_file`
    /// calls with these ids.
    fn calls(ids: &[&str]) -> Message {
        let (name, arguments) = ("read_file", r#"{"file_path":"a.rs"}"#);
        let tool_calls = (ids.iter())
            .map(|id| (id.to_string(), name.into(), arguments.into()))
            .map(|(id, name, arguments)| ToolCall {
                id,
                name,
                arguments,
            })
            .collect();
        let text = "Let me look.".to_string();
        Message::from_reply(&Reply {
            text,
            tool_calls,
            ..Reply::default()
        })
    }

    fn body(messages: &[Message]) -> Value {
        let schema = json!({"type": "function", "function": {"name": "read_file",
            "description": "Read a file", "parameters": {"type": "object"}}});
        let config = Config {
            tool_choice: Some(ToolChoice::Auto),
            ..Config::default()
        };
        request_body(&config, "gpt-x", messages, &[schema])
    }

    #[test]
    fn the_url_sits_beside_chat_completions() {
        assert_eq!(
            url("https://api.openai.com/v1/"),
            "https://api.openai.com/v1/responses"
        );
        assert_eq!(
            url("http://127.0.0.1:9/v1"),
            "http://127.0.0.1:9/v1/responses"
        );
    }

    #[test]
    fn stateless_streaming_with_flat_tools() {
        let body = body(&[Message::system("Be brief."), Message::user("hi")]);
        assert_eq!(
            (&body["stream"], &body["store"]),
            (&json!(true), &json!(false))
        );
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(body["max_output_tokens"], 4096);
        assert!(body.get("temperature").is_none() && body.get("messages").is_none());
        let tool = &body["tools"][0];
        assert_eq!(tool["type"], "function");
        assert_eq!(
            (&tool["name"], &tool["strict"]),
            (&json!("read_file"), &json!(false))
        );
        assert_eq!(tool["parameters"], json!({"type": "object"}));
        assert!(tool.get("function").is_none(), "{tool}");
        assert_eq!(body["tool_choice"], "auto");
        let input = body["input"].as_array().unwrap();
        assert_eq!(
            input[0],
            json!({"type": "message", "role": "system", "content": "Be brief."})
        );
        assert_eq!(input[1]["role"], "user");
        let no_parameters = super::tool(&json!({"type": "function", "function": {"name": "x"}}));
        assert_eq!(
            no_parameters["parameters"],
            json!({"type": "object", "properties": {}})
        );
        let bare = request_body(&Config::default(), "m", &[Message::user("x")], &[]);
        assert!(bare.get("tools").is_none() && bare.get("tool_choice").is_none());
    }

    /// Each call is a `function_call` and each result a `function_call_output` with the same
    /// `call_id`; the reasoning items go first, as received, and other dialects' blocks not at all.
    #[test]
    fn calls_results_and_reasoning_map_to_items() {
        let reasoning = json!({"type": "reasoning", "summary": [], "encrypted_content": "gAAA"});
        let signed = json!({"type": "thinking", "thinking": "hmm", "signature": "c2ln"});
        let mut assistant = calls(&["call_1", "call_2"]);
        assistant.thinking = vec![reasoning.clone(), signed];
        let body = body(&[
            Message::user("read both"),
            assistant,
            Message::tool_result("call_1", "fn main() {}"),
            Message::tool_result("call_2", "Error: no such file"),
            Message::assistant("Done."),
        ]);
        let input = body["input"].as_array().unwrap();
        let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
        let want = [
            "message",
            "reasoning",
            "message",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "message",
        ];
        assert_eq!(kinds, want, "{input:#?}");
        assert_eq!(input[1], reasoning);
        assert_eq!(
            input[2],
            json!({"type": "message", "role": "assistant", "content": "Let me look."})
        );
        assert_eq!(input[3]["call_id"], "call_1");
        assert_eq!(input[3]["name"], "read_file");
        assert_eq!(input[3]["arguments"], r#"{"file_path":"a.rs"}"#);
        assert_eq!(
            input[5],
            json!({"type": "function_call_output", "call_id": "call_1",
                                    "output": "fn main() {}"})
        );
        assert_eq!(input[6]["call_id"], "call_2");
    }

    /// An assistant turn of calls only has no empty message item; reasoning that led to nothing
    /// (the output limit cut the turn) is not sent alone.
    #[test]
    fn an_assistant_turn_without_text_is_its_calls_only() {
        let mut only_calls = calls(&["c"]);
        only_calls.content = None;
        let mut only_reasoning = Message::from_reply(&Default::default());
        only_reasoning.thinking = vec![json!({"type": "reasoning", "encrypted_content": "e"})];
        let body = body(&[Message::user("x"), only_calls, only_reasoning]);
        let input = body["input"].as_array().unwrap();
        assert_eq!(input.len(), 2, "{input:#?}");
        assert_eq!(input[1]["type"], "function_call");
    }
}
