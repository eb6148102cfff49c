//! The HTTP side of the LLM client: the `ureq` agent (timeouts, trusted roots, proxy); reading
//! what an answer says when it is not a stream (`Retry-After`, the server's error message, a
//! "does not fit" message's numbers, a page, a JSON error or a whole completion in a 200); and
//! the two ways Ctrl+C reaches a request: shutting the agent down, and a sleep that gives way.
//!
//! The agent is built once, when `Llm::new` runs. Nothing here sends a request or decides
//! whether to retry; that is `llm.rs`. Event streams are read by `sse.rs`.

use crate::core::config::Config;
use crate::core::event::Error;
use crate::tools::support::text;
use crossbeam_channel::{Receiver, RecvTimeoutError};
use regex::Regex;
use serde_json::Value;
use std::io::{BufRead, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};

/// Where Linux distributions, macOS Homebrew and the BSDs keep the system's CA bundle.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
    "/usr/local/etc/openssl/cert.pem",
    "/opt/homebrew/etc/openssl@3/cert.pem",
];
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
/// A whole answer is read up to this size; more than any real completion, and bounded.
const WHOLE_BODY_LIMIT: u64 = 16 * 1024 * 1024;
/// Blank lines read before the first line that says what the body is.
const LEADING_BLANK_LINES: usize = 8;

pub fn agent(config: &Config) -> ureq::Agent {
    // Loopback never goes through a proxy: the demo and local servers (Ollama, llama.cpp,
    // vLLM) must work even with HTTPS_PROXY set. Elsewhere ureq reads *_PROXY and NO_PROXY.
    let proxy = ureq::Proxy::try_from_env().filter(|_| !is_loopback(&config.base_url));
    let roots = match config.base_url.starts_with("https://") {
        true => root_certs(),
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

/// The system's roots (so corporate CAs work) plus `SSL_CERT_FILE`; Mozilla's list if none.
fn root_certs() -> RootCerts {
    let mut certs: Vec<Certificate<'static>> = Vec::new();
    let extra = std::env::var("SSL_CERT_FILE").ok();
    let system = SYSTEM_BUNDLES
        .iter()
        .find(|path| std::path::Path::new(path).exists());
    for path in extra.iter().map(String::as_str).chain(system.copied()) {
        let Ok(pem) = std::fs::read(path) else {
            continue;
        };
        for item in ureq::tls::parse_pem(&pem).flatten() {
            if let PemItem::Certificate(cert) = item {
                certs.push(cert);
            }
        }
    }
    match certs.is_empty() {
        true => RootCerts::WebPki,
        false => RootCerts::new_with_certs(&certs),
    }
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

/// The answer's content type, lower case (`""` when it has none).
pub fn content_type(answer: &ureq::http::Response<ureq::Body>) -> String {
    let value = answer.headers().get("content-type");
    let value = value.and_then(|value| value.to_str().ok()).unwrap_or("");
    value.to_ascii_lowercase()
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
/// message, and no memory hazard. The whole of it goes to `--trace`; the user sees `text::headline`.
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

/// The start of a 200 body: its first line that is not blank (with the blank ones before it),
/// `WHOLE_BODY_LIMIT` bytes at most in all.
pub fn first_line(body: &mut dyn BufRead) -> std::io::Result<Vec<u8>> {
    let mut start = Vec::new();
    for _ in 0..LEADING_BLANK_LINES {
        let room = WHOLE_BODY_LIMIT.saturating_sub(start.len() as u64);
        let read = (&mut *body).take(room).read_until(b'\n', &mut start)?;
        if read == 0 || !start.trim_ascii().is_empty() {
            break;
        }
    }
    Ok(start)
}

/// Whether a body that starts with `start` is an event stream, whatever its content type says
/// (an empty body is left to the SSE reader, which calls it a broken stream).
pub fn is_event_stream(content_type: &str, start: &[u8]) -> bool {
    let start = String::from_utf8_lossy(start.trim_ascii_start());
    let start = start.trim_start_matches('\u{feff}');
    let fields = ["data:", "event:", "id:", "retry:", ":"];
    let is_event = fields.iter().any(|field| start.starts_with(field));
    is_event || start.is_empty() || content_type.contains("text/event-stream")
}

/// The rest of a body that is not a stream, after its `start`, as text: `WHOLE_BODY_LIMIT`
/// bytes at most in all, however much the server sends.
pub fn read_whole(start: &[u8], body: &mut dyn BufRead) -> String {
    let mut bytes = start.to_vec();
    let room = WHOLE_BODY_LIMIT.saturating_sub(bytes.len() as u64);
    let _ = (&mut *body).take(room).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// A body that is neither a stream nor a whole completion (`sse::whole_completion`) fails at
/// once with what the server said: the same request would get the same page.
pub fn not_a_stream(content_type: &str, text: &str) -> Error {
    let fail = Error::Api;
    let json: Option<Value> = serde_json::from_str(text).ok();
    match json {
        Some(json) if json.get("error").is_some_and(|e| !e.is_null()) => {
            let message = text::headline(&message_in(text));
            fail(format!("the server answered with an error: {message}"))
        }
        _ if content_type.contains("html") || text.starts_with('<') => {
            let (kind, title) = (or(content_type, "text/html"), text::html_title(text));
            let title = title.unwrap_or("no title");
            fail(format!(
                "the server answered {kind} ({title}), not an event stream: check the base URL"
            ))
        }
        _ => fail(format!(
            "the server answered {}, not an event stream ({}): check the base URL",
            or(content_type, "no content type"),
            text::headline(text)
        )),
    }
}

/// `text`, or `otherwise` when it is empty.
fn or<'a>(text: &'a str, otherwise: &'a str) -> &'a str {
    if text.is_empty() { otherwise } else { text }
}

/// How providers word "your prompt does not fit": OpenAI, DeepSeek, Qwen and vLLM say
/// "maximum context length", Anthropic "prompt is too long"; a 413 is always about size.
pub fn is_context_overflow(status: u16, message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    let phrases = "context_length_exceeded|maximum context length|context length|context window\
                   |prompt is too long|context size|too many tokens|reduce the length";
    status == 413 || phrases.split('|').any(|p| message.contains(p))
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
            let captures = Regex::new(pattern).ok()?.captures(message)?;
            captures.get(1)?.as_str().parse::<u64>().ok()
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

pub fn is_loopback(url: &str) -> bool {
    let host = host(url);
    let ip = host.parse::<std::net::IpAddr>();
    host == "localhost" || ip.is_ok_and(|ip| ip.is_loopback())
}

/// The host part of a URL (`https://openrouter.ai/api/v1` → `openrouter.ai`, `[::1]` → `::1`).
pub fn host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let host_port = rest.split(['/', '?', '#']).next().unwrap_or("");
    // userinfo (`user:pass@host`) is not the host.
    let host_port = host_port.rsplit('@').next().unwrap_or(host_port);
    match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host_port.split(':').next().unwrap_or(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_of_a_url() {
        assert_eq!(host("https://openrouter.ai/api/v1"), "openrouter.ai");
        assert_eq!(host("http://user:pw@127.0.0.1:8080/v1"), "127.0.0.1");
        assert_eq!(host("http://[::1]:8000"), "::1");
        assert_eq!(host("https://example.com?x=1"), "example.com");
        assert_eq!(host("openrouter.ai/api"), "openrouter.ai");
    }

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback("http://127.0.0.1:8080/v1"));
        assert!(is_loopback("http://localhost:11434/v1"));
        assert!(is_loopback("http://[::1]:8000/v1"));
        assert!(!is_loopback("https://api.openai.com/v1"));
        assert!(!is_loopback("https://127.example.com/v1"));
    }

    #[test]
    fn error_messages_come_from_the_body() {
        let openai = r#"{"error":{"message":"Incorrect API key","type":"x"}}"#;
        assert_eq!(message_in(openai), "Incorrect API key");
        assert_eq!(message_in(r#"{"error":"overloaded"}"#), "overloaded");
        assert_eq!(message_in("Bad Gateway"), "Bad Gateway");
        assert_eq!(message_in(""), "(empty response body)");
    }

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
