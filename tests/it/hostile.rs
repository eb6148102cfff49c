//! A server that tries to exhaust the client's memory or time: an endless reply, an endless
//! line, a trickle, keep-alive comments forever, arguments that look closed at every piece, a
//! `Retry-After` that is not a number. Each run must end, with a clear message, in bounded
//! memory (the peak is read from `/proc/PID/status` while the binary runs).

use crate::run::{Output, Sandbox, finish_measured, spawn_with};
use crate::server::{Reply, Server};
use crate::sse;
use serde_json::json;
use std::time::{Duration, Instant};

/// Run `-p go` against `script` with `extra` variables; also the run's peak memory in KiB.
fn run_measured(name: &str, extra: &[(&str, &str)], script: Vec<Reply>) -> (Output, u64) {
    let sandbox = Sandbox::new(&format!("hostile_{name}"));
    let server = Server::start(script);
    let url = server.url();
    let mut env = vec![
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    env.extend_from_slice(extra);
    let child = spawn_with(&["-p", "go", "--yes"], &env, &sandbox);
    let (output, peak) = finish_measured(child);
    assert!(!output.stderr.contains("panicked"), "{output:?}");
    (output, peak)
}

/// An endless reply of text deltas: stopped at 64 MiB, at once (no retry), memory bounded.
#[test]
fn an_endless_reply_is_cut_off() {
    let delta = sse::content(&"endless ".repeat(8000));
    let piece = delta.repeat(8);
    let script = vec![Reply::Flood {
        head: sse::role(),
        piece,
        bytes: 2 << 30,
    }];
    let started = Instant::now();
    let (out, peak) = run_measured("endless_reply", &[], script);
    eprintln!(
        "endless reply: {:?}, peak {} MiB",
        started.elapsed(),
        peak >> 10
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("the whole of the reply is too large"),
        "{out:?}"
    );
    assert!(!out.stderr.contains("[retry"), "{out:?}");
    assert!(peak < 400 << 10, "peak {} MiB", peak >> 10);
}

/// One `data:` line that never ends: stopped at 16 MiB.
#[test]
fn an_endless_line_is_cut_off() {
    let script = vec![Reply::Flood {
        head: "data: {\"choices\":[{\"delta\":{\"content\":\"".to_string(),
        piece: "x".repeat(64 * 1024),
        bytes: 2 << 30,
    }];
    let (out, peak) = run_measured("endless_line", &[], script);
    eprintln!("endless line: peak {} MiB", peak >> 10);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("a line of the reply is too large"),
        "{out:?}"
    );
    assert!(peak < 200 << 10, "peak {} MiB", peak >> 10);
}

/// `: ping` comments keep the connection busy but carry no data: after the idle time the
/// attempt counts as broken and the request is sent again.
#[test]
fn keep_alive_comments_alone_do_not_keep_a_request_open() {
    let script = vec![
        Reply::SseSlowly {
            body: ": ping\n".repeat(200),
            chunk: 7,
            pause_ms: 100,
        },
        Reply::Sse(sse::text("answered")),
    ];
    let extra = [("CORECODER_IDLE_TIMEOUT", "1")];
    let started = Instant::now();
    let (out, _) = run_measured("pings", &extra, script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "answered\n");
    assert!(
        out.stderr.contains("no data from the server for 1 s"),
        "{out:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

/// Data that trickles in steadily, forever: the request deadline ends it, without retries.
#[test]
fn a_steady_trickle_meets_the_request_deadline() {
    let body = sse::role() + &sse::content("slow ").repeat(400);
    let script = vec![Reply::SseSlowly {
        chunk: sse::content("slow ").len(),
        body,
        pause_ms: 100,
    }];
    let extra = [("CORECODER_REQUEST_TIMEOUT", "2")];
    let started = Instant::now();
    let (out, _) = run_measured("trickle", &extra, script);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("CORECODER_REQUEST_TIMEOUT, 2 s"),
        "{out:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// 2 MB of `write_file` arguments in pieces that each end in `}` (inside the string): each
/// piece looked like the end of the call, and the whole was parsed again every time (43 s).
#[test]
fn arguments_that_look_closed_at_every_piece_cost_linear_time() {
    let piece = format!("{}}}", "y".repeat(99));
    let mut body = sse::role() + &sse::call_start(0, "call_big", "write_file");
    body += &sse::call_args(0, "{\"file_path\":\"big.txt\",\"content\":\"");
    for _ in 0..20_000 {
        body += &sse::call_args(0, &piece);
    }
    body += &sse::call_args(0, "\"}");
    body += &(sse::finish("tool_calls") + &sse::done());
    let script = vec![Reply::Sse(body), Reply::Sse(sse::text("written"))];
    let started = Instant::now();
    let (out, _) = run_measured("closing_pieces", &[], script);
    let took = started.elapsed();
    eprintln!("2 MB of closing-looking pieces: {took:?}");
    assert_eq!(out.code, 0, "{out:?}");
    assert!(took < Duration::from_secs(20), "{took:?}");
}

/// `Retry-After: nan` (or any value that is not a finite number) is ignored, not a panic.
#[test]
fn a_retry_after_that_is_not_a_number_is_ignored() {
    for value in ["nan", "inf", "-1e400", "Wed, 21 Oct 2015 07:28:00 GMT"] {
        let busy = Reply::Status {
            code: 429,
            headers: vec![("Retry-After".into(), value.into())],
            body: json!({"error": {"message": "slow down"}}).to_string(),
        };
        let script = vec![busy, Reply::Sse(sse::text("after the wait"))];
        let (out, _) = run_measured(&format!("retry_after_{}", value.len()), &[], script);
        assert_eq!(out.code, 0, "{value}: {out:?}");
        assert_eq!(out.stdout, "after the wait\n", "{value}");
    }
}

/// A 200 web page that never ends (a proxy, a wrong base URL): read up to 16 MiB, then named
/// by its title; no retry, bounded memory.
#[test]
fn an_endless_page_is_read_to_its_bound_and_named() {
    let mut page =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nconnection: close\r\n\r\n".to_vec();
    page.extend_from_slice(b"<html><head><title>Endless portal</title></head><body>");
    page.extend(std::iter::repeat_n(b'x', 40 << 20));
    let (out, peak) = run_measured("endless_page", &[], vec![Reply::Raw(page)]);
    eprintln!("endless page: peak {} MiB", peak >> 10);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("text/html (Endless portal), not an event stream"),
        "{out:?}"
    );
    assert!(!out.stderr.contains("[retry"), "{out:?}");
    assert!(peak < 200 << 10, "peak {} MiB", peak >> 10);
}
