//! How particular servers stray from the plain protocol, and what the client does about it:
//! the request-body rewrites a 400 (or 422, 500) naming a field teaches (`max_tokens` renamed,
//! `temperature` or `stream_options` dropped, `content: null` sent as `""`; a session log keeps
//! them); the wordings of "your prompt does not fit" (its numbers read by `provider_errors.rs`);
//! and a 200 that is not an event stream
//! (a whole completion, a JSON error, an HTML page: `Quirks::not_a_stream`, in
//! `not_a_stream.rs`, the one method of `Quirks` kept apart).
//!
//! A plain agent needs them (newer OpenAI models refuse `max_tokens`), so the client (`Llm`)
//! asks at three points of an attempt: before it sends the body, when a 200's first line is not
//! an event, and when an answer is not a 200. Nothing here sends, retries or reads a stream.

use crate::core::config::{Config, Dialect};
use crate::core::message::{Message, Role};
use crate::tools::support::provider_errors::overflow_numbers;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// What this session's answers taught about its provider. Cloning shares it (a sub-agent sends
/// the same requests); it is learnt per configured model, so `/model` starts it over.
#[derive(Clone, Default)]
pub(crate) struct Quirks {
    learnt: Arc<Mutex<Learnt>>,
}

#[derive(Default)]
struct Learnt {
    /// The configured model this was learnt for.
    model: String,
    adaptations: Adaptations,
    /// The provider's context window, once it said so; smaller than the configured one.
    window: Option<u64>,
}

/// What 400 answers taught about this provider's requests, for the rest of the session (and
/// its resumptions: the session log keeps it, `extras/session.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Adaptations {
    max_completion_tokens: bool,
    omit_temperature: bool,
    omit_stream_options: bool,
    /// Send `""` rather than `null` as an assistant message's missing content.
    empty_content: bool,
}

impl Quirks {
    /// The plain request body (`wire::request_body`) as this provider takes it. Another
    /// dialect's body (`extras/dialect.rs`) is its own file's business, but for a `temperature`
    /// an Anthropic model refused (Claude Opus 4.7 and later take none).
    pub(crate) fn adapted_body(&self, config: &Config, mut body: Value) -> Value {
        let adapt = self.learnt(config).adaptations;
        match config.dialect {
            Dialect::Chat => {}
            Dialect::Anthropic => {
                if let Some(fields) = body.as_object_mut().filter(|_| adapt.omit_temperature) {
                    fields.remove("temperature");
                }
                return body;
            }
            Dialect::Responses => return body,
        }
        let messages = body["messages"].as_array_mut().into_iter().flatten();
        for message in messages {
            // Anthropic's signed thinking (a session begun there) means nothing here.
            if let Some(fields) = message.as_object_mut() {
                fields.remove("thinking");
            }
            if adapt.empty_content && message["content"].is_null() {
                message["content"] = json!("");
            }
        }
        let Some(fields) = body.as_object_mut() else {
            return body;
        };
        if adapt.omit_stream_options {
            fields.remove("stream_options");
        }
        if adapt.omit_temperature {
            fields.remove("temperature");
        }
        if adapt.max_completion_tokens
            && let Some(limit) = fields.remove("max_tokens")
        {
            fields.insert("max_completion_tokens".to_string(), limit);
        }
        body
    }

    /// Whether this provider wants `""` for an assistant message's missing content.
    pub(crate) fn empty_content(&self, config: &Config) -> bool {
        self.learnt(config).adaptations.empty_content
    }

    /// What was learnt last, and for which model: the session log keeps it, and `teach` gives
    /// it back on resume, so a resumed turn on that model does not spend a request learning it.
    pub(crate) fn taught(&self) -> (String, Adaptations) {
        let learnt = self.learnt.lock().unwrap_or_else(PoisonError::into_inner);
        (learnt.model.clone(), learnt.adaptations)
    }

    pub(crate) fn teach(&self, (model, adaptations): (String, Adaptations)) {
        let mut learnt = self.learnt.lock().unwrap_or_else(PoisonError::into_inner);
        (learnt.model, learnt.adaptations) = (model, adaptations);
    }

    /// A non-200 answer that names a field this provider takes otherwise: `true` when the
    /// request was changed (once per field), so sending it again at once may work.
    pub(crate) fn adapt_to(
        &self,
        config: &Config,
        status: u16,
        said: &str,
        messages: &[Message],
    ) -> bool {
        let adapt = &mut self.learnt(config).adaptations;
        match config.dialect {
            Dialect::Chat => {
                (matches!(status, 400 | 422) && adapt.adapt_to(said))
                    || (matches!(status, 400 | 422 | 500)
                        && adapt.adapt_null_content(said, messages))
            }
            Dialect::Anthropic => status == 400 && adapt.adapt_temperature(said),
            Dialect::Responses => false,
        }
    }

    /// What was learnt for `config.model`, started over when the model changed.
    fn learnt(&self, config: &Config) -> MutexGuard<'_, Learnt> {
        let mut learnt = self.learnt.lock().unwrap_or_else(PoisonError::into_inner);
        if learnt.model != config.model {
            *learnt = Learnt::default();
            learnt.model = config.model.clone();
        }
        learnt
    }

    /// Whether a 400 or 413 says the prompt does not fit, in any provider's words (OpenAI,
    /// DeepSeek, Qwen and vLLM say "maximum context length", Anthropic "prompt is too long"; a
    /// 413 is always about size). The window it names is compacted for from now on.
    pub(crate) fn does_not_fit(&self, config: &Config, status: u16, message: &str) -> bool {
        let lower = message.to_ascii_lowercase();
        let phrases = "context_length_exceeded|maximum context length|context length|context window\
                       |prompt is too long|context size|too many tokens|reduce the length";
        let too_long = status == 413 || phrases.split('|').any(|p| lower.contains(p));
        if !matches!(status, 400 | 413) || !too_long {
            return false;
        }
        if let Some(limit) = overflow_numbers(message).limit {
            let mut learnt = self.learnt(config);
            let configured = config.max_context as u64;
            learnt.window = Some(learnt.window.unwrap_or(configured).min(limit));
        }
        true
    }

    /// The window to compact for: the configured one, or the provider's if it said less.
    pub(crate) fn context_limit(&self, config: &Config) -> usize {
        let window = self.learnt(config).window;
        usize::try_from(window.unwrap_or(config.max_context as u64)).unwrap_or(usize::MAX)
    }
}

impl Adaptations {
    /// A 400 or 422 naming `max_tokens`, `temperature` or `stream_options`: renamed or dropped.
    fn adapt_to(&mut self, message: &str) -> bool {
        if self.adapt_temperature(message) {
            return true;
        }
        let flags = [
            ("'max_tokens'", &mut self.max_completion_tokens),
            ("stream_options", &mut self.omit_stream_options),
        ];
        let Some((_, flag)) = flags.into_iter().find(|(name, _)| message.contains(name)) else {
            return false;
        };
        !std::mem::replace(flag, true)
    }

    /// A 400 that names `temperature` in any quotes (OpenAI's `'temperature' does not support
    /// 0`, Anthropic's "`temperature` is deprecated for this model."): it is dropped, once.
    fn adapt_temperature(&mut self, message: &str) -> bool {
        let named = message.to_ascii_lowercase().contains("temperature");
        named && !std::mem::replace(&mut self.omit_temperature, true)
    }

    /// llama-cpp-python's validator rejects an assistant message whose `content` is `null`
    /// (the OpenAI shape for a reply of only tool calls), while others reject `""`. So `null`
    /// stays, unless a server's error names `content` while the history holds one: then `""`.
    fn adapt_null_content(&mut self, message: &str, messages: &[Message]) -> bool {
        let names_content = message.to_ascii_lowercase().contains("content");
        let null = |m: &Message| m.role == Role::Assistant && m.content.is_none();
        let has_null = messages.iter().any(null);
        let first_time = names_content && has_null && !self.empty_content;
        self.empty_content |= first_time;
        first_time
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::wire::request_body;

    fn check(adapt: &mut Adaptations, message: &str) -> (bool, Value) {
        let adapted = adapt.adapt_to(message);
        let config = Config::default();
        (
            adapted,
            adapt.request_body(&config, "m", &[Message::user("hi")], &[]),
        )
    }

    impl Adaptations {
        /// The adapted body, as `Quirks::adapted_body` makes it with these adaptations.
        fn request_body(
            &self,
            config: &Config,
            model: &str,
            messages: &[Message],
            tools: &[Value],
        ) -> Value {
            let quirks = Quirks::default();
            quirks.learnt(config).adaptations = *self;
            quirks.adapted_body(config, request_body(config, model, messages, tools))
        }
    }

    #[test]
    fn each_adaptation_happens_once_and_sticks() {
        let llm = &mut Adaptations::default();
        let body = llm.request_body(&Config::default(), "m", &[], &[]);
        assert_eq!(body["max_tokens"], 4096);
        assert_eq!(body["stream_options"]["include_usage"], true);
        let (adapted, body) = check(llm, "Unsupported parameter: 'max_tokens' is not supported");
        assert!(adapted);
        assert_eq!(
            (body.get("max_tokens"), &body["max_completion_tokens"]),
            (None, &json!(4096))
        );
        assert!(!check(llm, "Unsupported parameter: 'max_tokens'").0);
        let (adapted, body) = check(llm, "'temperature' does not support 0");
        assert!(adapted && body.get("temperature").is_none());
        let (adapted, body) = check(llm, "stream_options is not allowed");
        assert!(adapted && body.get("stream_options").is_none());
        assert!(!check(llm, "some other 400").0);
    }
}
