//! Anthropic's Messages API, the stream side: the events of one reply (`message_start`,
//! `content_block_start` / `_delta` / `_stop`, `message_delta`, `message_stop`, `ping`,
//! `error`) put together into the same `Reply` the chat-completions parser makes, fed one
//! line at a time by `client/sse.rs`'s line reader (which bounds lines and time).
//!
//! Text and thinking are passed on as they arrive (thinking as `Event::Reasoning`, shown
//! dimmed); a tool call is announced ready when its block stops, its `input_json_delta` pieces
//! whole. Thinking blocks are kept with their signature, and `redacted_thinking` as it came,
//! in `Reply::thinking`, to go back with the tool calls. `stop_reason: max_tokens` becomes
//! chat completions' `length`. The shapes of the events are `anthropic.rs`'. Nothing here opens
//! a connection or retries. The protocol numbers no event, so an event a gateway dropped
//! (LiteLLM 1.108 does) is not always seen; what shows one is `Broke::Lost` (retried, never
//! used): a delta or stop of a block not open, a block past the next index, a call's input
//! that is not JSON at its stop.

use super::{WireDelta, WireEvent, WireUsage, finish_reason, provider_error};
use crate::client::sse::{Flow, MAX_LINE, keep};
use crate::core::event::{Broke, Error, Event};
use crate::core::message::{Reply, ToolCall, Usage};
use crate::tools::support::json_depth::JsonDepth;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

/// The line-fed state machine for one reply.
#[derive(Default)]
pub(crate) struct Parser {
    /// The `data:` lines of the event being read.
    data: String,
    reply: Reply,
    /// The reply's content blocks by their `index`, as far as they came.
    blocks: Vec<Block>,
    usage: WireUsage,
    /// `message_stop` arrived: the reply is whole.
    stopped: bool,
    /// Bytes kept so far, against `MAX_REPLY`.
    kept: usize,
}

/// One content block while it streams.
enum Block {
    Text,
    /// The thinking so far, and its signature.
    Thinking(String, String),
    /// A call and the index of its place in `Reply::tool_calls`.
    Call(usize),
    /// Kept whole as it arrived (`redacted_thinking`), or a kind we do not know (ignored).
    Other,
    /// Its `content_block_stop` came: nothing more may.
    Stopped,
}

/// The reply lost an event: what showed it.
fn lost(what: String) -> Error {
    Error::Stream(Broke::Lost(what))
}

impl Parser {
    /// Feed one line without its terminator; `Flow::Done` after `message_stop`.
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
        // The `event:` name repeats the data's `type`, which is what is read.
        if field != "data" {
            return Ok(Flow::Continue);
        }
        if !self.data.is_empty() {
            self.data.push('\n');
        }
        self.data.push_str(value);
        match self.data.len() > MAX_LINE {
            true => Err(Error::Stream(Broke::TooLarge("an event"))),
            false => Ok(Flow::Continue),
        }
    }

    /// At the end of input: the reply, if `message_stop` or a stop reason came; else `Ended`.
    pub fn finish(mut self, on_delta: &mut dyn FnMut(Event)) -> Result<Reply, Error> {
        let mut depth = JsonDepth::default();
        depth.update(&self.data);
        // An event the end of input cut short is a broken stream, not a malformed event.
        if depth.is_open() {
            return Err(Error::Stream(Broke::Ended));
        }
        self.dispatch(on_delta)?;
        if !self.stopped && self.reply.finish_reason.is_none() {
            return Err(Error::Stream(Broke::Ended));
        }
        // A call that takes no parameters may stream no input, nor even its block's end.
        for call in &mut self.reply.tool_calls {
            if call.arguments.trim().is_empty() {
                call.arguments = "{}".to_string();
            }
        }
        Ok(self.reply)
    }

    fn dispatch(&mut self, on_delta: &mut dyn FnMut(Event)) -> Result<Flow, Error> {
        let data = std::mem::take(&mut self.data);
        let flow = match data.trim().is_empty() {
            true => Ok(Flow::Continue),
            false => self.apply(&data, on_delta),
        };
        // The buffer is kept for the next event, so a long stream allocates it once.
        self.data = data;
        self.data.clear();
        flow
    }

    fn apply(&mut self, data: &str, on_delta: &mut dyn FnMut(Event)) -> Result<Flow, Error> {
        let Ok(event) = serde_json::from_str::<WireEvent>(data) else {
            let start = data.trim().chars().take(80).collect();
            return Err(Error::Stream(Broke::Malformed(start)));
        };
        match event.kind.as_ref() {
            "message_start" => {
                let usage = event.message.and_then(|message| message.usage);
                self.count(usage.unwrap_or_default());
            }
            "content_block_start" => self.start_block(event.index, event.content_block)?,
            "content_block_delta" => self.delta(event.index, event.delta, on_delta)?,
            "content_block_stop" => self.stop_block(event.index, on_delta)?,
            "message_delta" => {
                let reason = event.delta.and_then(|delta| delta.stop_reason);
                self.reply.finish_reason = reason.map(|reason| finish_reason(&reason));
                self.count(event.usage.unwrap_or_default());
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(Flow::Done);
            }
            "error" => return Err(provider_error(event.error.as_ref())),
            // `ping`, and event kinds added later: the API's versioning says to ignore them.
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn start_block(&mut self, index: Option<usize>, block: Option<Value>) -> Result<(), Error> {
        let block = block.unwrap_or_default();
        let text = |key: &str| block[key].as_str().unwrap_or("").to_string();
        let started = match block["type"].as_str() {
            Some("text") => Block::Text,
            Some("thinking") => Block::Thinking(text("thinking"), text("signature")),
            Some("tool_use") => {
                let mut call = ToolCall::default();
                (call.id, call.name) = (text("id"), text("name"));
                self.reply.tool_calls.push(call);
                Block::Call(self.reply.tool_calls.len() - 1)
            }
            Some("redacted_thinking") => {
                keep(&mut self.kept, block.to_string().len())?;
                self.reply.thinking.push(block);
                Block::Other
            }
            _ => Block::Other,
        };
        let index = index.unwrap_or(self.blocks.len());
        // Blocks come in order: one that starts further on means one before it was lost.
        if index > self.blocks.len() {
            let next = self.blocks.len();
            return Err(lost(format!(
                "block {index} started where block {next} was due"
            )));
        }
        keep(&mut self.kept, 64)?;
        match self.blocks.get_mut(index) {
            Some(slot) => *slot = started,
            None => self.blocks.push(started),
        }
        Ok(())
    }

    fn delta(
        &mut self,
        index: Option<usize>,
        delta: Option<WireDelta>,
        on_delta: &mut dyn FnMut(Event),
    ) -> Result<(), Error> {
        let (Some(delta), Some(index)) = (delta, index) else {
            return Ok(());
        };
        let pieces = [
            &delta.text,
            &delta.partial_json,
            &delta.thinking,
            &delta.signature,
        ];
        let bytes = pieces.into_iter().flatten().map(|piece| piece.len()).sum();
        keep(&mut self.kept, bytes)?;
        match self.blocks.get_mut(index) {
            Some(Block::Text) => {
                if let Some(text) = delta.text.filter(|text| !text.is_empty()) {
                    self.reply.text.push_str(&text);
                    on_delta(Event::Text(&text));
                }
            }
            Some(Block::Thinking(thinking, signature)) => {
                if let Some(piece) = delta.thinking.filter(|piece| !piece.is_empty()) {
                    thinking.push_str(&piece);
                    self.reply.reasoning.push_str(&piece);
                    on_delta(Event::Reasoning(&piece));
                }
                signature.push_str(delta.signature.as_deref().unwrap_or(""));
            }
            Some(Block::Call(at)) => {
                let call = &mut self.reply.tool_calls[*at];
                call.arguments
                    .push_str(delta.partial_json.as_deref().unwrap_or(""));
            }
            Some(Block::Other) => {}
            Some(Block::Stopped) | None => {
                return Err(lost(format!("a delta of block {index}, which is not open")));
            }
        }
        Ok(())
    }

    /// A block is whole: a call is ready to run, a thinking block is kept with its signature.
    fn stop_block(
        &mut self,
        index: Option<usize>,
        on_delta: &mut dyn FnMut(Event),
    ) -> Result<(), Error> {
        let Some(index) = index else {
            return Ok(());
        };
        let open = self.blocks.get_mut(index);
        let block = match open.map(|block| std::mem::replace(block, Block::Stopped)) {
            Some(Block::Stopped) | None => {
                return Err(lost(format!("block {index} stopped without its start")));
            }
            Some(block) => block,
        };
        match block {
            Block::Call(at) => {
                let call = &mut self.reply.tool_calls[at];
                if call.arguments.trim().is_empty() {
                    call.arguments = "{}".to_string();
                }
                if serde_json::from_str::<IgnoredAny>(&call.arguments).is_err() {
                    let why = format!("the input of call {} is not JSON at its stop", call.id);
                    return Err(lost(why));
                }
                on_delta(Event::CallReady(call));
            }
            Block::Thinking(thinking, signature) => {
                let block =
                    json!({"type": "thinking", "thinking": thinking, "signature": signature});
                self.reply.thinking.push(block);
            }
            Block::Text | Block::Other | Block::Stopped => {}
        }
        Ok(())
    }

    /// The usage so far, each count replaced where this event has it. `input_tokens` leaves
    /// out what was written to or read from the cache; chat completions' `prompt_tokens`
    /// counts it all, cached tokens included.
    fn count(&mut self, new: WireUsage) {
        let usage = &mut self.usage;
        let counts = [
            (&mut usage.input_tokens, new.input_tokens),
            (&mut usage.output_tokens, new.output_tokens),
            (
                &mut usage.cache_creation_input_tokens,
                new.cache_creation_input_tokens,
            ),
            (
                &mut usage.cache_read_input_tokens,
                new.cache_read_input_tokens,
            ),
        ];
        counts
            .into_iter()
            .for_each(|(old, new)| *old = new.or(*old));
        let count = |tokens: Option<u64>| tokens.unwrap_or(0);
        let read = count(usage.cache_read_input_tokens);
        // Saturating: an impossible count (`u64::MAX`) stays impossible, never wraps to a sane one.
        let written = count(usage.cache_creation_input_tokens);
        let prompt = count(usage.input_tokens)
            .saturating_add(written)
            .saturating_add(read);
        let completion_tokens = count(usage.output_tokens);
        self.reply.usage = Some(Usage {
            prompt_tokens: prompt,
            completion_tokens,
            cached_tokens: read,
            cache_write_tokens: count(usage.cache_creation_input_tokens),
            cost: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::http::Limits;
    use crate::client::sse::read_lines;
    use std::io::Cursor;
    use std::sync::atomic::AtomicBool;

    /// Replay `fixtures/sse/<fixture>` through the line reader; also every event seen.
    fn replay(fixture: &str) -> (Result<Reply, Error>, Vec<String>) {
        let path = format!("{}/fixtures/sse/{fixture}", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).expect("fixture is readable");
        replay_bytes(&bytes)
    }

    fn replay_bytes(bytes: &[u8]) -> (Result<Reply, Error>, Vec<String>) {
        let mut seen = Vec::new();
        let mut on_delta = |event: Event| match event {
            Event::Text(text) => seen.push(format!("text:{text}")),
            Event::Reasoning(text) => seen.push(format!("reasoning:{text}")),
            Event::CallReady(call) => seen.push(format!("ready:{}:{}", call.name, call.arguments)),
            _ => {}
        };
        let mut parser = Parser::default();
        let (cancel, mut reader) = (AtomicBool::new(false), Cursor::new(bytes));
        let read = read_lines(&mut reader, &cancel, &Limits::NONE, &mut |line| {
            parser.feed_line(line, &mut on_delta)
        });
        let result = read.and_then(|()| parser.finish(&mut on_delta));
        (result, seen)
    }

    fn usage(prompt: u64, completion: u64, cached: u64, written: u64) -> Option<Usage> {
        Some(Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            cached_tokens: cached,
            cache_write_tokens: written,
            cost: None,
        })
    }

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        let (id, name, arguments) = (id.into(), name.into(), arguments.into());
        ToolCall {
            id,
            name,
            arguments,
        }
    }

    #[test]
    fn text_arrives_in_order_with_its_usage() {
        let (result, seen) = replay("anthropic-text.sse");
        let reply = result.unwrap();
        assert_eq!(reply.text, "Hello! How can I help?");
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
        assert_eq!(reply.usage, usage(25, 15, 0, 0));
        assert_eq!(seen, ["text:Hello", "text:! How can I help?"]);
    }

    /// Impossible counts fail no event: they come through as `u64::MAX`, never wrapped round by
    /// the sum, for the account to replace (`cost::believable`).
    #[test]
    fn impossible_counts_fail_nothing_and_stay_impossible() {
        let path = format!(
            "{}/fixtures/sse/anthropic-text.sse",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(path).unwrap();
        let text = text.replacen("\"input_tokens\":25", "\"input_tokens\":-5", 1);
        let text = text.replacen("\"output_tokens\":15", "\"output_tokens\":1e30", 1);
        let reply = replay_bytes(text.as_bytes()).0.unwrap();
        assert_eq!(reply.text, "Hello! How can I help?");
        let usage = reply.usage.unwrap();
        assert_eq!(
            (usage.prompt_tokens, usage.completion_tokens),
            (u64::MAX, u64::MAX)
        );
    }

    /// Seven `input_json_delta` pieces are one call, ready when its block stops; tokens read
    /// from the cache count in the prompt, as chat completions counts them.
    #[test]
    fn a_call_in_many_pieces() {
        let (result, seen) = replay("anthropic-tool-call.sse");
        let reply = result.unwrap();
        let args = r#"{"file_path": "src/main.rs", "limit": 40}"#;
        let want = call("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "read_file", args);
        assert_eq!(reply.tool_calls, [want]);
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(reply.usage, usage(1812, 89, 1800, 0));
        assert_eq!(
            seen,
            [
                "text:I'll read the file.",
                &format!("ready:read_file:{args}")
            ]
        );
    }

    #[test]
    fn two_parallel_calls_each_ready_in_turn() {
        let (result, seen) = replay("anthropic-two-calls.sse");
        let reply = result.unwrap();
        let glob = call("toolu_01A", "glob", r#"{"pattern": "**/*.rs"}"#);
        let grep = call("toolu_01B", "grep", r#"{"pattern": "fn main"}"#);
        assert_eq!(reply.tool_calls, [glob, grep]);
        assert_eq!(reply.usage, usage(1800, 64, 0, 1500));
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert!(seen[0].starts_with("ready:glob") && seen[1].starts_with("ready:grep"));
    }

    /// Thinking is shown as reasoning and kept with its signature; redacted thinking is kept
    /// as it came; both in the order the reply had them.
    #[test]
    fn thinking_is_kept_signed_and_redacted_thinking_whole() {
        let (result, seen) = replay("anthropic-thinking.sse");
        let reply = result.unwrap();
        let thought = "The user wants the tests run. I should call bash.";
        assert_eq!(reply.reasoning, thought);
        let signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";
        let redacted = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";
        assert_eq!(
            reply.thinking,
            [
                json!({"type": "thinking", "thinking": thought, "signature": signature}),
                json!({"type": "redacted_thinking", "data": redacted}),
            ]
        );
        assert_eq!(reply.tool_calls[0].name, "bash");
        assert_eq!(seen[0], "reasoning:The user wants the tests run. ");
    }

    #[test]
    fn an_error_event_fails_the_reply_with_the_apis_words() {
        let (result, seen) = replay("anthropic-error-mid-stream.sse");
        let Err(Error::Stream(Broke::Provider(said))) = result else {
            panic!("{result:?}")
        };
        assert_eq!(said, "overloaded_error: Overloaded");
        assert_eq!(seen, ["text:Let me"]);
    }

    #[test]
    fn max_tokens_is_reported_as_length() {
        let reply = replay("anthropic-max-tokens.sse").0.unwrap();
        assert_eq!(reply.finish_reason.as_deref(), Some("length"));
        assert_eq!(reply.text, "The answer begins and then");
    }

    /// Cut before `message_stop` (mid-event or between events): the reply is void.
    #[test]
    fn a_cut_stream_has_ended() {
        let whole = std::fs::read_to_string(format!(
            "{}/fixtures/sse/anthropic-tool-call.sse",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let mid_event = whole.find("partial_json\":\"mit").unwrap();
        let between = whole
            .find("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}")
            .unwrap();
        for cut in [mid_event, between] {
            let (result, _) = replay_bytes(&whole.as_bytes()[..cut]);
            assert!(
                matches!(result, Err(Error::Stream(Broke::Ended))),
                "{result:?}"
            );
        }
    }

    #[test]
    fn an_event_that_is_not_json_fails_the_reply() {
        let stream = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n";
        let (result, _) = replay_bytes(stream.as_bytes());
        assert!(
            matches!(result, Err(Error::Stream(Broke::Malformed(_)))),
            "{result:?}"
        );
    }

    /// The protocol gives no sequence numbers, but a block stopped without its start, and a
    /// call whose input lost a piece (invalid JSON at its stop), lost an event: never announced.
    #[test]
    fn a_lost_start_or_input_piece_is_lost() {
        let cases = [
            ("anthropic-handmade-stop-without-start.sse", "block 1"),
            (
                "anthropic-handmade-lost-json-delta.sse",
                "not JSON at its stop",
            ),
        ];
        for (fixture, said) in cases {
            let (result, seen) = replay(fixture);
            let Err(Error::Stream(Broke::Lost(what))) = result else {
                panic!("{fixture}: {result:?}")
            };
            assert!(what.contains(said), "{fixture}: {what}");
            assert_eq!(seen, ["text:I'll read the file."], "{fixture}");
        }
        let data = |json: &str| format!("data: {json}\n\n");
        let twice = data(
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        ) + &data(r#"{"type":"content_block_stop","index":0}"#).repeat(2);
        let ahead = data(
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}"#,
        );
        for stream in [twice, ahead] {
            let result = replay_bytes(stream.as_bytes()).0;
            assert!(
                matches!(result, Err(Error::Stream(Broke::Lost(_)))),
                "{result:?}"
            );
        }
    }

    /// A call that takes no parameters may stream no input: its arguments are `{}`.
    #[test]
    fn a_call_without_input_gets_an_empty_object() {
        let stream = concat!(
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"todo_write\",\"input\":{}}}\n\n",
            "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":3}}\n\n",
        );
        let (result, seen) = replay_bytes(stream.as_bytes());
        assert_eq!(result.unwrap().tool_calls, [call("t", "todo_write", "{}")]);
        assert_eq!(seen, ["ready:todo_write:{}"]);
    }
}
