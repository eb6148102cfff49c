//! Cached prompt tokens through the binary: each provider's way of reporting them
//! (`fixtures/sse/usage-*.sse`) is read, billed at the cached rate with the rest at the input
//! rate, and shown with the hit rate in `--output-format json`, the end of a `-p` run and
//! `/tokens`; a cost the provider reports itself still wins.
//!
//! Prices come from `~/.corecoder/pricing.json` in the sandbox, so every figure is exact.

use crate::driver::Repl;
use crate::replay::fixture;
use crate::run::{Output, Sandbox, run};
use crate::server::{Reply, Server};
use crate::sse;
use serde_json::{Value, json};

/// US$ per million tokens for every model these tests name.
const PRICES: (f64, f64, f64) = (2.0, 8.0, 0.5);

/// One provider's shape: its fixture, the model named, and the prompt, cached and
/// completion tokens it reports.
const SHAPES: [(&str, &str, u64, u64, u64); 4] = [
    ("usage-openai-cached.sse", "gpt-4.1", 2_006, 1_920, 300),
    (
        "usage-deepseek-cache-hit.sse",
        "deepseek-chat",
        1_500,
        1_280,
        45,
    ),
    (
        "usage-moonshot-in-choice.sse",
        "kimi-k2.5",
        3_000,
        2_816,
        20,
    ),
    ("usage-kimi-top-level.sse", "kimi-k2.6", 1_024, 768, 12),
];

/// A sandbox whose pricing.json gives `model` the input, output and cached rates (the cached
/// one left out when `cached` is false: cached tokens then cost the input rate).
fn priced(name: &str, model: &str, cached: bool) -> Sandbox {
    let sandbox = Sandbox::new(name);
    let (input, output, cached_input) = PRICES;
    let mut entry = json!({"input": input, "output": output});
    if cached {
        entry["cached_input"] = json!(cached_input);
    }
    let state = sandbox.home.join(".corecoder");
    std::fs::create_dir_all(&state).expect("create ~/.corecoder");
    let prices = json!({ model: entry }).to_string();
    std::fs::write(state.join("pricing.json"), prices).expect("write pricing.json");
    sandbox
}

/// `-p` with `flags` against one scripted reply per item of `replies`.
fn run_p(sandbox: &Sandbox, flags: &[&str], replies: Vec<Reply>) -> Output {
    let server = Server::start(replies);
    let args = [&["-p", "answer from the cache"], flags].concat();
    let out = run(&args, &server, sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    out
}

fn result_object(out: &Output) -> Value {
    serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

/// Dollars at `PRICES`: the uncached part at the input rate, the cached part at the cached one.
fn dollars(prompt: u64, cached: u64, completion: u64, cached_rate: f64) -> f64 {
    let (input, output, _) = PRICES;
    ((prompt - cached) as f64 * input + cached as f64 * cached_rate + completion as f64 * output)
        / 1e6
}

/// A `usage` object's cached tokens and its hit rate (cached ÷ input).
fn assert_cached(usage: &Value, prompt: u64, cached: u64, what: &str) {
    assert_eq!(
        usage["cached_input_tokens"],
        json!(cached),
        "{what}: {usage}"
    );
    assert_close(
        &usage["cache_hit_rate"],
        cached as f64 / prompt as f64,
        what,
    );
}

fn assert_close(got: &Value, want: f64, what: &str) {
    let got = got
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: {got} is not a number"));
    assert!((got - want).abs() < 1e-12, "{what}: {got}, want {want}");
}

/// OpenAI, DeepSeek, Moonshot and Kimi each report the cached part their own way; the JSON
/// result counts it, gives the hit rate and prices it: 1,920 of OpenAI's 2,006 prompt tokens
/// at $0.50 per million and 86 at $2 (plus 300 completion tokens at $8) is $0.003532, where
/// reading no cache would have billed $0.006412.
#[test]
fn each_providers_cached_tokens_are_read_and_priced_at_the_cached_rate() {
    for (file, model, prompt, cached, completion) in SHAPES {
        let sandbox = priced(&format!("cache_json_{model}"), model, true);
        let flags = ["-m", model, "--output-format", "json"];
        let result = result_object(&run_p(&sandbox, &flags, vec![Reply::Sse(fixture(file))]));
        let usage = &result["usage"];
        assert_eq!(usage["input_tokens"], json!(prompt), "{file}: {result}");
        assert_eq!(
            usage["output_tokens"],
            json!(completion),
            "{file}: {result}"
        );
        assert_cached(usage, prompt, cached, file);
        let want = dollars(prompt, cached, completion, PRICES.2);
        assert_close(&result["total_cost_usd"], want, file);
    }
    assert!((dollars(2_006, 1_920, 300, 0.5) - 0.003_532).abs() < 1e-12);
    assert!((dollars(2_006, 0, 300, 0.5) - 0.006_412).abs() < 1e-12);
}

/// A model whose price has no cached rate bills its cached tokens at the input rate, an upper
/// bound, and still shows them.
#[test]
fn without_a_cached_rate_cached_tokens_cost_the_input_rate() {
    let sandbox = priced("cache_no_rate", "deepseek-chat", false);
    let flags = ["-m", "deepseek-chat", "--output-format", "json"];
    let reply = Reply::Sse(fixture("usage-deepseek-cache-hit.sse"));
    let result = result_object(&run_p(&sandbox, &flags, vec![reply]));
    assert_cached(&result["usage"], 1_500, 1_280, "no cached rate");
    let want = dollars(1_500, 1_280, 45, PRICES.0);
    assert_close(&result["total_cost_usd"], want, "no cached rate");
}

/// The end-of-run line counts the session: a first request with nothing cached (1,000 prompt
/// tokens) and then Moonshot's 2,816 cached of 3,000 make 2,816 of 4,000, a 70% hit rate,
/// priced request by request.
#[test]
fn the_end_of_a_run_shows_cached_tokens_and_the_hit_rate() {
    let sandbox = priced("cache_end_line", "kimi-k2.5", true);
    let call = sse::tool_calls(&[("c1", "glob", json!({"pattern": "*"}))]);
    let first = call.replace("data: [DONE]", &(sse::usage(1_000, 10) + "data: [DONE]"));
    let replies = vec![
        Reply::Sse(first),
        Reply::Sse(fixture("usage-moonshot-in-choice.sse")),
    ];
    let out = run_p(&sandbox, &["-m", "kimi-k2.5"], replies);
    assert_eq!(out.stdout.trim(), "Cached prefix.", "{out:?}");
    // $0.002080 for the first request, $0.001936 for the second: docs/sessions.md's example line.
    let cost = dollars(1_000, 0, 10, PRICES.2) + dollars(3_000, 2_816, 20, PRICES.2);
    assert!((cost - 0.004_016).abs() < 1e-12, "{cost}");
    let line = "tokens: 4,000 prompt (2,816 cached, 70% hit rate) + 30 completion · $0.0040";
    assert!(out.stderr.contains(line), "{line:?} not in {out:?}");
}

/// Each `stream-json` `usage` line carries the same fields for its own request.
#[test]
fn stream_json_usage_lines_carry_the_cached_tokens_and_the_hit_rate() {
    let sandbox = priced("cache_stream_json", "gpt-4.1", true);
    let flags = ["-m", "gpt-4.1", "--output-format", "stream-json"];
    let reply = Reply::Sse(fixture("usage-openai-cached.sse"));
    let out = run_p(&sandbox, &flags, vec![reply]);
    let lines: Vec<Value> = (out.stdout.lines())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let usage = (lines.iter().find(|line| line["type"] == "usage"))
        .unwrap_or_else(|| panic!("no usage line: {out:?}"));
    assert_cached(&usage["usage"], 2_006, 1_920, "stream-json");
}

/// OpenRouter's own `usage.cost` still wins over the table when the reply reports cached
/// tokens too; the tokens and the hit rate are shown all the same.
#[test]
fn a_reported_cost_still_wins_over_the_cached_rate() {
    let sandbox = priced("cache_reported", "gpt-4.1", true);
    let usage = json!({"prompt_tokens": 2_006, "completion_tokens": 300, "cost": 0.0123,
        "prompt_tokens_details": {"cached_tokens": 1_920, "cache_write_tokens": 0}});
    let body = sse::role()
        + &sse::content("Cached prefix.")
        + &sse::finish("stop")
        + &format!("data: {}\n\n", json!({"choices": [], "usage": usage}))
        + &sse::done();
    let flags = ["-m", "gpt-4.1", "--output-format", "json"];
    let result = result_object(&run_p(&sandbox, &flags, vec![Reply::Sse(body)]));
    assert_eq!(result["total_cost_usd"], json!(0.0123), "{result}");
    assert_cached(&result["usage"], 2_006, 1_920, "reported");
}

/// Before any prompt token there is no rate to give: `null`, not 0 (which would read as
/// "nothing was cached").
#[test]
fn no_prompt_tokens_means_no_hit_rate() {
    let sandbox = priced("cache_no_rate_yet", "gpt-4.1", true);
    let body = sse::role() + &sse::content("hi") + &sse::finish("stop") + &sse::usage(0, 0);
    let flags = ["-m", "gpt-4.1", "--output-format", "json"];
    let result = result_object(&run_p(
        &sandbox,
        &flags,
        vec![Reply::Sse(body + &sse::done())],
    ));
    assert_eq!(result["usage"]["cache_hit_rate"], Value::Null, "{result}");
}

/// `/tokens` in the REPL shows the same: DeepSeek's 1,280 hit tokens of 1,500, 85%.
#[test]
fn tokens_in_the_repl_show_cached_tokens_and_the_hit_rate() {
    let sandbox = priced("cache_repl_tokens", "deepseek-chat", true);
    let replies = vec![Reply::Sse(fixture("usage-deepseek-cache-hit.sse"))];
    let mut repl = Repl::start(&sandbox, &["--model", "deepseek-chat"], replies);
    repl.turn("answer from the cache", "Cached prefix.");
    repl.enter("/tokens");
    let cost = dollars(1_500, 1_280, 45, PRICES.2);
    repl.expect(&format!(
        "tokens: 1,500 prompt (1,280 cached, 85% hit rate) + 45 completion · ${cost:.4}"
    ));
}
