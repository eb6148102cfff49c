//! The HTTP side of the LLM client: the `ureq` agent (built by `Llm::new`, and again after a
//! Ctrl+C shut it down; roots and proxy from `tools/support/net.rs`), POST (and its redirects),
//! and which connection errors a second try could fix. Whether to retry is `llm.rs`'s; reading
//! an answer `sse.rs`'s, the quirks' (a 200 that is not a stream) or
//! `tools/support/provider_errors.rs`'s (an error answer).

use crate::core::config::Config;
use crate::tools::support::net;
use std::sync::Arc;
use std::time::{Duration, Instant};
use ureq::tls::TlsConfig;

/// How long a reply may take, checked as its bytes arrive (so a trickle cannot dodge it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Longest wait between two `data:` events; comments such as `: ping` do not count.
    pub(crate) idle: Duration,
    /// When the whole reply must be in; `None` for no limit.
    pub(crate) deadline: Option<Instant>,
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

pub(crate) fn agent(config: &Config) -> ureq::Agent {
    let (proxy, roots) = (
        net::proxy_for(&config.base_url),
        net::roots_for(&config.base_url),
    );
    // ureq follows no redirect: `post` follows a 307 or 308 to the same server itself.
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_recv_response(Some(config.idle_timeout))
        // A stream silent for this long counts as broken, and the request is retried.
        .timeout_per_read(Some(config.idle_timeout))
        .proxy(proxy)
        .tls_config(TlsConfig::builder().root_certs(roots).build())
        .build()
        .into()
}

/// Where a chat-completions request goes, `{base}/chat/completions`, with the key as a bearer
/// token; another dialect says otherwise (`Extras::dialect`).
pub(crate) fn endpoint(config: &Config) -> (String, Vec<(&'static str, String)>) {
    let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
    (url, bearer(config))
}

/// The key as a bearer token (Responses sends it so too). Local servers run without a key;
/// sending "Bearer " with nothing after it confuses some.
pub(crate) fn bearer(config: &Config) -> Vec<(&'static str, String)> {
    let header = |key: &String| ("Authorization", format!("Bearer {key}"));
    config.api_key.iter().map(header).collect()
}

/// POST the body's pieces in turn, under their length (some providers refuse chunked uploads),
/// sent again with the key where a 307 or 308 points to the same scheme, host and port (ureq
/// would not resend a body), at most 5 times. Any other 3xx is the answer.
pub fn post(http: &ureq::Agent, url: &str, auth: &[(&str, String)], body: &[Arc<str>]) -> Answer {
    let (mut url, mut hops) = (url.to_string(), 0);
    loop {
        let answer = send(http, &url, auth, body)?;
        match net::same_origin_redirect(&url, &answer).filter(|_| hops < 5) {
            Some(next) => (url, hops) = (next, hops + 1),
            None => return Ok(answer),
        }
    }
}

fn send(http: &ureq::Agent, url: &str, auth: &[(&str, String)], body: &[Arc<str>]) -> Answer {
    let mut request = http.post(url);
    for (name, value) in auth {
        request = request.header(*name, value);
    }
    let length: usize = body.iter().map(|piece| piece.len()).sum();
    request
        .header("Content-Type", "application/json")
        .header("Accept", "text/event-stream")
        .header("Content-Length", length)
        .send(ureq::SendBody::from_reader(&mut net::Pieces::new(body)))
}

pub(crate) fn is_transient(error: &ureq::Error) -> bool {
    use ureq::Error::{ConnectionFailed, HostNotFound, Io, Protocol, Timeout};
    matches!(
        error,
        Io(_) | Timeout(_) | ConnectionFailed | HostNotFound | Protocol(_)
    )
}
