//! The blocking reader of a streamed chat-completions reply (Server-Sent Events): `llm.rs` hands
//! it the body of a 200; `read_stream` reads it line by line, passes text and reasoning on as
//! they arrive and puts the tool calls together (`wire::Calls`) into one `Reply`. `Parser`
//! absorbs how providers differ from OpenAI's shape (`fixtures/sse/`). Bounded: `MAX_LINE` and
//! `MAX_REPLY` in bytes, `http::Limits` in time (`tools/support/clocked.rs`); a chunk it
//! cannot read fails the reply. No network I/O, no retries, no parsing of tool arguments.

use crate::client::http::Limits;
use crate::client::wire::{self, Calls, Chunk, WireChoice, WireToolCall};
use crate::core::event::{Broke, Error, Event};
use crate::core::message::{Reply, Usage};
use crate::tools::support::clocked::{Clocked, Expired};
use crate::tools::support::json_depth::JsonDepth;
use crate::tools::support::{provider_errors::json_error_message, tokens::reported};
use std::borrow::Cow;
use std::io::{BufRead, Read};
use std::sync::atomic::{AtomicBool, Ordering};

/// A line longer than this is not a provider's: the attempt fails rather than fill memory.
pub(crate) const MAX_LINE: usize = 16 << 20;
/// The most bytes one reply's stream may send in all, every byte counted (`read_lines`).
pub const MAX_REPLY: usize = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// After `data: [DONE]`.
    Done,
}

/// Read a whole reply from `reader`, calling `on_delta` for every piece of text or reasoning.
pub fn read_stream(
    reader: &mut dyn BufRead,
    cancel: &AtomicBool,
    limits: &Limits,
    on_delta: &mut dyn FnMut(Event),
) -> Result<Reply, Error> {
    let mut parser = Parser::default();
    let mut feed = |line: &str| parser.feed_line(line, on_delta);
    read_lines(reader, cancel, limits, &mut feed)?;
    parser.finish(on_delta)
}

/// Hand `feed` each line, bounded, until the input ends or `feed` says `Done` (every dialect's
/// parser is fed by this one loop: `extras/dialect.rs`).
pub(crate) fn read_lines(
    reader: &mut dyn BufRead,
    cancel: &AtomicBool,
    limits: &Limits,
    feed: &mut dyn FnMut(&str) -> Result<Flow, Error>,
) -> Result<(), Error> {
    let mut reader = Clocked::new(reader, limits.idle, limits.deadline);
    let (mut buf, mut kept) = (Vec::new(), 0);
    loop {
        buf.clear();
        let mut line = (&mut reader).take(MAX_LINE as u64);
        let read = line.read_until(b'\n', &mut buf);
        let read = match (read, reader.expired()) {
            (_, Some(Expired::Deadline)) => return Err(Error::Stream(Broke::Deadline)),
            (_, Some(Expired::Idle(idle))) => return Err(Error::Stream(Broke::Idle(idle))),
            (Err(e), None) => return Err(Error::Stream(Broke::Io(e))),
            (Ok(read), None) => read,
        };
        if read == 0 {
            return Ok(());
        }
        // Every byte counts (names, ids, JSON, comments): memory follows what arrived.
        keep(&mut kept, read)?;
        if read == MAX_LINE && !buf.ends_with(b"\n") {
            return Err(Error::Stream(Broke::TooLarge("a line")));
        }
        let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.starts_with(b"data:") {
            reader.data_arrived();
        }
        // `from_utf8` first: see DESIGN.md, "SSE chunks".
        let line = match std::str::from_utf8(line) {
            Ok(line) => Cow::Borrowed(line),
            Err(_) => String::from_utf8_lossy(line),
        };
        let flow = feed(&line)?;
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        if flow == Flow::Done {
            return Ok(());
        }
    }
}

/// The pure, line-fed state machine `read_stream` drives.
#[derive(Default)]
pub(crate) struct Parser {
    /// The `data:` lines of the event being read, joined with `\n`.
    data: String,
    /// The event was announced with `event: error`.
    error_event: bool,
    done: bool,
    reply: Reply,
    calls: Calls,
    /// How deep in JSON `data` is, so an event without a blank line is seen to end.
    data_depth: JsonDepth,
}

impl Parser {
    /// Feed one line without its line terminator (the caller strips "\n" / "\r\n").
    pub(crate) fn feed_line(
        &mut self,
        line: &str,
        on_delta: &mut dyn FnMut(Event),
    ) -> Result<Flow, Error> {
        if line.is_empty() {
            return self.dispatch(on_delta);
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        // Comments (`: keep-alive`), `id:` and `retry:` mean nothing to us.
        if field != "data" && field != "event" {
            return Ok(Flow::Continue);
        }
        // Some servers never send the blank line: buffered data that is already a complete
        // JSON value (or `[DONE]`) is an event of its own.
        if !self.data.is_empty() && !self.data_is_open() && self.dispatch(on_delta)? == Flow::Done {
            return Ok(Flow::Done);
        }
        if field == "event" {
            self.error_event = value == "error";
            return Ok(Flow::Continue);
        }
        if !self.data.is_empty() {
            self.data.push('\n');
        }
        self.data.push_str(value);
        if self.data.len() > MAX_LINE {
            return Err(Error::Stream(Broke::TooLarge("an event")));
        }
        Ok(Flow::Continue)
    }

    /// Call at end of input: flushes a pending event, then decides the reply or `Ended`.
    pub(crate) fn finish(mut self, on_delta: &mut dyn FnMut(Event)) -> Result<Reply, Error> {
        // A chunk the end of input cut short is a broken stream, not a malformed chunk.
        if self.data_is_open() {
            return Err(Error::Stream(Broke::Ended));
        }
        self.dispatch(on_delta)?;
        if !self.done && self.reply.finish_reason.is_none() {
            return Err(Error::Stream(Broke::Ended));
        }
        self.reply.tool_calls = self.calls.in_index_order();
        Ok(self.reply)
    }

    /// Whether the buffered data is an unfinished JSON value that more `data:` lines would
    /// continue. Counted only when asked, and then only the part not counted yet.
    fn data_is_open(&mut self) -> bool {
        self.data_depth.update(&self.data);
        self.data_depth.is_open()
    }

    /// Handle the buffered event (if any) and start a new one.
    fn dispatch(&mut self, on_delta: &mut dyn FnMut(Event)) -> Result<Flow, Error> {
        // Taken out and put back so the chunk can borrow the text while the reply is updated.
        let data = std::mem::take(&mut self.data);
        let flow = match data.is_empty() {
            true => Ok(Flow::Continue),
            false => self.apply_event(&data, on_delta),
        };
        self.data = data;
        self.data.clear();
        self.data_depth = JsonDepth::default();
        self.error_event = false;
        flow
    }

    fn apply_event(&mut self, data: &str, on_delta: &mut dyn FnMut(Event)) -> Result<Flow, Error> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(Flow::Done);
        }
        let chunk = match serde_json::from_str::<Chunk>(data) {
            Ok(chunk) if chunk.error.is_none() && !self.error_event => chunk,
            // Skipping it would run a call or print an answer with a piece missing; its start
            // is enough to recognise it.
            Err(_) if !self.error_event => {
                let start = data.trim().chars().take(80).collect();
                return Err(Error::Stream(Broke::Malformed(start)));
            }
            _ => {
                let said = json_error_message(data).unwrap_or_else(|| data.trim().to_string());
                return Err(Error::Stream(Broke::Provider(said)));
            }
        };
        let mut choice = wire::first_choice(chunk.choices);
        let in_choice = choice.as_mut().and_then(|choice| choice.usage.take());
        if let Some(usage) = chunk.usage.or(in_choice.map(|usage| *usage)) {
            let nested = usage.prompt_tokens_details.and_then(|d| d.cached_tokens);
            let flat = usage.cached_tokens.or(usage.prompt_cache_hit_tokens);
            self.reply.usage = Some(Usage {
                prompt_tokens: reported(usage.prompt_tokens.as_ref()),
                completion_tokens: reported(usage.completion_tokens.as_ref()),
                cached_tokens: reported(nested.or(flat).as_ref()),
                cost: usage.cost.and_then(|cost| cost.as_f64()),
                cache_write_tokens: 0,
            });
        }
        if let Some(choice) = choice {
            self.apply_choice(choice, on_delta);
        }
        Ok(Flow::Continue)
    }

    fn apply_choice(&mut self, choice: WireChoice, on_delta: &mut dyn FnMut(Event)) {
        if let Some(delta) = choice.delta {
            let reasoning = delta.reasoning_content.or(delta.reasoning);
            if let Some(piece) = reasoning.filter(|s| !s.is_empty()) {
                self.reply.reasoning.push_str(&piece);
                on_delta(Event::Reasoning(&piece));
            }
            if let Some(piece) = delta.content.filter(|s| !s.is_empty()) {
                self.reply.text.push_str(&piece);
                on_delta(Event::Text(&piece));
            }
            // llama-cpp-python sends each piece twice, here and in the legacy `function_call`:
            // where `tool_calls` is present, it is the one to read.
            let legacy = delta.function_call.filter(|_| delta.tool_calls.is_none());
            let legacy = legacy.map(|function| WireToolCall {
                function: Some(*function),
                ..WireToolCall::default()
            });
            for fragment in delta.tool_calls.into_iter().flatten().chain(legacy) {
                self.calls.merge(fragment, on_delta);
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.reply.finish_reason = Some(reason);
        }
    }
}

/// Past `MAX_REPLY` in all the attempt fails, so an endless reply cannot fill memory.
pub(crate) fn keep(kept: &mut usize, bytes: usize) -> Result<(), Error> {
    *kept += bytes;
    match *kept > MAX_REPLY {
        true => Err(Error::Stream(Broke::TooLarge("the whole"))),
        false => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::ToolCall;
    use std::io::Cursor;

    /// The event bound is exact: 16 MiB of data over two `data:` lines (joined by `\n`) is
    /// read on, one byte more is refused (`>` as `==` once let a 1 GiB event through).
    #[test]
    fn an_event_is_bounded_at_exactly_max_line() {
        let head = "{\"a\":\"";
        let feed = |total: usize| {
            let mut parser = Parser::default();
            let open = parser.feed_line(&format!("data: {head}"), &mut |_| {});
            assert!(matches!(open, Ok(Flow::Continue)));
            let rest = "x".repeat(total - head.len() - 1);
            parser.feed_line(&format!("data: {rest}"), &mut |_| {})
        };
        assert!(matches!(feed(MAX_LINE), Ok(Flow::Continue)));
        for over in [MAX_LINE + 1, MAX_LINE + 2] {
            let refused = feed(over);
            assert!(matches!(
                refused,
                Err(Error::Stream(Broke::TooLarge("an event")))
            ));
        }
    }

    /// Replay `fixtures/sse/<fixture>` through `read_stream`; also return every delta seen.
    fn replay(fixture: &str) -> (Result<Reply, Error>, Vec<String>) {
        let path = format!("{}/fixtures/sse/{fixture}", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).expect("fixture is readable");
        let mut seen = Vec::new();
        let mut on_delta = |delta: Event| match delta {
            Event::Text(text) => seen.push(format!("text:{text}")),
            Event::Reasoning(text) => seen.push(format!("reasoning:{text}")),
            Event::CallReady(call) => seen.push(format!("ready:{}:{}", call.name, call.arguments)),
            _ => {}
        };
        let result = read_stream(
            &mut Cursor::new(bytes),
            &AtomicBool::new(false),
            &Limits::NONE,
            &mut on_delta,
        );
        (result, seen)
    }

    fn check(fixture: &str) -> Result<Reply, Error> {
        replay(fixture).0
    }

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    fn usage(prompt_tokens: u64, completion_tokens: u64, cached_tokens: u64) -> Option<Usage> {
        Some(Usage {
            prompt_tokens,
            completion_tokens,
            cached_tokens,
            ..Usage::default()
        })
    }

    fn text_reply(text: &str, finish_reason: &str, usage: Option<Usage>) -> Reply {
        let finish_reason = Some(finish_reason.to_string());
        Reply {
            text: text.into(),
            finish_reason,
            usage,
            ..Reply::default()
        }
    }

    fn calls_reply(tool_calls: Vec<ToolCall>, finish_reason: &str) -> Reply {
        let finish_reason = Some(finish_reason.to_string());
        Reply {
            tool_calls,
            finish_reason,
            ..Reply::default()
        }
    }

    #[test]
    fn captured_tool_call() {
        let args = r#"{"file_path": "mock-file_path"}"#;
        let mut want = calls_reply(
            vec![call("call_c404bb347ab44ccfac02e035", "read_file", args)],
            "tool_calls",
        );
        want.usage = usage(3, 7, 0);
        assert_eq!(check("openai-compatible-tool-call.sse").unwrap(), want);
    }

    #[test]
    fn captured_text_arrives_in_order() {
        let (result, seen) = replay("openai-compatible-text-after-tool.sse");
        let text = "Hello! gpt-4o received: read the file hello";
        assert_eq!(result.unwrap(), text_reply(text, "stop", usage(4, 10, 0)));
        let pieces = [
            "Hello! ",
            "gpt-4o ",
            "received: ",
            "read ",
            "the ",
            "file ",
            "hello",
        ];
        let want: Vec<String> = pieces.iter().map(|p| format!("text:{p}")).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn llamacpp_repeated_id_and_name_are_not_doubled() {
        let mut want = calls_reply(
            vec![call("call_lc1", "read_file", r#"{"path":"a.rs"}"#)],
            "tool_calls",
        );
        want.usage = usage(20, 9, 0);
        assert_eq!(check("llamacpp-repeated-id-name.sse").unwrap(), want);
    }

    #[test]
    fn interleaved_calls_are_kept_apart() {
        let want = calls_reply(
            vec![
                call("call_a", "read_file", r#"{"path":"x"}"#),
                call("call_b", "grep", r#"{"pattern":"fn"}"#),
            ],
            "tool_calls",
        );
        assert_eq!(check("interleaved-two-calls.sse").unwrap(), want);
    }

    /// A call is announced ready, once, as soon as its arguments are a whole JSON object,
    /// while the stream goes on; an unfinished one is not.
    #[test]
    fn finished_calls_are_announced_while_the_stream_goes_on() {
        let ready = |fixture: &str| -> Vec<String> {
            let seen = replay(fixture).1;
            seen.into_iter()
                .filter(|s| s.starts_with("ready:"))
                .collect()
        };
        let index_zero = [
            r#"ready:read_file:{"path":"a"}"#,
            r#"ready:read_file:{"path":"b"}"#,
        ];
        assert_eq!(ready("all-calls-index-zero.sse"), index_zero);
        assert_eq!(ready("interleaved-two-calls.sse").len(), 2);
        let half = r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"glob","arguments":"{\"pattern\": \"*\""}}]}}]}"#;
        let mut seen = Vec::new();
        let mut parser = Parser::default();
        for line in [half, ""] {
            parser
                .feed_line(line, &mut |d| seen.push(format!("{d:?}")))
                .unwrap();
        }
        assert!(seen.is_empty(), "an unfinished call is not ready: {seen:?}");
    }

    /// Found by the fuzz target's check: text after a call's closing brace changed a call the
    /// caller had already started. An announced call stays as announced.
    #[test]
    fn an_announced_call_is_final() {
        let fragment = |args: &str| {
            let call = serde_json::json!({"index": 0, "id": "c", "function": {"name": "glob", "arguments": args}});
            format!(
                "data: {}",
                serde_json::json!({"choices": [{"delta": {"tool_calls": [call]}}]})
            )
        };
        let mut ready = Vec::new();
        let mut parser = Parser::default();
        for line in [&fragment("{}"), "", &fragment("x"), ""] {
            parser
                .feed_line(line, &mut |d| ready.push(format!("{d:?}")))
                .unwrap();
        }
        let done = r#"data: {"choices":[{"finish_reason":"tool_calls"}]}"#;
        parser.feed_line(done, &mut |_| {}).unwrap();
        let reply = parser.finish(&mut |_| {}).unwrap();
        assert_eq!(ready.len(), 1, "{ready:?}");
        assert_eq!(reply.tool_calls, [call("c", "glob", "{}")]);
    }

    #[test]
    fn missing_index_joins_the_open_call() {
        let want = calls_reply(
            vec![call("call_m", "bash", r#"{"cmd":"ls"}"#)],
            "tool_calls",
        );
        assert_eq!(check("missing-index.sse").unwrap(), want);
    }

    #[test]
    fn duplicate_entries_in_one_chunk_apply_in_order() {
        let args = r#"{"path":"b.txt"}"#;
        let want = calls_reply(vec![call("call_d", "write_file", args)], "tool_calls");
        assert_eq!(check("duplicate-entries-one-chunk.sse").unwrap(), want);
    }

    #[test]
    fn new_id_at_index_zero_starts_a_new_call() {
        let want = calls_reply(
            vec![
                call("call_one", "read_file", r#"{"path":"a"}"#),
                call("call_two", "read_file", r#"{"path":"b"}"#),
            ],
            "tool_calls",
        );
        assert_eq!(check("all-calls-index-zero.sse").unwrap(), want);
    }

    #[test]
    fn null_fields_are_absent_fields() {
        let want = text_reply("ok", "stop", None);
        assert_eq!(check("null-content-null-tool-calls.sse").unwrap(), want);
    }

    #[test]
    fn legacy_function_call_gets_a_synthesized_id() {
        let want = calls_reply(
            vec![call("call_0", "list_dir", r#"{"path":"."}"#)],
            "function_call",
        );
        assert_eq!(check("legacy-function-call.sse").unwrap(), want);
    }

    #[test]
    fn reasoning_then_tool_call() {
        let (result, seen) = replay("deepseek-reasoning-then-tool-call.sse");
        let mut want = calls_reply(
            vec![call("call_ds", "read_file", r#"{"path":"main.rs"}"#)],
            "tool_calls",
        );
        want.reasoning = "I should read the file.".into();
        want.usage = usage(100, 30, 64);
        assert_eq!(result.unwrap(), want);
        let ready = r#"ready:read_file:{"path":"main.rs"}"#;
        assert_eq!(
            seen,
            ["reasoning:I should ", "reasoning:read the file.", ready]
        );
    }

    #[test]
    fn crlf_no_space_and_comments() {
        let want = text_reply("Hi there", "stop", None);
        assert_eq!(check("crlf-nospace-keepalive.sse").unwrap(), want);
    }

    #[test]
    fn events_without_blank_lines() {
        let want = text_reply("one two", "stop", usage(5, 2, 0));
        assert_eq!(check("no-blank-lines.sse").unwrap(), want);
    }

    #[test]
    fn multi_line_data_is_one_event() {
        let want = text_reply("split event", "stop", None);
        assert_eq!(check("multi-line-data.sse").unwrap(), want);
    }

    #[test]
    fn finish_reason_without_done_is_success() {
        let want = text_reply("done soon", "length", None);
        assert_eq!(check("finish-without-done.sse").unwrap(), want);
    }

    #[test]
    fn abrupt_end_is_ended() {
        let (result, seen) = replay("abrupt-end.sse");
        assert!(matches!(result, Err(Error::Stream(Broke::Ended))));
        assert_eq!(seen, ["text:I will now"]);
    }

    #[test]
    fn error_object_inside_the_stream() {
        let err = check("error-in-stream.sse").unwrap_err();
        let Error::Stream(Broke::Provider(msg)) = err else {
            panic!("{err}")
        };
        assert_eq!(msg, "Rate limit exceeded: free-models-per-min");
    }

    #[test]
    fn error_event_with_text_error() {
        let err = check("event-error-text.sse").unwrap_err();
        let Error::Stream(Broke::Provider(msg)) = err else {
            panic!("{err}")
        };
        assert_eq!(msg, "upstream connection reset");
    }

    /// Each provider's way of reporting the cached part of the prompt (`fixtures/sse/usage-*`):
    /// OpenAI nested in a chunk of its own, DeepSeek's hit tokens, Moonshot's inside the last
    /// choice, Kimi's at the top of the usage.
    #[test]
    fn cached_tokens_are_read_in_every_shape() {
        for (fixture, want) in [
            ("usage-openai-cached.sse", usage(2006, 300, 1920)),
            ("usage-deepseek-cache-hit.sse", usage(1500, 45, 1280)),
            ("usage-moonshot-in-choice.sse", usage(3000, 20, 2816)),
            ("usage-kimi-top-level.sse", usage(1024, 12, 768)),
        ] {
            let want = text_reply("Cached prefix.", "stop", want);
            assert_eq!(check(fixture).unwrap(), want, "{fixture}");
        }
    }

    #[test]
    fn usage_with_null_fields_counts_zero() {
        let want = text_reply("x", "stop", usage(12, 0, 0));
        assert_eq!(check("usage-null-fields.sse").unwrap(), want);
    }

    /// A piece of the reply is lost: the whole reply is refused, not assembled around the gap.
    #[test]
    fn invalid_json_chunk_fails_the_reply() {
        let err = check("invalid-json-in-reply.sse").unwrap_err();
        let Error::Stream(Broke::Malformed(start)) = err else {
            panic!("{err}")
        };
        assert_eq!(start, "{not json at all");
        let only = check("invalid-json-only.sse").unwrap_err();
        assert!(matches!(only, Error::Stream(Broke::Malformed(_))), "{only}");
    }

    /// A chunk that is JSON but not a chunk's shape loses a piece just the same.
    #[test]
    fn a_chunk_of_the_wrong_shape_fails_the_reply() {
        let mut parser = Parser::default();
        let line = r#"data: {"choices":{"index":0,"delta":{"content":"lost"}}}"#;
        parser.feed_line(line, &mut |_| {}).unwrap();
        let err = parser.feed_line("", &mut |_| {}).unwrap_err();
        assert!(matches!(err, Error::Stream(Broke::Malformed(_))), "{err}");
    }

    /// Captured from llama-cpp-python 0.3.36: every piece also in `function_call`, read once.
    #[test]
    fn llamacpp_python_pieces_are_not_doubled() {
        let (result, seen) = replay("llamacpp-python-forced-tool-call.sse");
        let reply = result.unwrap();
        assert_eq!(reply.tool_calls.len(), 1, "{reply:?}");
        let call = &reply.tool_calls[0];
        assert_eq!(call.name, "read_file");
        assert!(call.id.starts_with("call__0_read_file_"), "{}", call.id);
        let args: serde_json::Value = serde_json::from_str(&call.arguments).unwrap();
        assert_eq!(args["file_path"], "test.txt", "{}", call.arguments);
        let ready: Vec<&String> = seen.iter().filter(|s| s.starts_with("ready:")).collect();
        assert_eq!(ready.len(), 1, "{seen:?}");
    }

    #[test]
    fn cancel_is_checked_after_a_line() {
        let stream = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n";
        let cancel = AtomicBool::new(true);
        let result = read_stream(
            &mut Cursor::new(stream),
            &cancel,
            &Limits::NONE,
            &mut |_| {},
        );
        assert!(matches!(result, Err(Error::Interrupted)));
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let mut stream = b"data: {\"choices\":[{\"delta\":{\"content\":\"a".to_vec();
        stream.extend_from_slice(b"\xff\"},\"finish_reason\":\"stop\"}]}\n\n");
        let cancel = AtomicBool::new(false);
        let reply = read_stream(
            &mut Cursor::new(stream),
            &cancel,
            &Limits::NONE,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(reply.text, "a\u{fffd}");
    }

    #[test]
    fn parser_reports_done_and_ignores_what_follows() {
        let mut parser = Parser::default();
        let mut ignore = |_: Event| {};
        assert_eq!(
            parser.feed_line("data: [DONE]", &mut ignore).unwrap(),
            Flow::Continue
        );
        assert_eq!(parser.feed_line("", &mut ignore).unwrap(), Flow::Done);
        let reply = parser.finish(&mut ignore).unwrap();
        assert_eq!(reply, Reply::default());
    }
}
