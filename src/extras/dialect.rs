//! The dialects other than chat completions, as the client (`core/llm.rs`) reaches them
//! through `Extras::dialect`: where a request goes and with which headers, its body, and the
//! reader of the stream that comes back. Chat completions, the one a learner reads first, is
//! spoken in the core itself; each other dialect is one file beside this one (`anthropic.rs`).
//! The Responses API is not built yet: `check` says so before any request. Nothing here
//! retries or decides what a failed answer means (`llm.rs` does, for every dialect alike).

use crate::core::config::{Config, Dialect};
use crate::core::event::{Error, Event};
use crate::core::http::Limits;
use crate::core::message::{Message, Reply};
use crate::core::sse;
use crate::extras::anthropic;
use serde_json::{Value, json};
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

    /// The URL to POST to and the headers that carry the key.
    pub fn endpoint(&self, config: &Config) -> (String, Vec<(&'static str, String)>) {
        match config.dialect {
            Dialect::Anthropic => (anthropic::url(&config.base_url), anthropic::headers(config)),
            Dialect::Chat | Dialect::Responses => (config.base_url.clone(), Vec::new()),
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
            // `check` refused it at start-up; an embedding program that skipped it gets the
            // server's own refusal of an empty request.
            Dialect::Chat | Dialect::Responses => json!({"model": model}),
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
                sse::read_lines(reader, cancel, limits, &mut |line| {
                    parser.feed_line(line, on_delta)
                })?;
                parser.finish(on_delta)
            }
            Dialect::Chat | Dialect::Responses => {
                sse::read_stream(reader, cancel, limits, on_delta)
            }
        }
    }
}

const NOT_BUILT: &str = "the responses dialect (OpenAI's Responses API) is not built yet: \
                         use --provider openai (chat completions) or anthropic";
