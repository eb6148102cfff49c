//! Which API the provider speaks (`Config::dialect`), as the client (`core/llm.rs`) reaches it
//! through `Extras::dialect`: the request body, where it goes with which headers, and the
//! reader of the stream that comes back. Chat completions, the one a learner reads first, is
//! the core's own (`core/wire.rs`, `core/sse.rs`); each other dialect is one file beside this
//! one (`anthropic.rs`). The Responses API is not built yet: `check` says so before any
//! request. Nothing here retries or decides what a failed answer means (`llm.rs` does, for
//! every dialect alike).

use crate::core::config::{Config, Dialect};
use crate::core::event::{Error, Event};
use crate::core::http::Limits;
use crate::core::message::{Message, Reply};
use crate::core::{sse, wire};
use crate::extras::anthropic;
use serde_json::Value;
use std::io::BufRead;
use std::sync::atomic::AtomicBool;

/// Holds nothing: the dialect is `Config::dialect`, and every request is built anew from it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dialects;

impl Dialects {
    /// Whether `config` names a dialect this build can speak (the binary asks at start-up).
    pub fn check(config: &Config) -> Result<(), Error> {
        match config.dialect {
            Dialect::Responses => Err(Error::Usage(NOT_BUILT.to_string())),
            Dialect::Chat | Dialect::Anthropic => Ok(()),
        }
    }

    /// The request body for the history and the tools (chat-completions schemas).
    pub fn body(
        &self,
        config: &Config,
        model: &str,
        messages: &[Message],
        tools: &[Value],
    ) -> Value {
        match config.dialect {
            Dialect::Anthropic => anthropic::request_body(config, model, messages, tools),
            // `check` refuses Responses at start-up; `read_stream` refuses it to a library.
            Dialect::Chat | Dialect::Responses => {
                wire::request_body(config, model, messages, tools)
            }
        }
    }

    /// The URL to POST to, and the headers that carry the key.
    pub fn endpoint(&self, config: &Config) -> (String, Vec<(&'static str, String)>) {
        match config.dialect {
            Dialect::Anthropic => (anthropic::url(&config.base_url), anthropic::headers(config)),
            Dialect::Chat | Dialect::Responses => chat_endpoint(config),
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
            Dialect::Chat => sse::read_stream(reader, cancel, limits, on_delta),
            Dialect::Responses => Err(Error::Usage(NOT_BUILT.to_string())),
        }
    }
}

/// `{base}/chat/completions`, and the key as a bearer token. (Local servers run without a
/// key; sending "Bearer " with nothing after it confuses some.)
fn chat_endpoint(config: &Config) -> (String, Vec<(&'static str, String)>) {
    let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
    let key = (config.api_key.iter()).map(|key| ("Authorization", format!("Bearer {key}")));
    (url, key.collect())
}

const NOT_BUILT: &str = "the responses dialect (OpenAI's Responses API) is not built yet: \
                         use --provider openai (chat completions) or anthropic";
