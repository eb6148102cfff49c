//! Talking to an unreliable provider: which failures are retried (and how many times), which
//! fail at once, how a 400 about a parameter adapts the request, and the idle timeout.

use crate::run::{Output, Sandbox, finish, run_with, spawn_with};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::json;
use std::time::Duration;

/// Run `-p` against `script` in an empty sandbox, with extra environment `env`.
fn check(name: &str, env: &[(&str, &str)], script: Vec<Reply>) -> (Output, Vec<Recorded>) {
    let sandbox = Sandbox::new(name);
    let server = Server::start(script);
    let url = server.url();
    let mut full = vec![
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    full.extend_from_slice(env);
    let output = run_with(&["-p", "hello"], &full, &sandbox);
    let requests = server.requests();
    requests.iter().for_each(Recorded::assert_valid_history);
    (output, requests)
}

fn answer(output: &Output) -> &str {
    output.stdout.trim_end_matches('\n')
}

fn ok() -> Reply {
    Reply::Sse(sse::text("ok"))
}

#[test]
fn rate_limit_is_retried_then_succeeds() {
    let script = vec![Reply::error(429, "Rate limit reached"), ok()];
    let (out, requests) = check("rate_limit", &[], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(answer(&out), "ok");
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].body, requests[1].body,
        "a retry re-sends the same request"
    );
}

#[test]
fn five_server_errors_give_up_with_exit_1() {
    let script = (0..5)
        .map(|_| Reply::error(500, "The server had an error"))
        .collect();
    let (out, requests) = check("give_up", &[], script);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(requests.len(), 5, "1 request + 4 retries; {out:?}");
    assert!(!out.stderr.contains("panicked"), "{out:?}");
}

#[test]
fn unauthorized_fails_at_once_with_the_server_message() {
    let script = vec![Reply::error(401, "Incorrect API key provided"), ok()];
    let (out, requests) = check("unauthorized", &[], script);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(requests.len(), 1, "a 401 is not retried");
    assert!(out.stderr.contains("401"), "{out:?}");
    assert!(out.stderr.contains("Incorrect API key provided"), "{out:?}");
}

/// The dropped part holds a half-streamed tool call: it must neither run nor reach history.
#[test]
fn dropped_stream_is_retried_from_scratch() {
    let partial = sse::role()
        + &sse::call_start(0, "call_lost", "read_file")
        + &sse::call_args(0, "{\"file_pa");
    let script = vec![Reply::SseThenDrop(partial), ok()];
    let (out, requests) = check("dropped", &[], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(answer(&out), "ok");
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body);
}

#[test]
fn stream_ending_after_finish_reason_without_done_is_complete() {
    let body = sse::role() + &sse::content("no done marker") + &sse::finish("stop");
    let (out, requests) = check("no_done", &[], vec![Reply::Sse(body), ok()]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(answer(&out), "no done marker");
    assert_eq!(requests.len(), 1);
}

#[test]
fn max_tokens_rejection_switches_to_max_completion_tokens_for_the_session() {
    let message = "Unsupported parameter: 'max_tokens' is not supported with this model. \
                   Use 'max_completion_tokens' instead.";
    let read = json!({"file_path": "x.txt"});
    let script = vec![
        Reply::error(400, message),
        Reply::Sse(sse::tool_calls(&[("call_1", "read_file", read)])),
        ok(),
    ];
    let (out, requests) = check("adapt_max_tokens", &[], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(requests.len(), 3, "{out:?}");
    assert_eq!(requests[0].body["max_tokens"], 4096);
    for later in &requests[1..] {
        assert_eq!(later.body["max_completion_tokens"], 4096, "{}", later.body);
        assert!(later.body.get("max_tokens").is_none(), "{}", later.body);
    }
}

/// In OpenAI's words, and in Anthropic's (through its OpenAI-compatible endpoint or a proxy).
#[test]
fn temperature_rejection_drops_temperature() {
    let messages = [
        "Unsupported value: 'temperature' does not support 0 with this model. \
         Only the default (1) value is supported.",
        "`temperature` is deprecated for this model.",
    ];
    for message in messages {
        let (out, requests) = check(
            "adapt_temperature",
            &[],
            vec![Reply::error(400, message), ok()],
        );
        assert_eq!(out.code, 0, "{message}: {out:?}");
        assert_eq!(requests.len(), 2);
        assert!(requests[0].body.get("temperature").is_some());
        assert!(
            requests[1].body.get("temperature").is_none(),
            "{}",
            requests[1].body
        );
        assert_eq!(
            requests[1].body["max_tokens"], 4096,
            "only temperature changes"
        );
    }
}

/// A 400 in OpenAI's words, and a 422 in a validator's (FastAPI servers answer so).
#[test]
fn stream_options_rejection_drops_stream_options() {
    let rejections = [
        (
            400,
            "Unrecognized request argument supplied: stream_options",
        ),
        (422, "body.stream_options: Extra inputs are not permitted"),
    ];
    for (code, message) in rejections {
        let (out, requests) = check(
            "adapt_stream_options",
            &[],
            vec![Reply::error(code, message), ok()],
        );
        assert_eq!(out.code, 0, "{code}: {out:?}");
        assert_eq!(requests.len(), 2, "{code}");
        assert!(
            requests[1].body.get("stream_options").is_none(),
            "{code}: {}",
            requests[1].body
        );
        assert_eq!(requests[1].body["stream"], true);
    }
}

#[test]
fn other_bad_request_fails_at_once() {
    let message = "Invalid value for 'tool_choice': unknown mode.";
    let (out, requests) = check("bad_request", &[], vec![Reply::error(400, message), ok()]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(requests.len(), 1);
    assert!(out.stderr.contains("tool_choice"), "{out:?}");
}

/// Stalls longer than idle timeout + backoff: a retry arriving early proves the timeout fired.
#[test]
fn idle_timeout_retries_a_silent_server() {
    let script = vec![Reply::Stall { ms: 15_000 }, ok()];
    let (out, requests) = check(
        "idle_before_headers",
        &[("CORECODER_IDLE_TIMEOUT", "1")],
        script,
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(requests.len(), 2);
    let gap = requests[1].at - requests[0].at;
    assert!(gap < Duration::from_secs(8), "retried only after {gap:?}");
}

#[test]
fn idle_timeout_retries_a_stream_that_stalls_midway() {
    let partial = sse::role() + &sse::content("Hel");
    let stall = Reply::SseThenStall {
        body: partial,
        ms: 15_000,
    };
    let (out, requests) = check(
        "idle_mid_stream",
        &[("CORECODER_IDLE_TIMEOUT", "1")],
        vec![stall, ok()],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(requests.len(), 2);
    let gap = requests[1].at - requests[0].at;
    assert!(gap < Duration::from_secs(8), "retried only after {gap:?}");
    assert!(
        out.stdout.ends_with("ok\n") || out.stdout.ends_with("ok"),
        "{out:?}"
    );
}

#[test]
fn ctrl_c_exits_130() {
    let sandbox = Sandbox::new("ctrl_c");
    let server = Server::start(vec![Reply::Stall { ms: 30_000 }]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let child = spawn_with(&["-p", "hello"], &env, &sandbox);
    let arrived = server.wait_for_requests(1, Duration::from_secs(20));
    let pid = child.id() as libc::pid_t;
    // SAFETY: `pid` is our own child, still unreaped (we have not waited on it).
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = finish(child);
    assert!(arrived, "no request arrived; {out:?}");
    assert_eq!(out.code, 130, "{out:?}");
}
