//! What a failed answer means: adapt the request, retry it, or give up with the server's own
//! words. Part of `Llm` (see `llm.rs`); nothing here sends a request.

use super::{Adaptations, Failure, Llm};
use crate::error::Error;
use std::time::Duration;

impl Llm {
    /// A non-200 answer: adapt to a known 400 once, retry what is transient, fail the rest.
    pub(super) fn status_failure(
        &self,
        status: u16,
        message: &str,
        wait: Option<Duration>,
    ) -> Failure {
        if status == 400 && self.adapt_to(message) {
            return Failure::Adapted;
        }
        if (status == 400 || status == 413) && is_context_overflow(status, message) {
            return Failure::Fatal(Error::ContextTooLong(message.to_string()));
        }
        if status == 408 || status == 429 || status >= 500 {
            let why = format!("HTTP {status}: {message}");
            return Failure::Retryable { why, wait };
        }
        if status == 404 {
            let why = format!("HTTP 404: {message} (check the base URL and the model name)");
            return Failure::ModelMissing(why);
        }
        let hint = match status {
            401 => " (the API key was rejected; check CORECODER_API_KEY)",
            403 => " (the key may not have access to this model)",
            _ => "",
        };
        Failure::Fatal(Error::Api(format!("HTTP {status}: {message}{hint}")))
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
        "too many tokens",
        "reduce the length",
    ];
    status == 413 || phrases.iter().any(|p| message.contains(p))
}

/// Connection-level errors: retry what a second try could fix.
pub(super) fn transport_failure(error: ureq::Error) -> Failure {
    match error {
        ureq::Error::Io(_)
        | ureq::Error::Timeout(_)
        | ureq::Error::ConnectionFailed
        | ureq::Error::HostNotFound
        | ureq::Error::Protocol(_) => Failure::Retryable {
            why: format!("request failed: {error}"),
            wait: None,
        },
        other => Failure::Fatal(Error::Api(format!("request failed: {other}"))),
    }
}
