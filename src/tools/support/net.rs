//! What a connection needs that is no part of the chat protocol: the system's trusted roots
//! (where each system keeps its CA bundle), the host part of a URL, whether it is loopback, a
//! failed connection no retry can mend, and a request body read from its pieces. The LLM
//! client (`client/http.rs`) builds its agent and sends its requests with these; nothing here
//! opens a socket.

use std::io::Read;
use std::sync::Arc;
use ureq::tls::{Certificate, PemItem, RootCerts};

/// Where Linux distributions, macOS Homebrew and the BSDs keep the system's CA bundle.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
    "/usr/local/etc/openssl/cert.pem",
    "/opt/homebrew/etc/openssl@3/cert.pem",
];

/// The system's roots (so corporate CAs work) plus `SSL_CERT_FILE`; Mozilla's list if none.
pub(crate) fn system_roots() -> RootCerts {
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

/// The roots to check `base_url`'s certificate with: the system's for HTTPS (none is needed
/// for plain HTTP, so the system's bundle is not even read).
pub(crate) fn roots_for(base_url: &str) -> RootCerts {
    match base_url.starts_with("https://") {
        true => system_roots(),
        false => RootCerts::WebPki,
    }
}

/// The proxy a request to `url` goes through: `ALL_PROXY`, `HTTPS_PROXY` or `HTTP_PROXY` as
/// ureq reads them, unless `NO_PROXY` names the host. Loopback never does: the demo and local
/// servers (Ollama, llama.cpp, vLLM) must work even with `HTTPS_PROXY` set.
pub(crate) fn proxy_for(url: &str) -> Option<ureq::Proxy> {
    let uri = url.parse::<ureq::http::Uri>().ok()?;
    let proxy = ureq::Proxy::try_from_env()?;
    (!is_loopback(url) && !proxy.is_no_proxy(&uri)).then_some(proxy)
}

/// A failed connection as the user reads it: the host and port, the proxy in the way if any,
/// what ureq said, and why no retry can mend it; `true` beside it when none can.
pub(crate) fn failure(error: &ureq::Error, url: &str) -> (String, bool) {
    let proxy = proxy_for(url).map(|p| format!(" through the proxy {}:{}", p.host(), p.port()));
    let hopeless = hopeless(error, url, proxy.is_some());
    let (target, via) = (host_port(url), proxy.unwrap_or_default());
    let why = format!("request to {target}{via} failed: {error}{hopeless}");
    (why, !hopeless.is_empty())
}

/// Where a 307 or 308 answer to `url` may be followed with the body and the key: its
/// `Location`, absolute or a path, when that keeps the scheme, host and port; `None` for any
/// other answer, or another place (`provider_errors::redirected` names it).
pub(crate) fn same_origin_redirect<B>(
    url: &str,
    answer: &ureq::http::Response<B>,
) -> Option<String> {
    let status = answer.status().as_u16();
    let location = answer.headers().get("location")?.to_str().ok()?;
    let origin = |url: &str| {
        let (scheme, rest) = url.split_once("://")?;
        let authority = rest.split(['/', '?', '#']).next()?.to_ascii_lowercase();
        let default = [("http", ":80"), ("https", ":443")]
            .into_iter()
            .find(|(s, _)| *s == scheme);
        let authority = default.map_or(&*authority, |(_, port)| authority.trim_end_matches(port));
        Some((scheme.to_ascii_lowercase(), authority.to_string()))
    };
    let (scheme, authority) = origin(url)?;
    let target = match location.strip_prefix('/') {
        Some(path) if !path.starts_with('/') => format!("{scheme}://{authority}/{path}"),
        _ => location.to_string(),
    };
    let same = origin(&target)? == (scheme, authority);
    (matches!(status, 307 | 308) && same).then_some(target)
}

/// `host:port` of a URL, the port its scheme's when it names none.
pub(crate) fn host_port(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let port = authority
        .rsplit_once(':')
        .map(|(_, port)| port)
        .filter(|p| !p.contains(']'));
    let default = if url.starts_with("https://") {
        "443"
    } else {
        "80"
    };
    match host(url).contains(':') {
        true => format!("[{}]:{}", host(url), port.unwrap_or(default)),
        false => format!("{}:{}", host(url), port.unwrap_or(default)),
    }
}

pub fn is_loopback(url: &str) -> bool {
    let host = host(url);
    let ip = host.parse::<std::net::IpAddr>();
    host == "localhost" || ip.is_ok_and(|ip| ip.is_loopback())
}

/// Why a failed connection is not worth a retry, as ` (…)` to end its message; "" when a
/// second try could mend it. Nothing listening on loopback is a local server (or, `proxied`,
/// a local proxy: any proxy refusing is one not running) not started, and a
/// host the resolver does not know (std words it "failed to lookup address information: " and
/// `gai_strerror(EAI_NONAME)`) stays unknown: both were retried for 15 s. A certificate rustls
/// refused (its words: "invalid peer certificate: " and why) is refused again. A refusal
/// elsewhere (a server restarting) and a lookup that may pass (`EAI_AGAIN`) are still retried.
pub(crate) fn hopeless(error: &ureq::Error, url: &str, proxied: bool) -> &'static str {
    use std::io::ErrorKind;
    const NO_HOST: &str = " (no such host: check the base URL)";
    // SAFETY: gai_strerror returns a static NUL-terminated string for any code.
    let no_name = unsafe { std::ffi::CStr::from_ptr(libc::gai_strerror(libc::EAI_NONAME)) };
    let said = error.to_string();
    match error {
        ureq::Error::Io(e) if e.kind() == ErrorKind::ConnectionRefused && proxied => {
            " (nothing listens there: is the proxy running? HTTPS_PROXY, ALL_PROXY, NO_PROXY)"
        }
        ureq::Error::Io(e) if e.kind() == ErrorKind::ConnectionRefused && is_loopback(url) => {
            " (nothing listens there: is the server running?)"
        }
        _ if said.contains("certificate") => {
            " (the server's TLS certificate was refused; a private CA goes in SSL_CERT_FILE)"
        }
        ureq::Error::Io(_) if said.ends_with(&*no_name.to_string_lossy()) => NO_HOST,
        ureq::Error::HostNotFound => NO_HOST,
        _ => "",
    }
}

/// The host part of a URL (`https://openrouter.ai/api/v1` → `openrouter.ai`, `[::1]` → `::1`).
pub(crate) fn host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let host_port = rest.split(['/', '?', '#']).next().unwrap_or("");
    // userinfo (`user:pass@host`) is not the host.
    let host_port = host_port.rsplit('@').next().unwrap_or(host_port);
    match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host_port.split(':').next().unwrap_or(""),
    }
}

/// A request body read as one stream from the pieces it is kept in (chat completions' messages
/// are each serialised once and shared: `extras/dialect/messages_json.rs`), so a history of
/// megabytes is not copied into one string every round. Each `read` fills the buffer it is
/// given: ureq writes to the socket once a read, and a piece may be a single comma.
pub(crate) struct Pieces<'a> {
    rest: &'a [Arc<str>],
    at: usize,
}

impl<'a> Pieces<'a> {
    pub fn new(pieces: &'a [Arc<str>]) -> Pieces<'a> {
        Pieces {
            rest: pieces,
            at: 0,
        }
    }
}

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut filled = 0;
        while let Some(piece) = self.rest.first().filter(|_| filled < buf.len()) {
            let bytes = &piece.as_bytes()[self.at..];
            let n = bytes.len().min(buf.len() - filled);
            buf[filled..filled + n].copy_from_slice(&bytes[..n]);
            (filled, self.at) = (filled + n, self.at + n);
            if self.at == piece.len() {
                (self.rest, self.at) = (&self.rest[1..], 0);
            }
        }
        Ok(filled)
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
    fn pieces_read_as_their_concatenation_each_read_filling_the_buffer() {
        let pieces: Vec<Arc<str>> = ["{\"a\":[", "1", ",", "", "22", "]}"]
            .into_iter()
            .map(Arc::from)
            .collect();
        for size in [1, 2, 3, 100] {
            let (mut reader, mut out, mut buf) = (Pieces::new(&pieces), vec![], vec![0; size]);
            loop {
                let n = reader.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&buf[..n]);
                // Only the last read may come short: each one is a write to the socket.
                assert!(n == size || out.len() == 12, "read {n} of {size}");
            }
            assert_eq!(String::from_utf8(out).unwrap(), "{\"a\":[1,22]}");
        }
        assert_eq!(Pieces::new(&[]).read(&mut [0; 4]).unwrap(), 0);
    }

    #[test]
    fn host_and_port_of_a_url() {
        assert_eq!(
            host_port("https://openrouter.ai/api/v1"),
            "openrouter.ai:443"
        );
        assert_eq!(host_port("http://u:p@127.0.0.1:8080/v1"), "127.0.0.1:8080");
        assert_eq!(host_port("http://[::1]:8000/v1"), "[::1]:8000");
        assert_eq!(host_port("http://[::1]/v1"), "[::1]:80");
    }

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback("http://127.0.0.1:8080/v1"));
        assert!(is_loopback("http://localhost:11434/v1"));
        assert!(is_loopback("http://[::1]:8000/v1"));
        assert!(!is_loopback("https://api.openai.com/v1"));
        assert!(!is_loopback("https://127.example.com/v1"));
    }

    /// Refused on loopback and an unknown host end at once; the same refusal elsewhere, a
    /// lookup that may pass and a timeout are retried (`hopeless` says nothing).
    #[test]
    fn what_no_retry_can_mend() {
        use std::io::{Error as Io, ErrorKind};
        let refused = || ureq::Error::Io(Io::new(ErrorKind::ConnectionRefused, "refused"));
        // As std words a failed `getaddrinfo`: its fixed words, then the C library's.
        let lookup = |code: libc::c_int| {
            // SAFETY: gai_strerror returns a static NUL-terminated string for any code.
            let why = unsafe { std::ffi::CStr::from_ptr(libc::gai_strerror(code)) };
            let said = format!(
                "failed to lookup address information: {}",
                why.to_string_lossy()
            );
            ureq::Error::Io(Io::other(said))
        };
        let local = "http://127.0.0.1:9/v1";
        assert!(hopeless(&refused(), local, false).contains("is the server running?"));
        assert_eq!(
            hopeless(&refused(), "https://api.example.com/v1", false),
            ""
        );
        let proxy = hopeless(&refused(), "https://api.example.com/v1", true);
        assert!(proxy.contains("is the proxy running?"), "{proxy}");
        let unknown = lookup(libc::EAI_NONAME);
        assert!(hopeless(&unknown, "http://x.invalid", false).contains("no such host"));
        let again = lookup(libc::EAI_AGAIN);
        assert_eq!(hopeless(&again, "http://x.invalid", false), "");
        let timeout = ureq::Error::Timeout(ureq::Timeout::Connect);
        assert_eq!(hopeless(&timeout, local, false), "");
    }
}
