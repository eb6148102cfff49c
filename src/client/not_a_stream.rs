//! A 200 that is not an event stream: a whole completion (the reply, as if it had streamed), a
//! JSON error or an HTML page (an error naming what it is). `Quirks::not_a_stream` reads the
//! first line of every 200; an event stream goes back to the SSE reader untouched.

use crate::client::quirks::Quirks;
use crate::client::sse::Parser;
use crate::core::event::{Broke, Error, Event};
use crate::core::message::Reply;
use crate::tools::support::{provider_errors, text};
use serde_json::Value;
use std::io::{BufRead, Read};
use ureq::http::HeaderMap;

/// A body that is not a stream is read up to this size; more than any real completion.
const WHOLE_BODY_LIMIT: u64 = 16 * 1024 * 1024;
/// Blank lines read before the first line that says what the body is.
const LEADING_BLANK_LINES: usize = 8;

impl Quirks {
    /// A 200 whose first line (read into `start`) is not an event: its whole body is read here
    /// (to `--trace` too). A whole `chat.completion` (some servers ignore `stream: true`) is the
    /// reply; anything else fails at once with what the server said, as the same request would
    /// get the same page; a read that fails is a broken stream. `None` for an event stream, left
    /// to the caller.
    pub(crate) fn not_a_stream(
        &self,
        headers: &HeaderMap,
        body: &mut dyn BufRead,
        start: &mut Vec<u8>,
        trace: &dyn Fn(&str, &str),
        on_event: &mut dyn FnMut(Event),
    ) -> Option<Result<Reply, Error>> {
        *start = match first_line(body) {
            Ok(start) => start,
            Err(e) => return Some(Err(Error::Stream(Broke::Io(e)))),
        };
        let content_type = headers.get("content-type").and_then(|v| v.to_str().ok());
        let content_type = &content_type.unwrap_or("").to_ascii_lowercase();
        if is_event_stream(content_type, start) {
            return None;
        }
        let text = read_whole(start, body);
        trace(content_type, &text);
        let reply = whole_completion(&text, on_event);
        Some(reply.ok_or_else(|| not_a_stream(content_type, &text)))
    }
}

/// The start of a 200 body: its first line that is not blank (with the blank ones before it),
/// `WHOLE_BODY_LIMIT` bytes at most in all.
fn first_line(body: &mut dyn BufRead) -> std::io::Result<Vec<u8>> {
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

/// Whether a body that starts with `start` is an event stream, whatever its content type says.
/// An empty body or a bare JSON object is not, even as `text/event-stream` (LiteLLM's error,
/// llama-cpp-python's nothing when its tool-call handler fails): the same request gets the same.
fn is_event_stream(content_type: &str, start: &[u8]) -> bool {
    let start = String::from_utf8_lossy(start.trim_ascii_start());
    let start = start.trim_start_matches('\u{feff}');
    let fields = ["data:", "event:", "id:", "retry:", ":"];
    let is_event = fields.iter().any(|field| start.starts_with(field));
    let said_so = content_type.contains("text/event-stream");
    is_event || (said_so && !start.is_empty() && !start.starts_with('{'))
}

/// The rest of a body that is not a stream, after its `start`, as text: `WHOLE_BODY_LIMIT`
/// bytes at most in all, however much the server sends.
fn read_whole(start: &[u8], body: &mut dyn BufRead) -> String {
    let mut bytes = start.to_vec();
    let room = WHOLE_BODY_LIMIT.saturating_sub(bytes.len() as u64);
    let _ = (&mut *body).take(room).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// A whole `chat.completion`, fed to the SSE parser as one event (its `message` has a delta's
/// shape), so the caller sees it as if it had streamed; `None` if it is not one.
fn whole_completion(text: &str, on_delta: &mut dyn FnMut(Event)) -> Option<Reply> {
    let json: Value = serde_json::from_str(text).ok()?;
    let error = json.get("error").is_some_and(|e| !e.is_null());
    if error || !json["choices"][0]["message"].is_object() {
        return None;
    }
    // One event (its lines are one `data:` field), then the end: nothing follows.
    let mut parser = Parser::default();
    let lines = text.split('\n').map(|line| format!("data: {line}"));
    for line in lines.chain(["".to_string(), "data: [DONE]".to_string()]) {
        parser.feed_line(&line, on_delta).ok()?;
    }
    parser.finish(on_delta).ok()
}

/// A body that is neither a stream nor a whole completion, as the error the user reads.
fn not_a_stream(content_type: &str, text: &str) -> Error {
    let fail = Error::Api;
    let json: Option<Value> = serde_json::from_str(text).ok();
    match json {
        Some(json) if json.get("error").is_some_and(|e| !e.is_null()) => {
            let message = text::headline(&provider_errors::message_in(text));
            fail(format!("the server answered with an error: {message}"))
        }
        _ if text.is_empty() => fail(format!(
            "the server answered 200 with an empty body ({}): see CORECODER_TOOL_CHOICE",
            or(content_type, "no content type")
        )),
        _ if content_type.contains("html") || text.starts_with('<') => {
            let (kind, title) = (or(content_type, "text/html"), text::html_title(text));
            let title = title.unwrap_or("no title");
            fail(format!(
                "the server answered {kind} ({title}), not an event stream: check the base URL"
            ))
        }
        _ => fail(format!(
            "the server answered {}, not an event stream ({}): check the base URL",
            or(content_type, "no content type"),
            text::headline(text)
        )),
    }
}

/// `text`, or `otherwise` when it is empty.
fn or<'a>(text: &'a str, otherwise: &'a str) -> &'a str {
    if text.is_empty() { otherwise } else { text }
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
        let outcome = whole_completion(&text, &mut |_| {});
        Some(outcome.ok_or_else(|| not_a_stream(content_type, &text).to_string()))
    }

    #[test]
    fn event_streams_go_to_the_sse_reader_whatever_their_type() {
        assert!(judge("text/event-stream", "{\"error\": 1}").is_some());
        assert!(judge("text/event-stream", "").is_some());
        assert!(judge("text/event-stream", "\n\nx\n").is_none());
        assert!(judge("application/json", "data: {}\n\n").is_none());
        assert!(judge("text/plain", ": keep-alive\n").is_none());
        assert!(judge("", "").is_some());
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
