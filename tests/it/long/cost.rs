//! What a session costs: the line at the end of `-p`, `pricing.json` in both shapes (cached
//! input at its own rate), unknown models, and `/tokens` across a `/model` switch.

use super::{Repl, answer, check};
use crate::run::Sandbox;
use crate::server::Reply;
use crate::sse;
use serde_json::{Value, json};

/// A text answer whose usage chunk reports exactly these counts.
fn priced(text: &str, prompt: u64, completion: u64) -> Reply {
    let body = sse::role() + &sse::content(text) + &sse::finish("stop");
    Reply::Sse(body + &sse::usage(prompt, completion) + &sse::done())
}

fn write_pricing(sandbox: &Sandbox, prices: Value) {
    let dir = sandbox.home.join(".corecoder");
    std::fs::create_dir_all(&dir).expect("~/.corecoder");
    std::fs::write(dir.join("pricing.json"), prices.to_string()).expect("pricing.json");
}

#[test]
fn p_run_ends_with_tokens_and_dollars() {
    let sandbox = Sandbox::new("long_cost_line");
    // gpt-5.5: $5 in, $30 out per million: 0.005 + 0.003.
    let (out, _) = check(&sandbox, &["-p", "hi"], vec![priced("ok", 1_000, 100)]);
    assert_eq!(out.code, 0, "{out:?}");
    let line = "tokens: 1,000 prompt + 100 completion · $0.0080";
    assert!(out.stderr.contains(line), "{out:?}");

    let (out, _) = check(
        &sandbox,
        &["-p", "hi", "-m", "mystery-model"],
        vec![answer("ok")],
    );
    assert!(
        out.stderr.contains("price unknown for mystery-model"),
        "{out:?}"
    );
}

/// The object form of pricing.json, with cached input billed at its own rate.
#[test]
fn pricing_json_objects_bill_cached_input() {
    let sandbox = Sandbox::new("long_cost_cached");
    write_pricing(
        &sandbox,
        json!({"obj": {"input": 2, "output": 4, "cached_input": 1}}),
    );
    let usage = json!({"prompt_tokens": 500_000, "completion_tokens": 250_000,
                       "total_tokens": 750_000,
                       "prompt_tokens_details": {"cached_tokens": 400_000}});
    let event = json!({"id": "c", "object": "chat.completion.chunk", "created": 0,
                       "model": "obj", "choices": [], "usage": usage});
    let body = sse::role() + &sse::content("ok") + &sse::finish("stop");
    let body = body + &format!("data: {event}\n\n") + &sse::done();
    let (out, _) = check(&sandbox, &["-p", "hi", "-m", "obj"], vec![Reply::Sse(body)]);
    // 100,000 × $2 + 400,000 × $1 + 250,000 × $4, per million.
    let line = "tokens: 500,000 prompt (400,000 cached) + 250,000 completion · $1.60";
    assert!(out.stderr.contains(line), "{out:?}");
}

#[test]
fn switching_model_does_not_reprice_the_past() {
    let sandbox = Sandbox::new("long_cost_switch");
    write_pricing(&sandbox, json!({"cheap": [1, 2], "dear": [100, 200]}));
    let script = vec![
        priced("cheap one", 1_000_000, 0),
        priced("dear one", 1_000_000, 0),
    ];
    let mut repl = Repl::start(&sandbox, &["-m", "cheap"], script);
    repl.turn("first", "cheap one");
    repl.turn("/tokens", "tokens: 1,000,000 prompt + 0 completion · $1.00");
    repl.turn("/model dear", "Model: dear");
    repl.turn("second", "dear one");
    repl.turn(
        "/tokens",
        "tokens: 2,000,000 prompt + 0 completion · $101.00",
    );
    let requests = repl.server.requests();
    assert_eq!(requests[0].body["model"], "cheap");
    assert_eq!(requests[1].body["model"], "dear");
}
