//! The HTTP side of the LLM client: the `ureq` agent (timeouts, trusted roots, proxy) and
//! reading what a failed answer says (`Retry-After`, the server's error message), and the two
//! ways Ctrl+C reaches a request: shutting the agent down, and a backoff sleep that gives way.
//!
//! The agent is built once, when `Llm::new` runs. Nothing here sends a request or decides
//! whether to retry; that is `llm.rs`.

use crate::core::config::Config;
use crate::core::event::Error;
use crossbeam_channel::{Receiver, RecvTimeoutError};
use serde_json::Value;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
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

pub fn agent(config: &Config) -> ureq::Agent {
    let is_https = config.base_url.starts_with("https://");
    // Loopback never goes through a proxy: the demo and local servers (Ollama, llama.cpp,
    // vLLM) must work even with HTTPS_PROXY set. Elsewhere ureq reads *_PROXY and NO_PROXY.
    let proxy = match is_loopback(&config.base_url) {
        true => None,
        false => ureq::Proxy::try_from_env(),
    };
    let roots = match is_https {
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

/// `Retry-After` in seconds, if it is a number that means something (`nan`, `inf` or a date
/// are ignored: the usual backoff applies). Capped at 30 s.
pub fn retry_after(headers: &ureq::http::HeaderMap) -> Option<Duration> {
    let text = headers.get("retry-after")?.to_str().ok()?;
    let secs: f64 = text
        .trim()
        .parse()
        .ok()
        .filter(|secs: &f64| secs.is_finite())?;
    Some(Duration::from_secs_f64(secs.clamp(0.0, 30.0)))
}

/// The body of an error answer, as text. Only the first 64 KiB are read: enough for any real
/// message, and no memory hazard. The whole of it goes to `--trace`; the user sees `headline`.
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

/// A message as one short line for a notice: an HTML page's title, or else the first line
/// that says something, cut at a word near `ONE_LINE` characters.
pub fn headline(message: &str) -> String {
    const ONE_LINE: usize = 200;
    let line = match html_title(message) {
        Some(title) => title,
        None => (message.lines().map(str::trim))
            .find(|line| !line.is_empty())
            .unwrap_or(""),
    };
    crate::tools::support::text::cut_at_word(line, ONE_LINE)
}

/// The `<title>` of an HTML page, if `text` is one.
pub fn html_title(text: &str) -> Option<&str> {
    let lower = text.to_ascii_lowercase();
    let start = lower.find("<title>")? + "<title>".len();
    let end = start + lower[start..].find("</title>")?;
    Some(text[start..end].trim()).filter(|title| !title.is_empty())
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
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
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
    fn headline_is_short_and_says_something() {
        let page =
            "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>nginx</body>\n</html>";
        assert_eq!(headline(page), "502 Bad Gateway");
        assert_eq!(headline("\n\n  first words\nsecond line"), "first words");
        let long = "word ".repeat(2000);
        let line = headline(&long);
        assert!(line.len() <= 205 && line.ends_with(" …"), "{line}");
        let unicode = headline(&"Ünïcode ".repeat(100));
        assert!(unicode.chars().count() <= 202, "{unicode}");
    }
}
