//! The HTTP side of the LLM client: the `ureq` agent (timeouts, the system's roots and proxy
//! from `tools/support/net.rs`); POST; what a failed answer says (`Retry-After`, the server's
//! error message); and the two ways Ctrl+C reaches a request: shutting the agent down, and a
//! sleep that gives way.
//!
//! The agent is built once, when `Llm::new` runs. Nothing here decides whether to retry; that
//! is `llm.rs`. Event streams are read by `sse.rs`; a 200 that is not one, by `Extras::quirks`.

use crate::core::config::Config;
use crate::core::event::Error;
use crate::tools::support::net;
use crossbeam_channel::{Receiver, RecvTimeoutError};
use serde_json::Value;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use ureq::tls::{RootCerts, TlsConfig};

/// How long a reply may take, checked as its bytes arrive (so a trickle cannot dodge it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Longest wait between two `data:` events; comments such as `: ping` do not count.
    pub idle: Duration,
    /// When the whole reply must be in; `None` for no limit.
    pub deadline: Option<Instant>,
}

impl Limits {
    /// No limit at all (replays from memory: tests, benches, fuzzing).
    pub const NONE: Limits = Limits {
        idle: Duration::MAX,
        deadline: None,
    };
}

/// What a request brings back: an answer of any status, or a connection-level error.
type Answer = Result<ureq::http::Response<ureq::Body>, ureq::Error>;

pub fn agent(config: &Config) -> ureq::Agent {
    // Loopback never goes through a proxy: the demo and local servers (Ollama, llama.cpp,
    // vLLM) must work even with HTTPS_PROXY set. Elsewhere ureq reads *_PROXY and NO_PROXY.
    let proxy = ureq::Proxy::try_from_env().filter(|_| !net::is_loopback(&config.base_url));
    let roots = match config.base_url.starts_with("https://") {
        true => net::system_roots(),
        false => RootCerts::WebPki,
    };
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_recv_response(Some(config.idle_timeout))
        // A stream silent for this long counts as broken, and the request is retried.
        .timeout_per_read(Some(config.idle_timeout))
        .proxy(proxy)
        .tls_config(TlsConfig::builder().root_certs(roots).build())
        .build()
        .into()
}

/// POST `body` to `url`, with the key, if there is one, in its header.
pub fn post(http: &ureq::Agent, url: &str, key: Option<&str>, body: &Value) -> Answer {
    let mut request = http.post(url);
    // Local servers run without a key; sending "Bearer " with nothing after it confuses some.
    if let Some(key) = key {
        request = request.header("Authorization", &format!("Bearer {key}"));
    }
    let request = request.header("Content-Type", "application/json");
    request
        .header("Accept", "text/event-stream")
        .send(body.to_string())
}

/// A connection-level error a second try could fix.
pub fn is_transient(error: &ureq::Error) -> bool {
    use ureq::Error::{ConnectionFailed, HostNotFound, Io, Protocol, Timeout};
    matches!(
        error,
        Io(_) | Timeout(_) | ConnectionFailed | HostNotFound | Protocol(_)
    )
}

/// `Retry-After` in seconds, if it is a number that means something (`nan`, `inf` or a date
/// are ignored: the usual backoff applies). Capped at 30 s.
pub fn retry_after(headers: &ureq::http::HeaderMap) -> Option<Duration> {
    let text = headers.get("retry-after")?.to_str().ok()?;
    let secs: f64 = text.trim().parse().ok()?;
    let secs = Some(secs).filter(|secs| secs.is_finite())?;
    Some(Duration::from_secs_f64(secs.clamp(0.0, 30.0)))
}

/// The body of an error answer, as text. Only the first 64 KiB are read: enough for any real
/// message, and no memory hazard. The whole of it goes to `--trace`; the user sees its headline.
pub fn error_body(reader: impl Read) -> String {
    let mut bytes = Vec::new();
    let _ = reader.take(64 * 1024).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The server's own words in an error body (`json_error_message`), or the body itself. Whole,
/// so the 400 adaptations can match any of it.
pub fn message_in(body: &str) -> String {
    match json_error_message(body) {
        Some(text) => text,
        None if body.trim().is_empty() => "(empty response body)".to_string(),
        None => body.to_string(),
    }
}

/// The one reader of a provider's JSON error, for an error answer and for an error inside the
/// stream (`sse.rs`): `{"error": {"message": …}}`, `{"error": "…"}` or `{"message": …}`.
pub fn json_error_message(body: &str) -> Option<String> {
    let parsed: Value = serde_json::from_str(body).ok()?;
    let error = parsed.get("error").unwrap_or(&parsed);
    let message = error.get("message").unwrap_or(error).as_str();
    message.map(str::to_string)
}

/// Wakes a request blocked on a silent server: shutting the agent down fails its reads.
pub fn shut_down_on_cancel(http: &ureq::Agent, cancel: &AtomicBool, finished: &Receiver<()>) {
    let tick = Duration::from_millis(50);
    while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(tick) {
        if cancel.load(Ordering::Relaxed) {
            http.clone().shutdown();
            return;
        }
    }
}

pub fn sleep_unless_cancelled(wait: Duration, cancel: &AtomicBool) -> Result<(), Error> {
    let step = Duration::from_millis(50);
    let mut waited = Duration::ZERO;
    while waited < wait {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        std::thread::sleep(step.min(wait - waited));
        waited += step;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_come_from_the_body() {
        let openai = r#"{"error":{"message":"Incorrect API key","type":"x"}}"#;
        assert_eq!(message_in(openai), "Incorrect API key");
        assert_eq!(message_in(r#"{"error":"overloaded"}"#), "overloaded");
        assert_eq!(message_in("Bad Gateway"), "Bad Gateway");
        assert_eq!(message_in(""), "(empty response body)");
    }
}
