//! Where a request goes and what a failed connection says (issue 31): a 307 or 308 to the same
//! server is followed with the body and the key, one to another host is refused naming the
//! status and the `Location` (the other host never hears of the key), a redirect loop ends; a
//! certificate that does not verify is reported once with rustls's reason (a loopback
//! `openssl s_server` with a self-signed certificate made at test time; skipped, saying so,
//! without `openssl`); a proxy that refuses is named, and not retried.

use crate::run::{Output, Sandbox, run, run_with};
use crate::server::{Reply, Server};
use crate::sse;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn moved(code: u16, location: &str) -> Reply {
    Reply::Status {
        code,
        headers: vec![("Location".into(), location.to_string())],
        body: String::new(),
    }
}

/// A 307 to a path and a 308 to an absolute URL, both on the same server: followed, each
/// time with the same body and the key; the answer from the last place is the answer.
#[test]
fn a_redirect_to_the_same_server_is_followed_with_the_body_and_the_key() {
    let sandbox = Sandbox::new("connections_same_host");
    let server = Server::start(vec![moved(307, "/moved/chat/completions")]);
    let root = server.url().trim_end_matches("/v1").to_string();
    server.then(moved(308, &format!("{root}/again/chat/completions")));
    server.then(Reply::Sse(sse::text("from the new place")));
    let out = run(&["-p", "hello"], &server, &sandbox);
    let requests = server.requests();
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "from the new place\n");
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    let expected = [
        "/v1/chat/completions",
        "/moved/chat/completions",
        "/again/chat/completions",
    ];
    assert_eq!(paths, expected, "{out:?}");
    for request in &requests {
        assert_eq!(request.method, "POST");
        assert_eq!(request.raw, requests[0].raw, "the same body");
        assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    }
}

/// A 307 or 308 to another port of the same host is another server: refused, naming the
/// status and the `Location`; the other server is never contacted, so the key stays.
#[test]
fn a_307_or_308_to_another_server_is_refused_naming_where() {
    for code in [307, 308] {
        let sandbox = Sandbox::new(&format!("connections_other_host_{code}"));
        let elsewhere = Server::start(vec![Reply::Sse(sse::text("answer from elsewhere"))]);
        let location = format!("{}/chat/completions", elsewhere.url());
        let server = Server::start(vec![moved(code, &location)]);
        let out = run(&["-p", "hello"], &server, &sandbox);
        assert_eq!(out.code, 1, "{out:?}");
        assert!(
            elsewhere.requests().is_empty(),
            "the other server was asked"
        );
        let said = format!("HTTP {code}: the provider redirected ({code}) to Location: {location}");
        assert!(out.stderr.contains(&said), "{out:?}");
        assert_eq!(server.requests().len(), 1, "{out:?}");
    }
}

/// A server that redirects to itself for ever: 5 redirects are followed, then the sixth is
/// the error, at once.
#[test]
fn a_redirect_loop_ends_after_five_hops() {
    let sandbox = Sandbox::new("connections_redirect_loop");
    let script = (0..8).map(|_| moved(307, "/v1/chat/completions")).collect();
    let server = Server::start(script);
    let out = run(&["-p", "hello"], &server, &sandbox);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        server.requests().len(),
        6,
        "the first request and 5 redirects; {out:?}"
    );
    assert!(out.stderr.contains("redirected (307)"), "{out:?}");
    assert!(out.stderr.contains("5 at most"), "{out:?}");
}

/// A loopback port no one listens on (bound, then let go).
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local addr").port()
}

/// `openssl s_server` on a loopback port with a self-signed certificate made for the test;
/// `None`, saying why, when `openssl` is missing or the server does not come up.
fn self_signed_server(sandbox: &Sandbox) -> Option<(Child, u16)> {
    let dir = &sandbox.dir;
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args([
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            "key.pem",
            "-out",
            "cert.pem",
        ])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !made.is_ok_and(|status| status.success()) {
        eprintln!("SKIPPED connections: no openssl to make a self-signed certificate");
        return None;
    }
    let port = closed_port();
    let child = Command::new("openssl")
        .args(["s_server", "-quiet", "-cert", "cert.pem", "-key", "key.pem"])
        .args(["-accept", &format!("127.0.0.1:{port}")])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            eprintln!("SKIPPED connections: openssl s_server did not listen on {port}");
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Some((child, port))
}

fn no_retry(out: &Output) {
    assert_eq!(out.code, 1, "{out:?}");
    assert!(!out.stderr.contains("[retry"), "not retried: {out:?}");
}

/// A certificate no root vouches for is reported once, with rustls's reason and the host and
/// port, and not retried (it would be refused again).
#[test]
fn a_certificate_that_does_not_verify_is_reported_once_with_why() {
    let sandbox = Sandbox::new("connections_self_signed");
    let Some((mut openssl, port)) = self_signed_server(&sandbox) else {
        return;
    };
    let url = format!("https://127.0.0.1:{port}/v1");
    let env = [("CORECODER_API_KEY", "sk-test"), ("OPENAI_BASE_URL", &url)];
    let started = Instant::now();
    let out = run_with(&["-p", "hello"], &env, &sandbox);
    let _ = openssl.kill();
    let _ = openssl.wait();
    no_retry(&out);
    let said = format!("request to 127.0.0.1:{port} failed: ");
    assert!(out.stderr.contains(&said), "{out:?}");
    // rustls's reason follows (for `openssl req -x509`'s certificate, `CaUsedAsEndEntity`).
    assert!(out.stderr.contains("invalid peer certificate: "), "{out:?}");
    assert!(
        out.stderr.contains("TLS certificate was refused"),
        "{out:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10), "{out:?}");
}

/// A proxy that refuses the connection: the message names the proxy (and the host behind it),
/// and says to check it; not retried for 15 s.
#[test]
fn a_proxy_that_refuses_is_named() {
    let sandbox = Sandbox::new("connections_proxy_down");
    let port = closed_port();
    let proxy = format!("http://127.0.0.1:{port}");
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", "https://api.example.com/v1"),
        ("HTTPS_PROXY", &proxy),
    ];
    let out = run_with(&["-p", "hello"], &env, &sandbox);
    no_retry(&out);
    let said = format!("request to api.example.com:443 through the proxy 127.0.0.1:{port} failed");
    assert!(out.stderr.contains(&said), "{out:?}");
    assert!(out.stderr.contains("is the proxy running?"), "{out:?}");
}
