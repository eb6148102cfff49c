//! The agent loop end to end: what one request looks like, how a streamed reply becomes
//! stdout or tool calls, and how a tool round is written back into the history.

use crate::run::{Output, Sandbox, run};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};

const TOOL_NAMES: [&str; 8] = [
    "bash",
    "read_file",
    "write_file",
    "edit_file",
    "glob",
    "grep",
    "todo_write",
    "agent",
];

/// Run `-p PROMPT` (plus `extra` flags) in a copy of the calc repo against `script`.
fn check(name: &str, extra: &[&str], script: Vec<Reply>) -> (Output, Vec<Recorded>, Sandbox) {
    let sandbox = Sandbox::with_repo(name, "calc");
    let server = Server::start(script);
    let mut args = vec!["-p", "fix the calculator"];
    args.extend_from_slice(extra);
    let output = run(&args, &server, &sandbox);
    let requests = server.requests();
    requests.iter().for_each(Recorded::assert_valid_history);
    (output, requests, sandbox)
}

/// The answer on stdout, ignoring the newline(s) printed after it.
fn answer(output: &Output) -> &str {
    output.stdout.trim_end_matches('\n')
}

fn read_calc() -> Value {
    json!({"file_path": "calc.sh"})
}

#[test]
fn first_request_streams_with_tools_auth_and_system_prompt() {
    let (out, requests, _sandbox) = check("request_shape", &[], vec![Reply::Sse(sse::text("hi"))]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(requests.len(), 1, "{out:?}");
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    let body = &request.body;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["model"], "gpt-5.5");
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["temperature"].as_f64(), Some(0.0));
    let messages = request.messages();
    assert_eq!(messages[0]["role"], "system");
    assert!(!messages[0]["content"].as_str().unwrap_or("").is_empty());
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "fix the calculator"})
    );
    let mut names: Vec<&str> = body["tools"]
        .as_array()
        .expect("tools array")
        .iter()
        .map(|tool| {
            assert_eq!(tool["type"], "function");
            tool["function"]["name"].as_str().expect("tool name")
        })
        .collect();
    names.sort();
    let mut expected = TOOL_NAMES.to_vec();
    expected.sort();
    assert_eq!(names, expected);
}

/// The other tests script calls with these argument names; fail here, once, if they differ.
#[test]
fn tool_schemas_offer_the_arguments_these_tests_use() {
    let (out, requests, _sandbox) = check("schemas", &[], vec![Reply::Sse(sse::text("hi"))]);
    assert_eq!(requests.len(), 1, "{out:?}");
    let tools = requests[0].body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let uses = [
        ("bash", vec!["command"]),
        ("read_file", vec!["file_path"]),
        ("write_file", vec!["file_path", "content"]),
        ("edit_file", vec!["file_path", "old_string", "new_string"]),
        ("glob", vec!["pattern"]),
        ("grep", vec!["pattern"]),
    ];
    for (name, arguments) in uses {
        let tool = tools.iter().find(|t| t["function"]["name"] == name);
        let properties = &tool.expect(name)["function"]["parameters"]["properties"];
        for argument in arguments {
            assert!(
                properties.get(argument).is_some(),
                "{name} has no '{argument}'"
            );
        }
    }
}

#[test]
fn plain_text_answer_is_exactly_stdout() {
    let text = "Hello — wörld.\nThe bug is in `add`.";
    let (out, requests, _sandbox) = check("plain_text", &[], vec![Reply::Sse(sse::text(text))]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(answer(&out), text, "{out:?}");
    assert_eq!(requests.len(), 1);
}

#[test]
fn stream_split_across_tcp_writes_mid_character() {
    let text = "ünïcödé split into pieces of seven bytes";
    let slowly = Reply::SseSlowly {
        body: sse::text(text),
        chunk: 7,
        pause_ms: 2,
    };
    let (out, _, _sandbox) = check("split_writes", &[], vec![slowly]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(answer(&out), text, "{out:?}");
}

#[test]
fn tool_round_writes_call_and_result_into_history() {
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "read_file", read_calc())])),
        Reply::Sse(sse::text("done")),
    ];
    let (out, requests, _sandbox) = check("tool_round", &[], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(answer(&out), "done", "{out:?}");
    assert!(
        out.stderr.contains("> read_file(") && out.stderr.contains("calc.sh"),
        "{out:?}"
    );
    assert_eq!(requests.len(), 2, "{out:?}");
    let messages = requests[1].messages();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    let assistant = &messages[2];
    assert_eq!(assistant["role"], "assistant");
    let calls = assistant["tool_calls"].as_array().expect("tool_calls");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["id"], "call_1");
    assert_eq!(calls[0]["type"], "function");
    assert_eq!(calls[0]["function"]["name"], "read_file");
    let arguments = calls[0]["function"]["arguments"]
        .as_str()
        .expect("arguments text");
    assert_eq!(
        serde_json::from_str::<Value>(arguments).ok(),
        Some(read_calc())
    );
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    let content = messages[3]["content"].as_str().expect("tool content");
    assert!(
        content.contains("add() { echo $(( $1 - $2 )); }"),
        "{content}"
    );
}

#[test]
fn interleaved_fragments_of_two_calls_are_reassembled() {
    let first = json!({"file_path": "calc.sh"}).to_string();
    let second = json!({"file_path": "test_calc.sh"}).to_string();
    let (first_a, first_b) = first.split_at(9);
    let (second_a, second_b) = second.split_at(13);
    let stream = sse::role()
        + &sse::call_start(0, "call_a", "read_file")
        + &sse::call_start(1, "call_b", "read_file")
        + &sse::call_args(0, first_a)
        + &sse::call_args(1, second_a)
        + &sse::call_args(0, first_b)
        + &sse::call_args(1, second_b)
        + &sse::finish("tool_calls")
        + &sse::done();
    let script = vec![Reply::Sse(stream), Reply::Sse(sse::text("ok"))];
    let (out, requests, _sandbox) = check("interleaved", &[], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(requests.len(), 2, "{out:?}");
    let messages = requests[1].messages();
    let calls = messages[2]["tool_calls"].as_array().expect("tool_calls");
    let ids: Vec<&Value> = calls.iter().map(|c| &c["id"]).collect();
    assert_eq!(ids, [&json!("call_a"), &json!("call_b")]);
    assert_eq!(
        calls[0]["function"]["arguments"].as_str(),
        Some(first.as_str())
    );
    assert_eq!(
        calls[1]["function"]["arguments"].as_str(),
        Some(second.as_str())
    );
    let results = requests[1].tool_results();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].0, "call_a");
    assert!(results[0].1.contains("calculator"), "{results:#?}");
    assert_eq!(results[1].0, "call_b");
    assert!(results[1].1.contains("PASS"), "{results:#?}");
}

/// In `-p` mode a text answer ends the run, so only the kept side is visible in a request.
#[test]
fn reasoning_is_kept_on_tool_call_turns_and_not_printed_as_answer() {
    let calls = sse::call_deltas(&[("call_1", "read_file", &read_calc().to_string())]);
    let thinking = sse::role()
        + &sse::reasoning("I should read ")
        + &sse::reasoning("calc.sh first.")
        + &calls
        + &sse::finish("tool_calls")
        + &sse::done();
    let answering = sse::role()
        + &sse::reasoning("Now I know.")
        + &sse::content("add subtracts")
        + &sse::finish("stop")
        + &sse::done();
    let script = vec![Reply::Sse(thinking), Reply::Sse(answering)];
    let (out, requests, _sandbox) = check("reasoning", &[], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(answer(&out), "add subtracts", "{out:?}");
    assert!(
        out.stderr.contains("Now I know."),
        "reasoning goes to stderr: {out:?}"
    );
    let messages = requests[1].messages();
    assert_eq!(
        messages[2]["reasoning_content"],
        "I should read calc.sh first."
    );
    for message in messages.iter().filter(|m| m["role"] != "assistant") {
        assert!(message.get("reasoning_content").is_none(), "{message}");
    }
}

#[test]
fn invalid_json_arguments_become_an_error_result_and_the_run_goes_on() {
    let script = vec![
        Reply::Sse(sse::tool_calls_raw(&[(
            "call_bad",
            "read_file",
            r#"{"file_path": "#,
        )])),
        Reply::Sse(sse::text("recovered")),
    ];
    let (out, requests, _sandbox) = check("bad_json", &[], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(answer(&out), "recovered");
    let results = requests[1].tool_results();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "call_bad");
    assert!(
        results[0]
            .1
            .starts_with("Error: bad arguments for read_file:"),
        "{results:?}"
    );
}

/// A tool the request did not offer is refused before anything else (`--yes` or not), and the
/// model is told so.
#[test]
fn unknown_tool_becomes_an_error_result() {
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("call_x", "frobnicate", json!({}))])),
        Reply::Sse(sse::text("ok")),
    ];
    let (out, requests, _sandbox) = check("unknown_tool", &["--yes"], script);
    assert_eq!(out.code, 0, "{out:?}");
    let results = requests[1].tool_results();
    assert_eq!(results[0].0, "call_x");
    assert!(
        results[0]
            .1
            .starts_with("Error: tool 'frobnicate' is not available here"),
        "{results:?}"
    );
}

#[test]
fn round_cap_exits_3() {
    let script = (1..=4)
        .map(|n| {
            Reply::Sse(sse::tool_calls(&[(
                &format!("call_{n}"),
                "read_file",
                read_calc(),
            )]))
        })
        .collect();
    let (out, requests, _sandbox) = check("round_cap", &["--max-rounds", "2"], script);
    assert_eq!(out.code, 3, "{out:?}");
    let printed = format!("{}{}", out.stdout, out.stderr);
    assert!(
        printed.contains("(reached maximum tool-call rounds)"),
        "{out:?}"
    );
    assert!(
        requests.len() <= 3,
        "{} requests for 2 rounds",
        requests.len()
    );
}
