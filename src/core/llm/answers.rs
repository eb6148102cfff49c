//! What a failed answer means: adapt the request, retry it, or give up with the server's own
//! words. Part of `Llm` (see `llm.rs`); nothing here sends a request.

use super::{Adaptations, Failure, Llm};
use crate::core::event::Error;
use crate::core::http;
use crate::core::message::{Message, Role};
use regex::Regex;
use std::time::Duration;

impl Llm {
    /// A non-200 answer: adapt to a known 400 once, retry what is transient, fail the rest.
    /// `message` is the server's whole message; what the user is shown is one line of it.
    pub(super) fn status_failure(
        &self,
        status: u16,
        message: &str,
        wait: Option<Duration>,
        (url, messages): (&str, &[Message]),
    ) -> Failure {
        if status == 400 && self.adapt_to(message) {
            return Failure::Adapted;
        }
        if matches!(status, 400 | 422 | 500) && self.adapt_null_content(message, messages) {
            return Failure::Adapted;
        }
        if (status == 400 || status == 413) && is_context_overflow(status, message) {
            self.learn_context_limit(message);
            return Failure::Fatal(Error::ContextTooLong(message.to_string()));
        }
        let said = http::headline(message);
        if status == 408 || status == 429 || status >= 500 {
            let why = format!("HTTP {status}: {said}");
            return Failure::Retryable { why, wait };
        }
        if status == 404 {
            let model = self.model();
            let why = format!(
                "HTTP 404: {said} (POST {url}, model {model}: check the base URL and the model name)"
            );
            return Failure::ModelMissing(why);
        }
        let from = match self.config.api_key_from.as_str() {
            "" => "CORECODER_API_KEY".to_string(),
            from => from.to_string(),
        };
        let hint = match status {
            401 => format!(
                " (the API key from {from} was rejected by {})",
                http::host(url)
            ),
            403 => " (the key may not have access to this model)".to_string(),
            _ => String::new(),
        };
        Failure::Fatal(Error::Api(format!("HTTP {status}: {said}{hint}")))
    }

    /// llama-cpp-python's validator rejects an assistant message whose `content` is `null`
    /// (the OpenAI shape for a reply of only tool calls), while others reject `""`. So `null`
    /// stays, unless a server's error names `content` while the history holds one: then `""`.
    fn adapt_null_content(&self, message: &str, messages: &[Message]) -> bool {
        let names_content = message.to_ascii_lowercase().contains("content");
        let has_null = (messages.iter()).any(|m| m.role == Role::Assistant && m.content.is_none());
        let Ok(mut adapt) = self.adaptations.lock() else {
            return false;
        };
        let first_time = names_content && has_null && !adapt.empty_content;
        adapt.empty_content |= first_time;
        first_time
    }

    /// The provider said the prompt does not fit and how big its window is: from now on the
    /// session compacts for that window (if it is smaller than the configured one).
    fn learn_context_limit(&self, message: &str) {
        let Some(limit) = overflow_numbers(message).limit else {
            return;
        };
        if let Ok(mut adapt) = self.adaptations.lock() {
            let known = adapt
                .context_limit
                .unwrap_or(self.config.max_context as u64);
            adapt.context_limit = Some(known.min(limit));
        }
    }

    /// The context window to compact for: the configured one, or the provider's if smaller.
    pub fn context_limit(&self) -> usize {
        let learnt = self.adaptations().context_limit;
        let limit = learnt.unwrap_or(self.config.max_context as u64);
        usize::try_from(limit).unwrap_or(usize::MAX)
    }

    /// Providers disagree on three request fields; each is dropped or renamed at most once.
    pub(super) fn adapt_to(&self, message: &str) -> bool {
        let Ok(mut adapt) = self.adaptations.lock() else {
            return false;
        };
        let flag = if message.contains("'max_tokens'") {
            &mut adapt.max_completion_tokens
        } else if message.contains("'temperature'") {
            &mut adapt.omit_temperature
        } else if message.contains("stream_options") {
            &mut adapt.omit_stream_options
        } else {
            return false;
        };
        let first_time = !*flag;
        *flag = true;
        first_time
    }

    pub(super) fn adaptations(&self) -> Adaptations {
        self.adaptations.lock().map(|a| *a).unwrap_or_default()
    }
}

/// How providers word "your prompt does not fit": OpenAI, DeepSeek, Qwen and vLLM say
/// "maximum context length", Anthropic "prompt is too long"; a 413 is always about size.
pub(super) fn is_context_overflow(status: u16, message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    let phrases = [
        "context_length_exceeded",
        "maximum context length",
        "context length",
        "context window",
        "prompt is too long",
        "context size",
        "too many tokens",
        "reduce the length",
    ];
    status == 413 || phrases.iter().any(|p| message.contains(p))
}

/// What a "does not fit" message says in numbers, where it says them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overflow {
    /// The tokens a prompt may have, the completion's share already taken out.
    pub limit: Option<u64>,
    /// The tokens the prompt had, as the provider counted them.
    pub prompt: Option<u64>,
}

/// Read the window and the prompt's size from the wordings of OpenAI, DeepSeek, vLLM and
/// llama-cpp-python ("maximum context length is N tokens. However, you requested T tokens
/// (P in the messages, C in the completion)" or "your messages resulted in P tokens"),
/// llama.cpp ("request (P tokens) exceeds the available context size (N tokens)") and
/// Anthropic ("prompt is too long: P tokens > N maximum").
pub fn overflow_numbers(message: &str) -> Overflow {
    let find = |patterns: &[&str]| {
        patterns.iter().find_map(|pattern| {
            let regex = Regex::new(pattern).ok()?;
            regex
                .captures(message)?
                .get(1)?
                .as_str()
                .parse::<u64>()
                .ok()
        })
    };
    let window = find(&[
        r"maximum context length is (\d+)",
        r"context size \((\d+) tokens\)",
        r"context window of (\d+)",
        r"tokens > (\d+) maximum",
    ]);
    let prompt = find(&[
        r"\((\d+) in the messages",
        r"resulted in (\d+) tokens",
        r"request \((\d+) tokens\)",
        r"(\d+) tokens > \d+ maximum",
    ]);
    let completion = find(&[r"(\d+) in the completion"]).unwrap_or(0);
    Overflow {
        limit: window.map(|window| window.saturating_sub(completion)),
        prompt,
    }
}

/// Connection-level errors: retry what a second try could fix. Each names the host, since
/// the error alone ("connection failed") does not say which one.
pub(super) fn transport_failure(error: ureq::Error, url: &str) -> Failure {
    let host = http::host(url);
    match error {
        ureq::Error::Io(_)
        | ureq::Error::Timeout(_)
        | ureq::Error::ConnectionFailed
        | ureq::Error::HostNotFound
        | ureq::Error::Protocol(_) => Failure::Retryable {
            why: format!("request to {host} failed: {error}"),
            wait: None,
        },
        other => Failure::Fatal(Error::Api(format!("request to {host} failed: {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_numbers_in_each_wording() {
        let openai = "This model's maximum context length is 8192 tokens. However, your \
                      messages resulted in 10000 tokens. Please reduce the length of the messages.";
        let vllm = "This model's maximum context length is 4096 tokens. However, you requested \
                    5000 tokens (4000 in the messages, 1000 in the completion).";
        let llama_cpp = "request (5000 tokens) exceeds the available context size (4096 tokens), \
                         try increasing it";
        let anthropic = "prompt is too long: 210000 tokens > 200000 maximum";
        let both = |limit, prompt| Overflow {
            limit: Some(limit),
            prompt: Some(prompt),
        };
        assert_eq!(overflow_numbers(openai), both(8192, 10000));
        assert_eq!(overflow_numbers(vllm), both(3096, 4000));
        assert_eq!(overflow_numbers(llama_cpp), both(4096, 5000));
        assert_eq!(overflow_numbers(anthropic), both(200000, 210000));
        assert_eq!(overflow_numbers("too many tokens"), Overflow::default());
    }
}
