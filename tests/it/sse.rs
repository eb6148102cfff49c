//! Builders for the OpenAI streaming bodies the scripted server sends.
//!
//! `text` and `tool_calls` build a whole, well-formed stream the way real providers send one
//! (role chunk, deltas split into fragments, finish_reason, usage chunk, `[DONE]`); the small
//! builders (`chunk`, `call_start`, `finish`, ...) let a test hand-write an unusual stream.
//! Nothing here checks what the client does with a stream; the tests do.

use serde_json::{Value, json};

/// One `data:` event carrying `delta` for choice 0, with `finish_reason: null`.
pub fn chunk(delta: Value) -> String {
    event(
        json!([{"index": 0, "delta": delta, "finish_reason": null}]),
        None,
    )
}

/// The first chunk of every reply.
pub fn role() -> String {
    chunk(json!({"role": "assistant", "content": ""}))
}

pub fn content(text: &str) -> String {
    chunk(json!({"content": text}))
}

/// A thinking-mode delta (DeepSeek, Kimi): shown to the user, never part of the answer.
pub fn reasoning(text: &str) -> String {
    chunk(json!({"reasoning_content": text}))
}

/// The header of tool call `index`: its id and name, with empty arguments so far.
pub fn call_start(index: usize, id: &str, name: &str) -> String {
    let call = json!({"index": index, "id": id, "type": "function",
                      "function": {"name": name, "arguments": ""}});
    chunk(json!({"tool_calls": [call]}))
}

/// A fragment of tool call `index`'s arguments: only the index identifies the call.
pub fn call_args(index: usize, fragment: &str) -> String {
    let call = json!({"index": index, "function": {"arguments": fragment}});
    chunk(json!({"tool_calls": [call]}))
}

pub fn finish(reason: &str) -> String {
    event(
        json!([{"index": 0, "delta": {}, "finish_reason": reason}]),
        None,
    )
}

/// The trailing usage chunk `stream_options.include_usage` asks for: no choices at all.
pub fn usage(prompt_tokens: u64, completion_tokens: u64) -> String {
    let usage = json!({"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                       "total_tokens": prompt_tokens + completion_tokens});
    event(json!([]), Some(usage))
}

/// The same with the request's cost, as OpenRouter reports it (`usage.cost`, in US$).
pub fn usage_with_cost(prompt_tokens: u64, completion_tokens: u64, cost: f64) -> String {
    let usage = json!({"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                       "total_tokens": prompt_tokens + completion_tokens, "cost": cost});
    event(json!([]), Some(usage))
}

pub fn done() -> String {
    "data: [DONE]\n\n".to_string()
}

/// A whole plain-text answer, its content split over three deltas.
pub fn text(answer: &str) -> String {
    let mut body = role();
    for piece in pieces(answer, 3) {
        body += &content(&piece);
    }
    body + &finish("stop") + &usage(100, 20) + &done()
}

/// A whole reply made only of tool calls: `(id, name, arguments)`.
pub fn tool_calls(calls: &[(&str, &str, Value)]) -> String {
    let raw: Vec<(&str, &str, String)> = calls
        .iter()
        .map(|(id, name, args)| (*id, *name, args.to_string()))
        .collect();
    let raw: Vec<(&str, &str, &str)> = raw.iter().map(|(i, n, a)| (*i, *n, a.as_str())).collect();
    tool_calls_raw(&raw)
}

/// Like `tool_calls`, with the argument text given verbatim (so it can be broken JSON).
pub fn tool_calls_raw(calls: &[(&str, &str, &str)]) -> String {
    role() + &call_deltas(calls) + &finish("tool_calls") + &usage(100, 20) + &done()
}

/// The tool-call chunks alone, each call's arguments split over three fragments.
pub fn call_deltas(calls: &[(&str, &str, &str)]) -> String {
    let mut body = String::new();
    for (index, (id, name, args)) in calls.iter().enumerate() {
        body += &call_start(index, id, name);
        for piece in pieces(args, 3) {
            body += &call_args(index, &piece);
        }
    }
    body
}

/// Split `text` into at most `count` non-empty pieces at character boundaries.
pub fn pieces(text: &str, count: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(count.max(1)).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn event(choices: Value, usage: Option<Value>) -> String {
    let mut body = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
                          "created": 0, "model": "m", "choices": choices});
    if let Some(usage) = usage {
        body["usage"] = usage;
    }
    format!("data: {body}\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parse a built stream back into its JSON events, checking the SSE framing on the way.
    fn events(body: &str) -> Vec<Value> {
        assert!(body.ends_with("\n\n"), "every event ends with a blank line");
        body.split("\n\n")
            .filter(|e| !e.is_empty() && *e != "data: [DONE]")
            .map(|e| serde_json::from_str(e.strip_prefix("data: ").expect("data: prefix")))
            .collect::<Result<_, _>>()
            .expect("every event is JSON")
    }

    #[test]
    fn text_round_trips_through_its_deltas() {
        let answer = "héllo — wörld\nsecond line";
        let events = events(&text(answer));
        let joined: String = events
            .iter()
            .filter_map(|e| e["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(joined, answer);
        assert_eq!(
            events[events.len() - 2]["choices"][0]["finish_reason"],
            "stop"
        );
        assert_eq!(events.last().expect("usage")["usage"]["total_tokens"], 120);
    }

    #[test]
    fn tool_call_arguments_are_fragmented_and_reassemble() {
        let args = json!({"file_path": "calc.sh"});
        let events = events(&tool_calls(&[("call_1", "read_file", args.clone())]));
        let fragments: Vec<&str> = events
            .iter()
            .filter_map(|e| {
                e["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str()
            })
            .filter(|a| !a.is_empty())
            .collect();
        assert_eq!(fragments.len(), 3);
        let joined: Value = serde_json::from_str(&fragments.concat()).expect("json");
        assert_eq!(joined, args);
    }

    #[test]
    fn pieces_never_split_a_character() {
        assert_eq!(pieces("ééé", 2), vec!["éé", "é"]);
        assert_eq!(pieces("", 3), Vec::<String>::new());
        assert_eq!(pieces("ab", 3), vec!["a", "b"]);
    }
}
