//! What a session costs: the line at the end of `-p`, `pricing.json` in both shapes (cached
//! input at its own rate), unknown models, and `/tokens` and `--max-cost` across a `/model`
//! switch.

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
    let line = "tokens: 500,000 prompt (400,000 cached, 80% hit rate) + 250,000 completion · $1.60";
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
    // The whole session, each model named with what it spent.
    repl.turn(
        "/tokens",
        "tokens: 2,000,000 prompt + 0 completion · $101.00 (cheap $1.00, dear $100.00)",
    );
    let requests = repl.server.requests();
    assert_eq!(requests[0].body["model"], "cheap");
    assert_eq!(requests[1].body["model"], "dear");
}

/// `/tokens` after a turn on `from`, `/model to` and a turn on `to`, each reply reporting
/// `prompt` and `completion` tokens.
fn tokens_across_a_switch(sandbox: &Sandbox, from: &str, to: &str, usage: (u64, u64), shown: &str) {
    let script = vec![
        priced("first answer", usage.0, usage.1),
        priced("second answer", usage.0, usage.1),
    ];
    let mut repl = Repl::start(sandbox, &["-m", from], script);
    repl.turn("first", "first answer");
    repl.turn(&format!("/model {to}"), &format!("Model: {to}"));
    repl.turn("second", "second answer");
    repl.turn("/tokens", shown);
}

/// docs/sessions.md's example: real models at their built-in prices, 100 prompt and 20 completion
/// tokens each (gpt-4.1: $2/$8, gpt-5.5: $5/$30 per million).
#[test]
fn tokens_after_a_switch_price_the_whole_session_per_model() {
    let sandbox = Sandbox::new("long_cost_switch_builtin");
    let shown = "tokens: 200 prompt + 40 completion · $0.0015 (gpt-4.1 $0.0004, gpt-5.5 $0.0011)";
    tokens_across_a_switch(&sandbox, "gpt-4.1", "gpt-5.5", (100, 20), shown);
}

/// Issue 17: after `/model`, `/tokens` priced part of the session and named only the old,
/// unpriced model. Now the priced part says it is a lower bound and both models are named.
#[test]
fn tokens_after_leaving_an_unpriced_model_name_both_models() {
    let sandbox = Sandbox::new("long_cost_switch_unpriced");
    write_pricing(&sandbox, json!({"cheap": [1, 2]}));
    let shown = "tokens: 2,000,000 prompt + 0 completion · at least $1.00 \
                 (mystery-model price unknown, cheap $1.00)";
    tokens_across_a_switch(&sandbox, "mystery-model", "cheap", (1_000_000, 0), shown);
}

/// The attack: start under a budget on a priced model, then `/model` to one nobody can
/// price. The next request is refused before it is sent, and the message says why.
#[test]
fn a_switch_to_an_unpriced_model_under_max_cost_sends_nothing() {
    let sandbox = Sandbox::new("long_cost_switch_budget");
    write_pricing(&sandbox, json!({"cheap": [1, 2]}));
    let script = vec![priced("never", 10, 10)];
    let mut repl = Repl::start(&sandbox, &["-m", "cheap", "--max-cost", "5"], script);
    repl.turn("/model mystery-model", "Model: mystery-model");
    repl.turn("hi", "--max-cost cannot be kept for mystery-model");
    assert!(repl.server.requests().is_empty(), "{}", repl.pty.screen());
}
