//! What a 200 answer carries when it is not an event stream: a whole (non-streamed)
//! `chat.completion`, a JSON error, a web page from a proxy or a wrong base URL, or anything else.
//!
//! Part of `Llm` (see `llm.rs`): `attempt` reads the first line of a 200 body and asks
//! `is_event_stream` whether it goes to the SSE reader. A whole completion becomes a `Reply`;
//! the rest fail at once with what the server said, since sending the same request again would
//! get the same page. It does not read event streams; `sse.rs` does.

use super::Failure;
use crate::core::event::Error;
use crate::core::event::Event;
use crate::core::http;
use crate::core::message::{Reply, ToolCall, Usage};
use serde_json::Value;
use std::io::{BufRead, Read};

/// A whole answer is read up to this size; more than any real completion, and bounded.
const WHOLE_BODY_LIMIT: u64 = 16 * 1024 * 1024;
/// Blank lines read before the first line that says what the body is.
const LEADING_BLANK_LINES: usize = 8;

/// The start of a 200 body: its first line that is not blank (with the blank ones before it),
/// `WHOLE_BODY_LIMIT` bytes at most in all.
pub(super) fn first_line(body: &mut dyn BufRead) -> std::io::Result<Vec<u8>> {
    let mut start = Vec::new();
    for _ in 0..LEADING_BLANK_LINES {
        let room = WHOLE_BODY_LIMIT.saturating_sub(start.len() as u64);
        let read = (&mut *body).take(room).read_until(b'\n', &mut start)?;
        if read == 0 || !start.trim_ascii().is_empty() {
            break;
        }
    }
    Ok(start)
}

/// Whether a body that starts with `start` is an event stream, whatever its content type says
/// (an empty body is left to the SSE reader, which calls it a broken stream).
pub(super) fn is_event_stream(content_type: &str, start: &[u8]) -> bool {
    let start = String::from_utf8_lossy(start.trim_ascii_start());
    let start = start.trim_start_matches('\u{feff}');
    let is_event = ["data:", "event:", "id:", "retry:", ":"]
        .iter()
        .any(|field| start.starts_with(field));
    is_event || start.is_empty() || content_type.contains("text/event-stream")
}

/// The rest of a body that is not a stream, after its `start`, as text: `WHOLE_BODY_LIMIT`
/// bytes at most in all, however much the server sends.
pub(super) fn read_whole(start: &[u8], body: &mut dyn BufRead) -> String {
    let mut bytes = start.to_vec();
    let room = WHOLE_BODY_LIMIT.saturating_sub(bytes.len() as u64);
    let _ = (&mut *body).take(room).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// A body that is not a stream: a whole completion becomes the reply; anything else fails at
/// once with what the server said.
pub(super) fn whole_answer(
    content_type: &str,
    text: &str,
    on_event: &mut dyn FnMut(Event),
) -> Result<Reply, Failure> {
    let fail = |why: String| Err(Failure::Fatal(Error::Api(why)));
    let json: Option<Value> = serde_json::from_str(text).ok();
    match json {
        Some(json) if json.get("error").is_some_and(|e| !e.is_null()) => {
            let message = http::headline(&http::message_in(text));
            fail(format!("the server answered with an error: {message}"))
        }
        Some(json) if json["choices"][0]["message"].is_object() => {
            Ok(completion_reply(&json, on_event))
        }
        _ if content_type.contains("html") || text.starts_with('<') => {
            let title = http::html_title(text).unwrap_or("no title");
            let kind = if content_type.is_empty() {
                "text/html"
            } else {
                content_type
            };
            fail(format!(
                "the server answered {kind} ({title}), not an event stream: check the base URL"
            ))
        }
        _ => {
            let kind = if content_type.is_empty() {
                "no content type"
            } else {
                content_type
            };
            fail(format!(
                "the server answered {kind}, not an event stream ({}): check the base URL",
                http::headline(text)
            ))
        }
    }
}

/// A non-streamed `chat.completion` (some servers ignore `stream: true`), shown as it would
/// have streamed.
fn completion_reply(json: &Value, on_event: &mut dyn FnMut(Event)) -> Reply {
    let choice = &json["choices"][0];
    let message = &choice["message"];
    let text_of = |field: &str| message[field].as_str().unwrap_or("").to_string();
    let reasoning = text_of("reasoning_content");
    let text = text_of("content");
    if !reasoning.is_empty() {
        on_event(Event::Reasoning(&reasoning));
    }
    if !text.is_empty() {
        on_event(Event::Text(&text));
    }
    let calls = message["tool_calls"].as_array().map(Vec::as_slice);
    let tool_calls = (calls.unwrap_or_default().iter().enumerate())
        .map(|(n, call)| ToolCall {
            id: (call["id"].as_str().filter(|id| !id.is_empty()))
                .map_or(format!("call_{n}"), String::from),
            name: call["function"]["name"].as_str().unwrap_or("").to_string(),
            arguments: call["function"]["arguments"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        })
        .collect();
    let count = |field: &str| json["usage"][field].as_u64();
    let usage = count("prompt_tokens").map(|prompt_tokens| Usage {
        prompt_tokens,
        completion_tokens: count("completion_tokens").unwrap_or(0),
        cached_tokens: json["usage"]["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap_or(0),
        cost: json["usage"]["cost"].as_f64(),
    });
    Reply {
        text,
        reasoning,
        tool_calls,
        finish_reason: choice["finish_reason"].as_str().map(String::from),
        usage,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn judge(content_type: &str, body: &str) -> Option<Result<Reply, String>> {
        let mut body = Cursor::new(body.as_bytes().to_vec());
        let start = first_line(&mut body).unwrap();
        if is_event_stream(content_type, &start) {
            return None;
        }
        let text = read_whole(&start, &mut body);
        let outcome = whole_answer(content_type, &text, &mut |_| {});
        Some(outcome.map_err(|failure| match failure {
            Failure::Fatal(error) => error.to_string(),
            _ => "not fatal".to_string(),
        }))
    }

    #[test]
    fn event_streams_go_to_the_sse_reader_whatever_their_type() {
        assert!(judge("text/event-stream", "{\"error\": 1}").is_none());
        assert!(judge("application/json", "data: {}\n\n").is_none());
        assert!(judge("text/plain", ": keep-alive\n").is_none());
        assert!(judge("", "").is_none());
        assert!(judge("", "\n\n\ndata: {}\n").is_none());
        assert!(judge("", "\n\n<html></html>").is_some());
    }

    #[test]
    fn pages_and_errors_fail_with_what_they_say() {
        let page = "<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head></html>\n";
        let why = judge("text/html", page).unwrap().unwrap_err();
        assert!(why.contains("text/html (Welcome to nginx!)"), "{why}");
        assert!(why.contains("check the base URL"), "{why}");
        let error = r#"{"error": {"message": "model 'x' not loaded", "code": 400}}"#;
        let why = judge("application/json", error).unwrap().unwrap_err();
        assert!(why.contains("model 'x' not loaded"), "{why}");
        let why = judge("text/plain", "Not Found\n").unwrap().unwrap_err();
        assert!(
            why.contains("text/plain") && why.contains("Not Found"),
            "{why}"
        );
    }

    #[test]
    fn a_whole_completion_is_a_reply() {
        let body = r#"{"object":"chat.completion","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"glob","arguments":"{\"pattern\":\"*\"}"}}]}}],"usage":{"prompt_tokens":7,"completion_tokens":3}}"#;
        let reply = judge("application/json", body).unwrap().unwrap();
        assert_eq!(reply.tool_calls[0].id, "c1");
        assert_eq!(reply.tool_calls[0].arguments, r#"{"pattern":"*"}"#);
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(reply.usage.map(|u| u.prompt_tokens), Some(7));
    }
}
