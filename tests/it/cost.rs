//! What a run costs, through the binary: built-in prices for the models people bring, a
//! provider's own figure (OpenRouter's `usage.cost`) over the table, `--max-cost` refusing
//! what it cannot count, and `--output-format json` never calling an unknown cost free.
//!
//! Each test runs `corecoder -p` against the scripted server and reads the exit code, what was
//! printed and how many requests arrived. OpenRouter is played by the same loopback server:
//! the base URL names openrouter.ai and `HTTP_PROXY` sends the request to the server.
//!
//! A request the provider accepted is billed even when its reply never completes (Ctrl+C, a
//! stream that broke and was retried): those are counted too, estimated and marked so.

use crate::driver::Repl;
use crate::run::{Output, Sandbox, finish, run_with, spawn_with};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

/// Run `-p TASK FLAGS` in `sandbox` against `script`, at the server's own URL.
fn check(sandbox: &Sandbox, flags: &[&str], script: Vec<Reply>) -> (Output, Vec<Recorded>) {
    let server = Server::start(script);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let mut args = vec!["-p", "do the task"];
    args.extend_from_slice(flags);
    let out = run_with(&args, &env, sandbox);
    (out, server.requests())
}

/// The same with OpenRouter's base URL: `HTTP_PROXY` points at a relay that answers the
/// client's `CONNECT openrouter.ai:80` and passes the bytes on to the scripted server.
fn check_at_openrouter(name: &str, flags: &[&str], script: Vec<Reply>) -> (Output, Vec<Recorded>) {
    let sandbox = Sandbox::new(name);
    let server = Server::start(script);
    let target = server.url();
    let target = target.trim_start_matches("http://").trim_end_matches("/v1");
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the relay");
    let relay = listener.local_addr().expect("relay address");
    let proxy = format!("http://{relay}");
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", "http://openrouter.ai/api/v1"),
        ("HTTP_PROXY", proxy.as_str()),
    ];
    let mut args = vec!["-p", "do the task"];
    args.extend_from_slice(flags);
    let stop = AtomicBool::new(false);
    let out = thread::scope(|scope| {
        scope.spawn(|| relay_connections(&listener, target, &stop));
        let out = run_with(&args, &env, &sandbox);
        stop.store(true, Ordering::SeqCst);
        // `accept` blocks; one connection from ourselves wakes it to see the flag.
        let _ = TcpStream::connect(relay);
        out
    });
    (out, server.requests())
}

/// Each connection: read the CONNECT request, say yes, then copy bytes both ways.
fn relay_connections(listener: &TcpListener, target: &str, stop: &AtomicBool) {
    thread::scope(|scope| {
        for client in listener.incoming() {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            let Ok(mut client) = client else { continue };
            scope.spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8];
                while !head.ends_with(b"\r\n\r\n") && client.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                assert!(head.starts_with(b"CONNECT openrouter.ai:"), "{head:?}");
                let upstream = TcpStream::connect(target).expect("the scripted server");
                let _ = client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
                let (mut up_read, mut client_write) = (upstream.try_clone(), client.try_clone());
                thread::scope(|inner| {
                    inner.spawn(|| {
                        let _ = std::io::copy(&mut client, &mut &upstream);
                        let _ = upstream.shutdown(Shutdown::Write);
                    });
                    if let (Ok(up_read), Ok(client_write)) = (&mut up_read, &mut client_write) {
                        let _ = std::io::copy(up_read, client_write);
                        let _ = client_write.shutdown(Shutdown::Write);
                    }
                });
            });
        }
    });
}

/// A glob call whose reply reports `usage`, so that the run goes on to a second request.
fn call_then(usage: String) -> Reply {
    let body = sse::tool_calls(&[("c1", "glob", json!({"pattern": "*"}))]);
    Reply::Sse(body.replace("data: [DONE]", &(usage + "data: [DONE]")))
}

fn answer_with(text: &str, usage: String) -> Reply {
    let body = sse::role() + &sse::content(text) + &sse::finish("stop") + &usage + &sse::done();
    Reply::Sse(body)
}

fn result_object(out: &Output) -> Value {
    serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

/// The names a CoreCoder user brings are priced: the summary line carries dollars, not
/// "price unknown" (the issue's list, plus an OpenRouter name).
#[test]
fn models_corecoder_users_bring_are_priced() {
    let models = [
        "deepseek-chat",
        "deepseek-reasoner",
        "gpt-4o",
        "gpt-4o-mini",
        "gpt-4.1",
        "claude-sonnet-4-6",
        "qwen3-max",
        "kimi-k2.5",
        "anthropic/claude-sonnet-4.6",
    ];
    let sandbox = Sandbox::new("cost_models");
    for model in models {
        let script = vec![answer_with("done", sse::usage(1_000_000, 0))];
        let (out, _) = check(&sandbox, &["-m", model], script);
        assert_eq!(out.code, 0, "{model}: {out:?}");
        assert!(out.stderr.contains(" · $"), "{model}: {out:?}");
        assert!(!out.stderr.contains("price unknown"), "{model}: {out:?}");
    }
}

/// gpt-4o costs $2.50 per million input tokens by the table; the reply says it cost $0.75,
/// and that figure is the one reported.
#[test]
fn a_reported_cost_wins_over_the_table() {
    let sandbox = Sandbox::new("cost_reported");
    let script = vec![answer_with(
        "done",
        sse::usage_with_cost(1_000_000, 0, 0.75),
    )];
    let flags = ["-m", "gpt-4o", "--output-format", "json"];
    let (out, _) = check(&sandbox, &flags, script);
    assert_eq!(out.code, 0, "{out:?}");
    let result = result_object(&out);
    assert_eq!(result["total_cost_usd"], json!(0.75), "{result}");
    assert_eq!(result["cost_unknown_reason"], Value::Null, "{result}");
}

/// The attack: a budget with a model nobody can price. It used to warn and spend without
/// limit; now nothing is sent, the exit code is 2 and the message says how to add the price.
#[test]
fn max_cost_with_an_unknown_price_refuses_to_start() {
    let sandbox = Sandbox::new("cost_max_unknown");
    let script = vec![answer_with("never", sse::usage(10, 10))];
    let flags = ["-m", "no-such-model", "--max-cost", "1"];
    let (out, requests) = check(&sandbox, &flags, script);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(requests.is_empty(), "{} requests were sent", requests.len());
    for needed in [
        "no-such-model",
        "pricing.json",
        "\"no-such-model\": [INPUT, OUTPUT]",
    ] {
        assert!(out.stderr.contains(needed), "{needed:?} missing: {out:?}");
    }
    // A fallback model of unknown price could spend just the same.
    let flags = ["-m", "gpt-4o", "--max-cost", "1"];
    let server = Server::start(vec![]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
        ("CORECODER_FALLBACK_MODELS", "unpriced-backup"),
    ];
    let args = [&["-p", "do the task"], &flags[..]].concat();
    let out = run_with(&args, &env, &sandbox);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("unpriced-backup"), "{out:?}");
    assert!(server.requests().is_empty());
}

/// The price added the way the message says makes the same run start and be counted.
#[test]
fn max_cost_starts_once_the_price_is_in_pricing_json() {
    let sandbox = Sandbox::new("cost_max_pricing_json");
    let state = sandbox.home.join(".corecoder");
    std::fs::create_dir_all(&state).expect("create ~/.corecoder");
    let prices = r#"{"no-such-model": [2, 8]}"#;
    std::fs::write(state.join("pricing.json"), prices).expect("write pricing.json");
    let script = vec![answer_with("done", sse::usage(1_000_000, 0))];
    let flags = ["-m", "no-such-model", "--max-cost", "5"];
    let (out, requests) = check(&sandbox, &flags, script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(requests.len(), 1);
    assert!(out.stderr.contains("$2.00"), "{out:?}");
}

/// OpenRouter reports every request's cost, so an unpriced model may start under a budget;
/// the reported $2 is what is counted, and the $1 budget stops the second request.
#[test]
fn max_cost_at_openrouter_counts_the_reported_cost() {
    let script = vec![
        call_then(sse::usage_with_cost(1_000, 10, 2.0)),
        answer_with("never", sse::usage(10, 10)),
    ];
    let flags = ["-m", "vendor/unpriced-model", "--max-cost", "1"];
    let (out, requests) = check_at_openrouter("cost_openrouter", &flags, script);
    assert_eq!(out.code, 4, "{out:?}");
    assert_eq!(requests.len(), 1, "{out:?}");
    assert!(out.stderr.contains("$2.0000 spent"), "{out:?}");
}

/// A provider that was trusted to report cost and then did not: what was spent is unknown,
/// so no further request is sent under the budget.
#[test]
fn max_cost_stops_when_a_reply_reports_no_cost_for_an_unpriced_model() {
    let script = vec![
        call_then(sse::usage(1_000, 10)),
        answer_with("never", sse::usage(10, 10)),
    ];
    let flags = ["-m", "vendor/unpriced-model", "--max-cost", "1"];
    let (out, requests) = check_at_openrouter("cost_openrouter_silent", &flags, script);
    assert_eq!(out.code, 4, "{out:?}");
    assert_eq!(requests.len(), 1, "{out:?}");
    assert!(out.stderr.contains("cannot be kept"), "{out:?}");
}

/// The JSON result of a run on `model` whose one reply reports 1,000 + 100 tokens.
fn json_result(sandbox: &Sandbox, model: &str) -> Value {
    let script = vec![answer_with("done", sse::usage(1_000, 100))];
    let (out, _) = check(sandbox, &["-m", model, "--output-format", "json"], script);
    assert_eq!(out.code, 0, "{out:?}");
    result_object(&out)
}

/// An unknown cost is `null` with the reason beside it, never 0.0; a known one is a number.
#[test]
fn json_reports_an_unknown_cost_as_null_and_says_why() {
    let sandbox = Sandbox::new("cost_json_unknown");
    let result = json_result(&sandbox, "no-such-model");
    assert_eq!(result["total_cost_usd"], Value::Null, "{result}");
    let why = result["cost_unknown_reason"].as_str().unwrap_or_default();
    assert!(why.contains("price unknown for no-such-model"), "{result}");
    assert!(why.contains("pricing.json"), "{result}");
    assert!(why.contains("were priced cost $0.0000"), "{result}");

    // gpt-4.1: 1,000 * $2 + 100 * $8 per million.
    let result = json_result(&sandbox, "gpt-4.1");
    let dollars = result["total_cost_usd"].as_f64().expect("a number");
    assert!((dollars - 0.0028).abs() < 1e-9, "{result}");
    assert_eq!(result["cost_unknown_reason"], Value::Null, "{result}");
}

/// The first part of an answer, about 250 tokens, as a reply that is cut off sends it.
fn partial_answer() -> String {
    sse::role() + &sse::content(&"word ".repeat(250))
}

/// `-p` on gpt-4.1 with `flags` against a reply that stalls after `partial_answer`, and
/// Ctrl+C once that part has arrived.
fn interrupted(sandbox: &Sandbox, flags: &[&str]) -> Output {
    let body = partial_answer();
    let server = Server::start(vec![Reply::SseThenStall { body, ms: 30_000 }]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let args = [&["-p", "do the task", "-m", "gpt-4.1"], flags].concat();
    let child = spawn_with(&args, &env, sandbox);
    let arrived = server.wait_for_requests(1, Duration::from_secs(20));
    // The partial answer is written at once; this leaves it time to be read.
    thread::sleep(Duration::from_millis(1_000));
    // SAFETY: our own child, still unreaped (we have not waited on it).
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = finish(child);
    assert!(arrived, "no request arrived; {out:?}");
    assert_eq!(out.code, 130, "{out:?}");
    out
}

/// The end-of-run line's prompt and completion counts: `tokens: 1,234 prompt + 56 completion`.
fn summary_counts(out: &Output) -> (u64, u64) {
    let line = (out.stderr.lines())
        .find(|line| line.contains("tokens: "))
        .unwrap_or_else(|| panic!("no summary line: {out:?}"));
    let number = |after: &str, before: &str| -> u64 {
        let start = line.find(after).expect("the word") + after.len();
        let end = start + line[start..].find(before).expect("the next word");
        line[start..end]
            .trim()
            .replace(',', "")
            .parse()
            .expect("a count")
    };
    (number("tokens: ", " prompt"), number("+ ", " completion"))
}

/// The issue's first point: Ctrl+C mid-answer read as 0 tokens and $0.0000. The request was
/// sent and answered in part, so it is billed: the end-of-run line counts it, priced, and
/// says it is an estimate; the JSON's `usage` says `estimated` and the cost is not 0.0.
#[test]
fn an_interrupted_reply_is_counted_as_an_estimate() {
    let sandbox = Sandbox::new("cost_interrupted");
    let out = interrupted(&sandbox, &[]);
    let (prompt, completion) = summary_counts(&out);
    assert!(prompt > 0 && completion >= 200, "{out:?}");
    assert!(!out.stderr.contains("$0.0000"), "{out:?}");
    assert!(out.stderr.contains("estimated"), "{out:?}");
    assert!(out.stderr.contains("1 request was cut off"), "{out:?}");

    let out = interrupted(&sandbox, &["--output-format", "json"]);
    let result = result_object(&out);
    assert_eq!(result["subtype"], "interrupted", "{result}");
    let usage = &result["usage"];
    assert!(usage["input_tokens"].as_u64() > Some(0), "{result}");
    assert!(usage["output_tokens"].as_u64() >= Some(200), "{result}");
    assert_eq!(usage["source"], "estimated", "{result}");
    assert_eq!(usage["estimated_requests"], 1, "{result}");
    assert!(result["total_cost_usd"].as_f64() > Some(0.0), "{result}");
}

/// Two streams that broke mid-answer, then a whole reply reporting 1,000 + 100 tokens: three
/// requests, all billed. The two broken ones are counted as estimates, the third as reported,
/// and every figure says which it is.
#[test]
fn streams_broken_and_retried_are_counted() {
    let sandbox = Sandbox::new("cost_retried");
    let script = || {
        vec![
            Reply::SseThenDrop(partial_answer()),
            Reply::SseThenDrop(partial_answer()),
            answer_with("done", sse::usage(1_000, 100)),
        ]
    };
    let (out, requests) = check(&sandbox, &["-m", "gpt-4.1"], script());
    assert_eq!((out.code, requests.len()), (0, 3), "{out:?}");
    let (prompt, completion) = summary_counts(&out);
    assert!(prompt > 1_000 && completion >= 500, "{out:?}");
    assert!(
        out.stderr.contains("2 of 3 requests were cut off"),
        "{out:?}"
    );

    let flags = ["-m", "gpt-4.1", "--output-format", "stream-json"];
    let (out, requests) = check(&sandbox, &flags, script());
    assert_eq!((out.code, requests.len()), (0, 3), "{out:?}");
    let lines: Vec<Value> = (out.stdout.lines())
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let usage_line = lines.iter().find(|line| line["type"] == "usage");
    let usage_line = usage_line.unwrap_or_else(|| panic!("no usage line: {out:?}"));
    let result = lines.last().expect("the result");
    for usage in [&usage_line["usage"], &result["usage"]] {
        assert_eq!(usage["source"], "partly_estimated", "{usage}");
        assert_eq!(usage["requests"], 3, "{usage}");
        assert_eq!(usage["estimated_requests"], 2, "{usage}");
        assert!(usage["output_tokens"].as_u64() >= Some(500), "{usage}");
    }
    // gpt-4.1 at $2 + $8 per million: the reported request alone is $0.0028.
    assert!(result["total_cost_usd"].as_f64() > Some(0.0028), "{result}");
}

/// Five streams that broke (the first try and four retries), then the run fails: five billed
/// requests, not 0 tokens and $0.0.
#[test]
fn a_run_that_gave_up_still_counts_what_was_billed() {
    let sandbox = Sandbox::new("cost_gave_up");
    let script = (0..5)
        .map(|_| Reply::SseThenDrop(partial_answer()))
        .collect();
    let flags = ["-m", "gpt-4.1", "--output-format", "json"];
    let (out, requests) = check(&sandbox, &flags, script);
    assert_eq!((out.code, requests.len()), (1, 5), "{out:?}");
    let result = result_object(&out);
    let usage = &result["usage"];
    assert!(usage["input_tokens"].as_u64() > Some(0), "{result}");
    assert!(usage["output_tokens"].as_u64() >= Some(1_000), "{result}");
    assert_eq!(usage["source"], "estimated", "{result}");
    assert_eq!(usage["estimated_requests"], 5, "{result}");
    assert!(result["total_cost_usd"].as_f64() > Some(0.0), "{result}");
}

/// `/tokens` in the REPL after Ctrl+C mid-answer: the interrupted request is counted and
/// priced, and the line says it is an estimate (it read `0 prompt + 0 completion · $0.0000`).
#[test]
fn tokens_after_ctrl_c_counts_the_interrupted_request() {
    let sandbox = Sandbox::new("cost_interrupted_repl");
    let body = partial_answer() + &sse::content("the end of the part");
    let script = vec![Reply::SseThenStall { body, ms: 20_000 }];
    let mut repl = Repl::start(&sandbox, &["-m", "gpt-4.1"], script);
    repl.enter("tell me");
    repl.expect("the end of the part");
    repl.pty.send("\x03");
    repl.idle();
    repl.turn("/tokens", "tokens:");
    let screen = repl.pty.screen();
    let shown = &screen[screen.rfind("tokens:").expect("the line")..];
    assert!(!shown.starts_with("tokens: 0 prompt"), "{shown}");
    assert!(!shown.contains("+ 0 completion"), "{shown}");
    assert!(!shown.contains("$0.0000"), "{shown}");
    assert!(shown.contains("1 request was cut off"), "{shown}");
}
