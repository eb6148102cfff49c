//! Which API the provider speaks (`Config::dialect`), as the client (`client/llm.rs`) reaches it
//! through `Extras::dialect`: the request body, where it goes with which headers (chat
//! completions' URL and key are the client's, `http::endpoint`), and the reader of the stream
//! that comes back. Chat completions, the one a learner reads first, is the core's own
//! (`client/wire.rs`, `client/sse.rs`); each other dialect is one file beside this one
//! (`anthropic.rs`, `responses.rs`), its stream fed by the same bounded line loop
//! (`sse::read_lines`). Nothing here judges the reply (`llm.rs` does, `wire::well_formed`, for
//! every dialect alike), retries or decides what a failed answer means.

pub(crate) mod messages_json;

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
    pub(crate) fn forget(&self) {
        self.messages.forget();
    }

    /// The request body for the history and the tools (chat-completions schemas), as this
    /// provider takes it (`quirks`), in the pieces it is sent in (`http::post` streams them);
    /// `None` sends the client's plain body. The fast form of chat completions' body is here:
    /// its messages are each serialised once (`messages_json.rs`) and shared, so a round
    /// neither serialises nor copies the history; the rest is built anew.
    pub(crate) fn body(
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
    pub(crate) fn endpoint(
        &self,
        config: &Config,
    ) -> Option<(String, Vec<(&'static str, String)>)> {
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
        match config.dialect {
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
        }
    }
}
