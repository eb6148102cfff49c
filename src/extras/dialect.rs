//! Which API the provider speaks (`Config::dialect`), as the client (`client/llm.rs`) reaches it
//! through `Extras::dialect`: the request body, where it goes with which headers (chat
//! completions' URL and key are the client's, `http::endpoint`), and the reader of the stream
//! that comes back. Chat completions, the one a learner reads first, is the core's own
//! (`client/wire.rs`, `client/sse.rs`); each other dialect is one file beside this
//! one (`anthropic.rs`, `responses.rs`), its stream fed by the same bounded line loop
//! (`sse::read_lines`), and every dialect's reply judged by the same `well_formed`. Nothing
//! here retries or decides what a failed answer means (`llm.rs` does, for every dialect alike).

pub mod messages_json;

use crate::client::http::{self, Limits};
use crate::client::quirks::Quirks;
use crate::client::{sse, wire};
use crate::core::config::{Config, Dialect};
use crate::core::event::{Error, Event};
use crate::core::message::{Message, Reply};
use crate::extras::anthropic;
use crate::extras::dialect::messages_json::MessagesJson;
use crate::extras::responses;
use serde_json::Value;
use std::io::BufRead;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// The dialect is `Config::dialect`; what is kept here is chat completions' serialised messages.
#[derive(Debug, Default)]
pub struct Dialects {
    messages: MessagesJson,
}

/// Where the messages go in the fields `wire::request_body` makes when given none.
const EMPTY: &str = "\"messages\":[]";

impl Dialects {
    /// The history was rewritten: the messages serialised so far may not be reused.
    pub fn forget(&self) {
        self.messages.forget();
    }

    /// The request body for the history and the tools (chat-completions schemas), as this
    /// provider takes it (`quirks`), in the pieces it is sent in (`http::post` streams them);
    /// `None` sends the client's plain body. The fast form of chat completions' body is here:
    /// its messages are each serialised once (`messages_json.rs`) and shared, so a round
    /// neither serialises nor copies the history; the rest is built anew.
    pub fn body(
        &self,
        config: &Config,
        model: &str,
        messages: &[Message],
        tools: &[Value],
        quirks: &Quirks,
    ) -> Option<Vec<Arc<str>>> {
        // The other dialects map the whole history anew (they are not the hot path here).
        let other = match config.dialect {
            Dialect::Anthropic => {
                let body = anthropic::request_body(config, model, messages, tools);
                Some(quirks.adapted_body(config, body))
            }
            Dialect::Responses => Some(responses::request_body(config, model, messages, tools)),
            Dialect::Chat => None,
        };
        if let Some(other) = other {
            return Some(vec![Arc::from(other.to_string())]);
        }
        let fields = wire::request_body(config, model, &[], tools);
        let fields = quirks.adapted_body(config, fields).to_string();
        let (before, after) = fields.split_once(EMPTY)?;
        let mut body = vec![Arc::from(format!("{before}\"messages\":"))];
        (self.messages).append_array(&mut body, messages, quirks.empty_content(config));
        body.push(Arc::from(after));
        Some(body)
    }

    /// Where a request in another dialect goes, and the headers that carry the key; `None` for
    /// chat completions, the client's own (`http::endpoint`).
    pub fn endpoint(&self, config: &Config) -> Option<(String, Vec<(&'static str, String)>)> {
        let base = &config.base_url;
        match config.dialect {
            Dialect::Chat => None,
            Dialect::Anthropic => Some((anthropic::url(base), anthropic::headers(config))),
            Dialect::Responses => Some((responses::url(base), http::bearer(config))),
        }
    }

    /// Read the body of a 200 into a `Reply`, passing text and reasoning on as they arrive.
    pub fn read_stream(
        &self,
        config: &Config,
        reader: &mut dyn BufRead,
        cancel: &AtomicBool,
        limits: &Limits,
        on_delta: &mut dyn FnMut(Event),
    ) -> Result<Reply, Error> {
        let reply = match config.dialect {
            Dialect::Anthropic => {
                let mut parser = anthropic::stream::Parser::default();
                let mut feed = |line: &str| parser.feed_line(line, on_delta);
                sse::read_lines(reader, cancel, limits, &mut feed)?;
                parser.finish(on_delta)
            }
            Dialect::Responses => {
                let mut parser = responses::stream::Parser::default();
                let mut feed = |line: &str| parser.feed_line(line, on_delta);
                sse::read_lines(reader, cancel, limits, &mut feed)?;
                parser.finish(on_delta)
            }
            Dialect::Chat => sse::read_stream(reader, cancel, limits, on_delta),
        };
        well_formed(reply?)
    }
}

/// Most tool calls taken from one reply: a real model sends a few dozen at most, and each one
/// is run, answered and sent back with every request after.
pub const MAX_CALLS: usize = 1000;
/// Longest tool name or call id: no tool is named longer (providers allow 64 characters), no
/// provider's ids come near it, and each is sent back with every request.
pub const MAX_NAME: usize = 256;

/// A reply whose calls no real model sends is refused whole, saying why: nothing of it runs,
/// and it is not asked for again (a server that sent it once would send it again).
fn well_formed(reply: Reply) -> Result<Reply, Error> {
    let calls = reply.tool_calls.len();
    if calls > MAX_CALLS {
        return Err(Error::Api(format!(
            "the reply holds {calls} tool calls; at most {MAX_CALLS} are taken from one reply"
        )));
    }
    let lengths = (reply.tool_calls.iter()).map(|call| call.name.len().max(call.id.len()));
    match lengths.max().unwrap_or(0) {
        longest if longest > MAX_NAME => Err(Error::Api(format!(
            "the reply has a tool call whose name or id is {longest} bytes long; a name or id \
             is at most {MAX_NAME}"
        ))),
        _ => Ok(reply),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::ToolCall;

    fn reply(calls: usize, name: &str, id: &str) -> Reply {
        let call = ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: "{}".into(),
        };
        Reply {
            tool_calls: vec![call; calls],
            ..Reply::default()
        }
    }

    #[test]
    fn replies_no_model_sends_are_refused_saying_why() {
        assert!(well_formed(reply(MAX_CALLS, "bash", "c1")).is_ok());
        assert!(well_formed(reply(1, &"n".repeat(MAX_NAME), "c1")).is_ok());
        let said = |reply| {
            well_formed(reply)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        let many = said(reply(MAX_CALLS + 1, "bash", "c1"));
        assert!(many.contains("the reply holds 1001 tool calls"), "{many}");
        let name = said(reply(1, &"n".repeat(MAX_NAME + 1), "c1"));
        assert!(name.contains("name or id is 257 bytes long"), "{name}");
        let id = said(reply(1, "bash", &"i".repeat(60_000)));
        assert!(id.contains("name or id is 60000 bytes long"), "{id}");
    }
}
