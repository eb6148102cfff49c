//! Budgets, fallback models, the loop guard and the JSON output formats of `-p`.

use crate::run::{Output, Sandbox, run_with};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};

/// Run `-p TASK` with extra flags and variables against `script`.
fn check(
    name: &str,
    flags: &[&str],
    env: &[(&str, &str)],
    script: Vec<Reply>,
) -> (Output, Vec<Recorded>) {
    let sandbox = Sandbox::new(name);
    let server = Server::start(script);
    let url = server.url();
    let mut all_env = vec![
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    all_env.extend_from_slice(env);
    let mut args = vec!["-p", "do the task"];
    args.extend_from_slice(flags);
    let out = run_with(&args, &all_env, &sandbox);
    (out, server.requests())
}

/// A text answer that reports `prompt` + `completion` tokens.
fn priced_answer(text: &str, prompt: u64, completion: u64) -> Reply {
    let body = sse::role()
        + &sse::content(text)
        + &sse::finish("stop")
        + &sse::usage(prompt, completion)
        + &sse::done();
    Reply::Sse(body)
}

fn glob_call(id: &str, pattern: &str) -> Reply {
    Reply::Sse(sse::tool_calls(&[(
        id,
        "glob",
        json!({"pattern": pattern}),
    )]))
}

/// gpt-5.5 costs $5 per million input tokens: the first request spends $5, the budget is $1,
/// so the second request is never sent.
#[test]
fn budget_stops_before_the_next_request() {
    let first = sse::tool_calls(&[("c1", "glob", json!({"pattern": "*"}))]);
    let first = first.replace("data: [DONE]", &(sse::usage(1_000_000, 0) + "data: [DONE]"));
    let script = vec![Reply::Sse(first), priced_answer("never", 10, 10)];
    let (out, requests) = check("budget", &["--max-cost", "1", "-m", "gpt-5.5"], &[], script);
    assert_eq!(out.code, 4, "{out:?}");
    assert_eq!(requests.len(), 1);
    assert!(out.stderr.contains("budget spent"), "{out:?}");
}

/// Five 503s exhaust the retries on the primary model; the same request goes to the fallback.
#[test]
fn fallback_model_takes_over_after_503s() {
    let mut script: Vec<Reply> = (0..5).map(|_| Reply::error(503, "overloaded")).collect();
    script.push(priced_answer("from the fallback", 10, 10));
    let env = [("CORECODER_FALLBACK_MODELS", "backup-model")];
    let (out, requests) = check("fallback", &["-m", "main-model"], &env, script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.trim_end(), "from the fallback");
    let models: Vec<&str> = requests
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        models,
        ["main-model"; 5]
            .iter()
            .copied()
            .chain(["backup-model"])
            .collect::<Vec<_>>()
    );
    assert!(
        out.stderr.contains("switching to model backup-model"),
        "{out:?}"
    );
}

/// The third identical call is not run (the model is told), the fifth ends the run with 5.
#[test]
fn loop_guard_refuses_then_stops() {
    let script: Vec<Reply> = (0..6)
        .map(|n| glob_call(&format!("c{n}"), "*.rs"))
        .collect();
    let (out, requests) = check("loop_guard", &[], &[], script);
    assert_eq!(out.code, 5, "{out:?}");
    assert_eq!(requests.len(), 5, "the fifth identical call ends the run");
    let third = requests[3].last_tool_result();
    assert!(
        third.starts_with("Not run: this is the same glob call"),
        "{third}"
    );
    assert!(!requests[2].last_tool_result().starts_with("Not run"));
}

fn result_object(value: &Value) {
    for key in [
        "subtype",
        "is_error",
        "result",
        "session_id",
        "num_rounds",
        "duration_ms",
        "usage",
        "total_cost_usd",
    ] {
        assert!(value.get(key).is_some(), "{key} missing in {value}");
    }
}

#[test]
fn json_output_is_one_object() {
    let script = vec![glob_call("c1", "*"), priced_answer("all done", 1000, 100)];
    let (out, _) = check("json_output", &["--output-format", "json"], &[], script);
    assert_eq!(out.code, 0, "{out:?}");
    let value: Value = serde_json::from_str(out.stdout.trim()).expect("stdout is one JSON object");
    result_object(&value);
    assert_eq!(value["type"], "result");
    assert_eq!(value["subtype"], "success");
    assert_eq!(value["result"], "all done");
    assert_eq!(value["num_rounds"], 2);
    assert_eq!(value["is_error"], false);
}

#[test]
fn stream_json_is_one_event_per_line() {
    let script = vec![glob_call("c1", "*"), priced_answer("all done", 1000, 100)];
    let (out, _) = check(
        "stream_json",
        &["--output-format", "stream-json"],
        &[],
        script,
    );
    assert_eq!(out.code, 0, "{out:?}");
    let events: Vec<Value> = (out.stdout.lines())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let types: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(types.first(), Some(&"system"));
    for kind in ["tool_call", "tool_result", "usage", "text"] {
        assert!(types.contains(&kind), "{kind} missing in {types:?}");
    }
    let last = events.last().expect("events");
    assert_eq!(last["type"], "result");
    result_object(last);
    let text: String = (events.iter())
        .filter(|e| e["type"] == "text")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert_eq!(text, "all done");
}

#[test]
fn json_output_reports_errors_too() {
    let script = vec![Reply::error(401, "Incorrect API key provided")];
    let (out, _) = check("json_error", &["--output-format", "json"], &[], script);
    assert_eq!(out.code, 1, "{out:?}");
    let value: Value = serde_json::from_str(out.stdout.trim()).expect("one JSON object");
    assert_eq!(
        (value["subtype"].as_str(), value["is_error"].as_bool()),
        (Some("error_api"), Some(true))
    );
    assert!(
        value["result"]
            .as_str()
            .unwrap_or("")
            .contains("Incorrect API key"),
        "{value}"
    );
}
