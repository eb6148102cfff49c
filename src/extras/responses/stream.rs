//! OpenAI's Responses API, the stream side: the typed events of one response put together into
//! the `Reply` the chat-completions parser makes, fed line by line by `client/sse.rs`'s reader.
//!
//! Text and the reasoning summary (shown dimmed) are passed on as they arrive; the
//! `function_call` items are put together by `calls.rs`, each announced ready once its
//! arguments close. A reasoning item with `encrypted_content` is kept in `Reply::thinking`,
//! without the `id` that `store: false` leaves pointing at nothing, to go back next request.
//! `response.completed` or `.incomplete` ends the reply (cut off, as chat completions'
//! `length`, when the output limit was why); `response.failed` and `error` fail it. What the
//! deltas built is held to what the stream says was whole (`whole.rs`): a reply that lost an
//! event on the way is broken. Nothing here opens a connection or retries.

use crate::client::sse::{Flow, MAX_LINE, keep};
use crate::core::event::{Broke, Error, Event};
use crate::core::message::{Reply, Usage};
use crate::extras::responses::whole::{Whole, output_agrees};
use crate::extras::responses::{calls::Calls, is_reasoning};
use crate::tools::support::tokens::reported;
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;

/// The line-fed state machine for one response.
#[derive(Default)]
pub(crate) struct Parser {
    /// An event whose `data:` lines are not a whole JSON value yet (rare: OpenAI sends one line).
    data: String,
    reply: Reply,
    calls: Calls,
    /// `response.completed` or `.incomplete` arrived: the reply is whole.
    ended: bool,
    /// Held to what the stream says the whole was.
    whole: Whole,
    /// The ended response's `output`, to hold the reply to once its calls are put together.
    output: Value,
    /// Bytes kept so far, against `sse::MAX_REPLY` (`sse::keep`).
    kept: usize,
}

/// Only the fields read, borrowed where a delta is (this runs for every delta).
#[derive(Deserialize)]
struct WireEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    delta: Option<Cow<'a, str>>,
    #[serde(borrow)]
    item_id: Option<Cow<'a, str>>,
    output_index: Option<u64>,
    summary_index: Option<u64>,
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
    /// A part's whole text, in `output_text.done` / `refusal.done`.
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    refusal: Option<Cow<'a, str>>,
    sequence_number: Option<u64>,
    /// Only in `output_item.added` / `.done` and the four events of the whole `response`.
    item: Option<Value>,
    response: Option<Value>,
    /// The `error` event's.
    message: Option<String>,
}

impl Parser {
    /// Feed one line without its terminator; `Flow::Done` once the response has ended.
    pub(crate) fn feed_line(
        &mut self,
        line: &str,
        on_delta: &mut dyn FnMut(Event),
    ) -> Result<Flow, Error> {
        // `event:` repeats the data's `type`; `id:`, `retry:` and comments say nothing to us.
        let Some(value) = line.strip_prefix("data:") else {
            return match line.is_empty() && !self.data.is_empty() {
                true => Err(Error::Stream(Broke::Malformed(start_of(&self.data)))),
                false => Ok(Flow::Continue),
            };
        };
        let value = value.strip_prefix(' ').unwrap_or(value);
        if self.data.is_empty() {
            return self.apply(value, on_delta);
        }
        // A value spread over several `data:` lines is one event, joined with `\n`.
        let mut data = std::mem::take(&mut self.data);
        data.push('\n');
        data.push_str(value);
        self.apply(&data, on_delta)
    }

    /// At the end of input: the reply, if the response ended; else `Ended`.
    pub fn finish(self, _on_delta: &mut dyn FnMut(Event)) -> Result<Reply, Error> {
        if !self.ended {
            return Err(Error::Stream(Broke::Ended));
        }
        let mut reply = self.reply;
        reply.tool_calls = self.calls.into_calls();
        output_agrees(&self.output, &reply.text, &reply.tool_calls)?;
        Ok(reply)
    }

    /// One event's data: parsed and applied, or kept for more lines if it is cut short.
    fn apply(&mut self, data: &str, on_delta: &mut dyn FnMut(Event)) -> Result<Flow, Error> {
        if data.trim() == "[DONE]" {
            return Ok(Flow::Done);
        }
        let event = match serde_json::from_str::<WireEvent>(data) {
            Ok(event) => event,
            Err(_) if data.len() > MAX_LINE => {
                return Err(Error::Stream(Broke::TooLarge("an event")));
            }
            Err(e) if e.is_eof() => {
                self.data = data.to_string();
                return Ok(Flow::Continue);
            }
            // An event we do not read may have any shape; one we read must have ours.
            Err(_) => {
                let kind = serde_json::from_str::<Value>(data).map(|v| v["type"].clone());
                return match kind
                    .as_ref()
                    .map(|kind| is_read(kind.as_str().unwrap_or("")))
                {
                    Ok(false) => Ok(Flow::Continue),
                    _ => Err(Error::Stream(Broke::Malformed(start_of(data)))),
                };
            }
        };
        self.event(event, data.len(), on_delta)
    }

    fn event(
        &mut self,
        event: WireEvent,
        size: usize,
        on_delta: &mut dyn FnMut(Event),
    ) -> Result<Flow, Error> {
        self.whole.sequence(event.sequence_number)?;
        let delta = event.delta.as_deref().unwrap_or("");
        let named = (event.item_id.as_deref(), event.output_index);
        match &*event.kind {
            "response.output_text.delta" | "response.refusal.delta" if !delta.is_empty() => {
                keep(&mut self.kept, delta.len())?;
                self.whole.delta(delta);
                self.reply.text.push_str(delta);
                on_delta(Event::Text(delta));
            }
            "response.output_text.done" | "response.refusal.done" => {
                let said = event.text.as_deref().or(event.refusal.as_deref());
                // A part that came whole, with no delta before it, is shown now.
                if let Some(part) = self.whole.part_done(said)? {
                    keep(&mut self.kept, part.len())?;
                    self.reply.text.push_str(&part);
                    on_delta(Event::Text(&part));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta"
                if !delta.is_empty() =>
            {
                keep(&mut self.kept, delta.len())?;
                self.reply.reasoning.push_str(delta);
                on_delta(Event::Reasoning(delta));
            }
            // The summary's parts are paragraphs of their own.
            "response.reasoning_summary_part.added" if event.summary_index > Some(0) => {
                self.reply.reasoning.push_str("\n\n");
                on_delta(Event::Reasoning("\n\n"));
            }
            "response.output_item.added" | "response.output_item.done" => {
                let done = event.kind.ends_with("done");
                self.item(event.item, event.output_index, done, size, on_delta)?;
            }
            "response.function_call_arguments.delta" => {
                keep(&mut self.kept, delta.len())?;
                self.calls.arguments_delta(named.0, named.1, delta);
            }
            "response.function_call_arguments.done" => {
                let arguments = event.arguments.as_deref();
                self.calls.arguments_done(named, arguments, on_delta)?;
            }
            "response.completed" | "response.incomplete" => {
                let mut response = event.response.unwrap_or_default();
                self.ended(&response);
                self.output = response["output"].take();
                return Ok(Flow::Done);
            }
            "response.failed" | "error" => {
                let response = event.response.unwrap_or_default();
                let said = response["error"]["message"].as_str().map(str::to_string);
                let said = event.message.or(said);
                let said = said.unwrap_or_else(|| format!("{} (no reason given)", event.kind));
                return Err(Error::Stream(Broke::Provider(said)));
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    /// An item began or is done: a call opens or closes; a reasoning item is kept when done.
    fn item(
        &mut self,
        item: Option<Value>,
        output_index: Option<u64>,
        done: bool,
        size: usize,
        on_delta: &mut dyn FnMut(Event),
    ) -> Result<(), Error> {
        let mut item = item.unwrap_or_default();
        let reasoning = done && is_reasoning(&item);
        if let Some(fields) = item.as_object_mut().filter(|_| reasoning) {
            if fields
                .get("encrypted_content")
                .is_some_and(Value::is_string)
            {
                keep(&mut self.kept, size)?;
                fields.remove("id");
                fields.remove("status");
                self.reply.thinking.push(item);
            }
            return Ok(());
        }
        // A new call counts too, so an endless list of empty calls is bounded as well.
        if item["type"] == "function_call"
            && self.calls.item(&item, output_index, done, on_delta)?
        {
            keep(&mut self.kept, 64 + size)?;
        }
        Ok(())
    }

    /// The response ended: its usage (the output's `reasoning_tokens` are already counted in
    /// `output_tokens`), and why, in chat completions' words.
    fn ended(&mut self, response: &Value) {
        self.ended = true;
        let usage = &response["usage"];
        let count = |counted: &Value| reported(Some(counted));
        self.reply.usage = usage.is_object().then(|| Usage {
            prompt_tokens: count(&usage["input_tokens"]),
            completion_tokens: count(&usage["output_tokens"]),
            cached_tokens: count(&usage["input_tokens_details"]["cached_tokens"]),
            ..Usage::default()
        });
        let reason = match &response["incomplete_details"]["reason"] {
            Value::String(reason) if reason.starts_with("max_") => "length",
            Value::String(reason) => reason,
            _ if self.calls.is_empty() => "stop",
            _ => "tool_calls",
        };
        self.reply.finish_reason = Some(reason.to_string());
    }
}

/// The event types read above: one of them in a shape we cannot read loses a piece.
fn is_read(kind: &str) -> bool {
    let read = [
        "error",
        "response.output_",
        "response.function_call_arguments.",
    ];
    let ends = [
        "response.completed",
        "response.incomplete",
        "response.failed",
    ];
    let more = ["response.reasoning_", "response.refusal."];
    (read.iter().chain(&ends).chain(&more)).any(|prefix| kind.starts_with(prefix))
}

/// The start of what could not be read, to recognise it by.
fn start_of(data: &str) -> String {
    data.trim().chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::sse::MAX_REPLY;
    use crate::core::message::ToolCall;
    use serde_json::json;

    /// The fixture's lines fed one by one, as `client/sse.rs`'s reader feeds them; also every
    /// event passed on.
    fn replay(fixture: &str) -> (Result<Reply, Error>, Vec<String>) {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/sse");
        feed(&std::fs::read_to_string(format!("{dir}/{fixture}")).expect(fixture))
    }

    fn feed(body: &str) -> (Result<Reply, Error>, Vec<String>) {
        let mut seen = Vec::new();
        let mut on_delta = |event: Event| {
            let said = match event {
                Event::Text(text) => format!("text:{text}"),
                Event::Reasoning(text) => format!("reasoning:{text}"),
                Event::CallReady(call) => format!("ready:{}:{}", call.id, call.arguments),
                _ => return,
            };
            seen.push(said);
        };
        let mut parser = Parser::default();
        for line in body.lines() {
            match parser.feed_line(line, &mut on_delta) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Done) => break,
                Err(e) => return (Err(e), seen),
            }
        }
        (parser.finish(&mut on_delta), seen)
    }

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        let (id, name, arguments) = (id.into(), name.into(), arguments.into());
        ToolCall {
            id,
            name,
            arguments,
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

    fn lost(result: Result<Reply, Error>) -> String {
        match result {
            Err(Error::Stream(Broke::Lost(what))) => what,
            other => panic!("{other:?}"),
        }
    }

    fn provider_error(result: Result<Reply, Error>) -> String {
        match result {
            Err(Error::Stream(Broke::Provider(said))) => said,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn text_arrives_in_order_with_its_usage() {
        let (reply, seen) = replay("responses_text.sse");
        let reply = reply.unwrap();
        assert_eq!(reply.text, "Hello! The tests pass.");
        assert_eq!(
            seen,
            ["text:Hello", "text:!", "text: The tests", "text: pass."]
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
        assert_eq!(reply.usage, usage(1520, 9, 1280));
        assert!(reply.tool_calls.is_empty() && reply.thinking.is_empty());
    }

    /// Thirteen argument deltas make one call, known by its `call_id` (not the `fc_` item id),
    /// announced ready once, when its arguments are done, before the response ends.
    #[test]
    fn a_call_in_many_deltas_is_one_call_by_call_id() {
        let (reply, seen) = replay("responses_tool_call_deltas.sse");
        let reply = reply.unwrap();
        let args = r#"{"file_path":"src/main.rs","offset":10}"#;
        let id = "call_Qm8rT2vXkL0aZ3pN9bYc1Wd4";
        assert_eq!(reply.tool_calls, [call(id, "read_file", args)]);
        assert_eq!(seen, [format!("ready:{id}:{args}")]);
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(reply.usage, usage(2210, 31, 0));
    }

    #[test]
    fn two_calls_are_kept_apart_in_order() {
        let (reply, seen) = replay("responses_two_calls.sse");
        let want = [
            call("call_A1", "grep", r#"{"pattern":"fn main"}"#),
            call("call_B2", "glob", r#"{"pattern":"**/*.rs"}"#),
        ];
        assert_eq!(reply.unwrap().tool_calls, want);
        let ready: Vec<&str> = seen.iter().map(|s| &s[..13]).collect();
        assert_eq!(ready, ["ready:call_A1", "ready:call_B2"]);
    }

    /// The summary is shown as it streams (its second part a paragraph of its own); the item
    /// is kept with its encrypted content and without its id, to go back next request.
    #[test]
    fn reasoning_is_shown_and_kept_encrypted() {
        let (reply, seen) = replay("responses_reasoning.sse");
        let reply = reply.unwrap();
        let summary = "**Finding the entry point**\n\nThe user wants main; I should read it.";
        let summary = format!("{summary}\n\nReading src/main.rs first.");
        assert_eq!(reply.reasoning, summary);
        assert_eq!(seen[0], "reasoning:**Finding the entry point**\n\n");
        assert_eq!(seen[3], "reasoning:\n\n");
        assert_eq!(reply.thinking.len(), 1);
        let item = &reply.thinking[0];
        assert_eq!(item["type"], "reasoning");
        assert!(
            item["encrypted_content"]
                .as_str()
                .unwrap()
                .starts_with("gAAAAAB")
        );
        assert_eq!(item["summary"][1]["text"], "Reading src/main.rs first.");
        assert!(item.get("id").is_none(), "{item}");
        let args = r#"{"file_path":"src/main.rs"}"#;
        assert_eq!(reply.tool_calls, [call("call_R3", "read_file", args)]);
        assert_eq!(reply.usage, usage(3100, 412, 0));
    }

    #[test]
    fn an_error_event_mid_stream_fails_the_reply() {
        let (result, seen) = replay("responses_error_event.sse");
        let said = provider_error(result);
        assert!(said.starts_with("The server had an error"), "{said}");
        assert_eq!(seen, ["text:I will"]);
    }

    #[test]
    fn a_failed_response_fails_with_its_message() {
        let said = provider_error(replay("responses_failed.sse").0);
        assert_eq!(said, "The model failed to generate a response.");
        let bare = "data: {\"type\":\"response.failed\",\"response\":{\"error\":null}}";
        assert!(provider_error(feed(bare).0).contains("no reason given"));
    }

    /// The output limit cut the answer: the text so far, cut off as chat completions' `length`.
    #[test]
    fn an_incomplete_response_is_cut_off() {
        let reply = replay("responses_incomplete.sse").0.unwrap();
        assert_eq!(reply.text, "Here is the first half of the ans");
        assert_eq!(reply.finish_reason.as_deref(), Some("length"));
        assert_eq!(reply.usage, usage(900, 4096, 0));
        let filtered = r#"data: {"type":"response.incomplete","response":{"incomplete_details":{"reason":"content_filter"}}}"#;
        let reply = feed(filtered).0.unwrap();
        assert_eq!(reply.finish_reason.as_deref(), Some("content_filter"));
    }

    /// A stream that stops inside an event, or before the response ends, is a broken stream.
    #[test]
    fn a_cut_stream_is_ended() {
        let (result, seen) = replay("responses_cut.sse");
        assert!(
            matches!(result, Err(Error::Stream(Broke::Ended))),
            "{result:?}"
        );
        assert!(seen.is_empty(), "an unfinished call is not ready: {seen:?}");
        let (done_only, _) = feed("data: [DONE]\n");
        assert!(matches!(done_only, Err(Error::Stream(Broke::Ended))));
    }

    /// An announced call may be running: a later delta or another name changes nothing; a
    /// `.done` whose arguments differ from the deltas' (or the announced ones) lost a delta.
    #[test]
    fn an_announced_call_is_final_and_a_differing_done_is_lost() {
        let added = json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                     "name": "glob", "arguments": ""}});
        let delta = |d: &str| {
            json!({"type": "response.function_call_arguments.delta",
                                     "item_id": "fc_1", "output_index": 0, "delta": d})
        };
        let done = |args: &str| {
            json!({"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                     "name": "bash", "arguments": args}})
        };
        let args_done = |args: &str| {
            json!({"type": "response.function_call_arguments.done", "item_id": "fc_1",
                   "arguments": args})
        };
        let body = |events: &[Value]| {
            let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
            body + "data: {\"type\":\"response.completed\",\"response\":{}}\n"
        };
        let whole = [
            added.clone(),
            delta("{"),
            delta("}"),
            args_done("{}"),
            delta("\"x\""),
            done("{}"),
        ];
        let (reply, seen) = feed(&body(&whole));
        assert_eq!(seen, ["ready:call_1:{}"]);
        assert_eq!(reply.unwrap().tool_calls, [call("call_1", "glob", "{}")]);
        let lost_delta = [added.clone(), delta("{"), args_done("{}")];
        let (reply, seen) = feed(&body(&lost_delta));
        assert!(lost(reply).contains("a call's arguments"));
        assert!(seen.is_empty(), "never announced: {seen:?}");
        let changed_after = [added, delta("{}"), args_done("{}"), done(r#"{"rm":1}"#)];
        assert!(lost(feed(&body(&changed_after)).0).contains("a call's arguments"));
    }

    /// A gap in `sequence_number` (the "!" delta lost), or, where a gateway strips the numbers,
    /// a call whose arguments lost a delta ("offset":1 for 10): the reply is lost, never used.
    #[test]
    fn a_stream_that_lost_an_event_is_lost() {
        let (gap, seen) = replay("responses_handmade_sequence_gap.sse");
        assert!(lost(gap).contains("event 6 came after event 4"));
        assert_eq!(seen, ["text:Hello"]);
        let (args, seen) = replay("responses_handmade_lost_delta_no_sequence.sse");
        assert!(lost(args).contains("a call's arguments"));
        assert!(seen.is_empty(), "never announced: {seen:?}");
    }

    /// With no numbers, a text delta lost shows in `output_text.done`, and one lost together
    /// with its `.done` in `response.completed`; a part that came only whole is shown whole.
    #[test]
    fn done_and_completed_texts_hold_the_deltas_to_the_whole() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/sse/responses_text.sse"
        ))
        .unwrap();
        let unnumbered = |text: &str| {
            let events = text
                .split("\n\n")
                .filter(|e| !e.contains("\"delta\":\"!\""));
            let events = events.map(|e| match e.find(",\"sequence_number\"") {
                Some(at) => format!("{}}}", &e[..at]),
                None => e.to_string(),
            });
            events.collect::<Vec<_>>().join("\n\n")
        };
        assert!(lost(feed(&unnumbered(&text)).0).contains("the text"));
        let no_done = text.replace("event: response.output_text.done", "event: x");
        let no_done = no_done.replace("\"type\":\"response.output_text.done\"", "\"type\":\"x\"");
        assert!(lost(feed(&unnumbered(&no_done)).0).contains("the text"));
        let only_whole = r#"data: {"type":"response.output_text.done","text":"All of it."}"#;
        let end = r#"data: {"type":"response.completed","response":{}}"#;
        let (reply, seen) = feed(&format!("{only_whole}\n{end}\n"));
        assert_eq!(reply.unwrap().text, "All of it.");
        assert_eq!(seen, ["text:All of it."]);
    }

    /// A server that sends only the finished item (no `added`, no deltas) still gives the call;
    /// arguments that are not JSON are not announced, and a missing call id is made up.
    #[test]
    fn a_call_seen_only_when_done_and_garbled_arguments() {
        let item = |id: &str, args: &str| {
            let item =
                json!({"type": "function_call", "id": id, "name": "grep", "arguments": args});
            format!(
                "data: {}\n",
                json!({"type": "response.output_item.done", "item": item})
            )
        };
        let end = "data: {\"type\":\"response.completed\",\"response\":{\"usage\":null}}\n";
        let (reply, seen) = feed(&(item("fc_9", "{\"pattern\":\"x\"}") + &item("", "{oops") + end));
        let reply = reply.unwrap();
        assert_eq!(seen, ["ready:fc_9:{\"pattern\":\"x\"}"]);
        assert_eq!(reply.tool_calls[0].id, "fc_9");
        assert_eq!(reply.tool_calls[1], call("call_1", "grep", "{oops"));
    }

    /// Events we do not read may have any shape; one we read in a shape we cannot read, or data
    /// that is no JSON at all, loses a piece of the reply and fails it.
    #[test]
    fn unknown_events_are_skipped_and_malformed_ones_fail() {
        let odd = r#"data: {"type":"response.mcp_call_arguments.delta","delta":{"odd":1}}"#;
        let text = r#"data: {"type":"response.output_text.delta","delta":"ok"}"#;
        let end = r#"data: {"type":"response.completed","response":{}}"#;
        let reply = feed(&[odd, "", ": keep-alive", "event: x", text, end].join("\n")).0;
        assert_eq!(reply.unwrap().text, "ok");
        let wrong = r#"data: {"type":"response.output_text.delta","delta":7}"#;
        for bad in [wrong, "data: {not json", "data: {\"type\":"] {
            let result = feed(&format!("{bad}\n\n")).0;
            assert!(
                matches!(result, Err(Error::Stream(Broke::Malformed(_)))),
                "{bad}: {result:?}"
            );
        }
    }

    /// One event spread over two `data:` lines is read as one.
    #[test]
    fn multi_line_data_is_one_event() {
        let body = "data: {\"type\":\"response.output_text.delta\",\ndata: \"delta\":\"split\"}\n\n\
                    data: {\"type\":\"response.completed\",\"response\":{}}\n";
        assert_eq!(feed(body).0.unwrap().text, "split");
    }

    #[test]
    fn endless_arguments_are_bounded() {
        let mut parser = Parser::default();
        let piece = "x".repeat(1 << 20);
        let delta = json!({"type": "response.function_call_arguments.delta", "output_index": 0,
                           "delta": piece});
        let line = format!("data: {delta}");
        let mut outcome = Ok(Flow::Continue);
        for _ in 0..(MAX_REPLY >> 20) + 2 {
            outcome = parser.feed_line(&line, &mut |_| {});
            if outcome.is_err() {
                break;
            }
        }
        assert!(
            matches!(outcome, Err(Error::Stream(Broke::TooLarge(_)))),
            "{outcome:?}"
        );
    }
}
