//! Builders for the OpenAI streaming bodies the benches' server sends and the SSE bench parses.
//!
//! Each function returns whole `data:` events, shaped the way providers send them (a role chunk,
//! small deltas, tool-call fragments identified by index, finish_reason, usage, `[DONE]`).
//! Nothing here checks what a client does with them.

use serde_json::{Value, json};

pub fn chunk(delta: Value) -> String {
    event(json!([{"index": 0, "delta": delta, "finish_reason": null}]))
}

pub fn role() -> String {
    chunk(json!({"role": "assistant", "content": ""}))
}

pub fn content(text: &str) -> String {
    chunk(json!({"content": text}))
}

pub fn call_start(index: usize, id: &str, name: &str) -> String {
    let call = json!({"index": index, "id": id, "type": "function",
                      "function": {"name": name, "arguments": ""}});
    chunk(json!({"tool_calls": [call]}))
}

pub fn call_args(index: usize, fragment: &str) -> String {
    chunk(json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}))
}

/// finish_reason, the usage chunk and `[DONE]`: the end of every reply.
pub fn end(reason: &str) -> String {
    let finish = event(json!([{"index": 0, "delta": {}, "finish_reason": reason}]));
    let mut usage = json!({"id": "c", "object": "chat.completion.chunk", "created": 0,
                           "model": "m", "choices": []});
    usage["usage"] = json!({"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120});
    format!("{finish}data: {usage}\n\ndata: [DONE]\n\n")
}

/// A whole plain answer.
pub fn text(answer: &str) -> String {
    role() + &content(answer) + &end("stop")
}

/// A whole reply of tool calls `(name, arguments)`, each call's arguments in two fragments.
pub fn tool_calls(calls: &[(&str, Value)]) -> String {
    let mut body = role();
    for (index, (name, args)) in calls.iter().enumerate() {
        let args = args.to_string();
        let mut middle = args.len() / 2;
        while !args.is_char_boundary(middle) {
            middle -= 1;
        }
        let (head, tail) = args.split_at(middle);
        body += &call_start(index, &format!("call_{index}"), name);
        body += &call_args(index, head);
        body += &call_args(index, tail);
    }
    body + &end("tool_calls")
}

fn event(choices: Value) -> String {
    let body = json!({"id": "c", "object": "chat.completion.chunk", "created": 0,
                      "model": "m", "choices": choices});
    format!("data: {body}\n\n")
}
