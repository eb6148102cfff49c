//! What servers no one on the project wrote send, replayed through the binary: raw streams from
//! `fixtures/sse/` and whole HTTP answers from `fixtures/http/` (llama-cpp-python, vLLM, nginx
//! in front of a provider, a wrong base URL). Each test shows what the user sees and that no
//! call runs, and no answer is printed, with a piece missing.

use crate::run::{Output, Sandbox, run, run_with};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::path::Path;

fn fixture(path: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn stream(name: &str) -> String {
    String::from_utf8(fixture(&format!("sse/{name}"))).expect("a UTF-8 stream")
}

fn answer(name: &str) -> Reply {
    Reply::Raw(fixture(&format!("http/{name}")))
}

/// `-p go` (plus `extra`) against `script`; every request must carry a valid history.
fn check(sandbox: &Sandbox, extra: &[&str], script: Vec<Reply>) -> (Output, Vec<Recorded>) {
    let server = Server::start(script);
    let mut args = vec!["-p", "go"];
    args.extend_from_slice(extra);
    let output = run(&args, &server, sandbox);
    let requests = server.requests();
    requests.iter().for_each(Recorded::assert_valid_history);
    assert!(!output.stderr.contains("panicked"), "{output:?}");
    (output, requests)
}

/// A chunk that is not JSON in the middle of `write_file`'s arguments: skipping it would write
/// the file with 12 characters missing. The whole request is sent again instead, and the file
/// is written once, whole.
#[test]
fn a_lost_chunk_retries_the_reply_and_the_file_is_written_whole() {
    let sandbox = Sandbox::new("servers_lost_chunk");
    let broken = stream("invalid-json-mid-arguments.sse");
    let clean = broken.replace(r"MIDDLE\x-12chr", "MIDDLE-12chr");
    let script = vec![
        Reply::Sse(broken),
        Reply::Sse(clean),
        Reply::Sse(sse::text("written")),
    ];
    let (out, requests) = check(&sandbox, &["--yes"], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(sandbox.read("out.txt"), "start-MIDDLE-12chr-end");
    assert_eq!(requests.len(), 3, "{out:?}");
    assert_eq!(requests[0].body, requests[1].body, "the same request again");
    assert_eq!(requests[2].tool_results().len(), 1, "the call ran once");
    assert!(out.stderr.contains("not valid JSON"), "{out:?}");
    assert!(out.stderr.contains("[retry 1"), "{out:?}");
}

/// The same for text: the answer printed is the retried one, not one with a word lost.
#[test]
fn a_lost_chunk_in_text_is_never_printed_around_the_gap() {
    let sandbox = Sandbox::new("servers_lost_text");
    let script = vec![
        Reply::Sse(stream("invalid-json-in-reply.sse")),
        Reply::Sse(sse::text("a whole answer")),
    ];
    let (out, requests) = check(&sandbox, &[], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "a whole answer\n");
    assert_eq!(requests.len(), 2);
}

/// llama-cpp-python 0.3.36, captured with a forced tool (`CORECODER_TOOL_CHOICE=read_file`,
/// the one choice it streams calls for): each argument piece twice in one delta (in `tool_calls`
/// and the legacy `function_call`), then HTTP 500 for the `content: null` of the assistant
/// turn. The call runs with its real arguments, and the loop goes on with `content: ""`.
#[test]
fn llamacpp_python_tool_loop_runs_to_its_answer() {
    let sandbox = Sandbox::new("servers_llamacpp_python");
    sandbox.write("test.txt", "first line of the test file\nsecond\n");
    let server = Server::start(vec![
        Reply::Sse(stream("llamacpp-python-forced-tool-call.sse")),
        answer("llamacpp-python-null-content-500.http"),
        Reply::Sse(sse::text("read it")),
    ]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
        ("CORECODER_TOOL_CHOICE", "read_file"),
    ];
    let out = run_with(&["-p", "read test.txt"], &env, &sandbox);
    let requests = server.requests();
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "read it\n");
    assert_eq!(requests.len(), 3, "{out:?}");
    let forced = serde_json::json!({"type": "function", "function": {"name": "read_file"}});
    assert_eq!(requests[0].body["tool_choice"], forced);
    let call = &requests[1].messages()[2];
    let args: Value = serde_json::from_str(
        call["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .expect("the arguments are whole JSON");
    assert_eq!(args["file_path"], "test.txt");
    assert!(call["content"].is_null(), "{call}");
    assert_eq!(
        requests[2].messages()[2]["content"],
        "",
        "sent again with \"\""
    );
    assert!(
        requests[2]
            .last_tool_result()
            .contains("first line of the test file")
    );
    assert!(
        !out.stderr.contains("[retry"),
        "an adaptation is not a retry: {out:?}"
    );
}

/// `CORECODER_TOOL_CHOICE` unset sends no `tool_choice`; summaries (no tools) never carry it.
#[test]
fn tool_choice_is_sent_only_when_set() {
    let sandbox = Sandbox::new("servers_tool_choice_unset");
    let (out, requests) = check(&sandbox, &[], vec![Reply::Sse(sse::text("ok"))]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(requests[0].body.get("tool_choice").is_none());
    for (choice, said) in [
        (
            "read file",
            "CORECODER_TOOL_CHOICE: 'read file' is not auto, required, none or a",
        ),
        (
            "always",
            "CORECODER_TOOL_CHOICE: no tool is called 'always'; the tools are bash, ",
        ),
    ] {
        let env = [
            ("CORECODER_API_KEY", "sk-test"),
            ("CORECODER_TOOL_CHOICE", choice),
        ];
        let bad = run_with(&["-p", "go"], &env, &sandbox);
        assert_eq!(bad.code, 2, "{bad:?}");
        assert!(bad.stderr.contains(said), "{bad:?}");
        let named = bad.stderr.contains("read_file, ");
        assert_eq!(named, choice == "always", "the tools named: {bad:?}");
    }
}

/// A tool named in `CORECODER_TOOL_CHOICE` goes in each dialect's own shape.
#[test]
fn a_named_tool_choice_is_sent_in_each_dialect() {
    let sandbox = Sandbox::new("servers_tool_choice_named");
    let dialects = [
        (
            "openai",
            sse::text("ok"),
            json!({"type": "function", "function": {"name": "glob"}}),
        ),
        (
            "anthropic",
            stream("anthropic-text.sse"),
            json!({"type": "tool", "name": "glob"}),
        ),
        (
            "responses",
            stream("responses_text.sse"),
            json!({"type": "function", "name": "glob"}),
        ),
    ];
    for (provider, reply, sent) in dialects {
        let server = Server::start(vec![Reply::Sse(reply)]);
        let url = server.url();
        let env = [
            ("CORECODER_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", url.as_str()),
            ("ANTHROPIC_BASE_URL", url.trim_end_matches("/v1")),
            ("CORECODER_PROVIDER", provider),
            ("CORECODER_TOOL_CHOICE", "glob"),
        ];
        let out = run_with(&["-p", "go"], &env, &sandbox);
        assert_eq!(out.code, 0, "{provider}: {out:?}");
        assert_eq!(server.requests()[0].body["tool_choice"], sent, "{provider}");
    }
}

/// `finish_reason: "length"` on a text answer: printed as far as it came, said on stderr,
/// `error_max_tokens` in JSON, exit code 6.
#[test]
fn an_answer_cut_by_the_output_limit_says_so() {
    let sandbox = Sandbox::new("servers_length_text");
    let script = vec![Reply::Sse(stream("length-cut-text.sse"))];
    let (out, _) = check(&sandbox, &[], script);
    assert_eq!(out.code, 6, "{out:?}");
    assert_eq!(out.stdout, "The answer is forty\n");
    assert!(
        out.stderr.contains("cut off at the output token limit"),
        "{out:?}"
    );
    let script = vec![Reply::Sse(stream("length-cut-text.sse"))];
    let (out, _) = check(&sandbox, &["--output-format", "json"], script);
    let result: Value = serde_json::from_str(out.stdout.trim()).expect("one JSON object");
    assert_eq!(out.code, 6, "{out:?}");
    assert_eq!(result["subtype"], "error_max_tokens");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["result"], "The answer is forty");
}

/// A `write_file` whose arguments the output limit cut is not run; the model is told why.
#[test]
fn a_call_cut_by_the_output_limit_is_not_run() {
    let sandbox = Sandbox::new("servers_length_call");
    let script = vec![
        Reply::Sse(stream("length-cut-tool-call.sse")),
        Reply::Sse(sse::text("I will write it in parts")),
    ];
    let (out, requests) = check(&sandbox, &["--yes"], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!sandbox.path("big.txt").exists(), "a cut call must not run");
    let result = requests[1].last_tool_result();
    assert!(
        result.contains("not run") && result.contains("output token limit"),
        "{result}"
    );
    assert!(out.stderr.contains("write_file: not run"), "{out:?}");
}

/// A stream of only `[DONE]`, or a reply with no text and no calls, is an error, not silence.
#[test]
fn an_empty_reply_is_an_error() {
    for name in ["done-only.sse", "empty-reply.sse"] {
        let sandbox = Sandbox::new(&format!("servers_{name}"));
        let (out, requests) = check(&sandbox, &[], vec![Reply::Sse(stream(name))]);
        assert_eq!(out.code, 1, "{name}: {out:?}");
        assert!(
            out.stderr.contains("the model returned an empty reply"),
            "{out:?}"
        );
        assert_eq!(out.stdout, "", "{name}");
        assert_eq!(requests.len(), 1, "{name}");
    }
}

/// Each fixture, answered to the first request: the run fails (exit 1) saying `said`, after
/// that one request, with no retry.
fn fails_at_once_saying(cases: &[(&str, &str)]) {
    for (name, said) in cases {
        let sandbox = Sandbox::new(&format!("servers_{name}"));
        let script = vec![answer(name), Reply::Sse(sse::text("never asked"))];
        let (out, requests) = check(&sandbox, &[], script);
        assert_eq!(out.code, 1, "{name}: {out:?}");
        assert!(out.stderr.contains(said), "{name}: {out:?}");
        assert_eq!(requests.len(), 1, "{name}: not retried");
        assert!(!out.stderr.contains("[retry"), "{name}: {out:?}");
    }
}

/// A 200 that is not an event stream is recognised at once, with the server's own words:
/// no retries, since the same request would get the same page.
#[test]
fn a_200_that_is_not_a_stream_says_what_it_is() {
    let cases = [
        (
            "nginx-welcome-200.http",
            "text/html (Welcome to nginx!), not an event stream: check the base URL",
        ),
        (
            "json-error-200.http",
            "model 'gpt-5.5' is not loaded on this server",
        ),
    ];
    fails_at_once_saying(&cases);
}

/// A 200 that calls itself `text/event-stream` but holds a bare JSON error (LiteLLM's shape) or
/// nothing at all (llama-cpp-python's when its tool-call handler fails): said at once, with the
/// server's words, not retried for 15 s as a broken stream (the same request gets the same).
#[test]
fn a_200_event_stream_of_a_json_error_or_nothing_is_said_at_once() {
    let cases = [
        (
            "handmade-json-error-event-stream-200.http",
            "the server answered with an error: litellm.NotFoundError: model 'qwen-coder' is not",
        ),
        (
            "handmade-empty-event-stream-200.http",
            "the server answered 200 with an empty body (text/event-stream; charset=utf-8)",
        ),
    ];
    fails_at_once_saying(&cases);
}

/// A validator's list of errors (LiteLLM passing on ten, a FastAPI server's `detail`) is shown
/// by its first field and why, not cut before them.
#[test]
fn a_validators_errors_show_the_first_field_and_why() {
    let cases = [
        (
            "handmade-litellm-validation-errors-400.http",
            "HTTP 400: tools.0.function.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$' \
             (the first of: litellm.BadRequestError: Hosted_vllmException - 10 validation errors:)",
        ),
        (
            "handmade-fastapi-detail-422.http",
            "HTTP 422: messages.1.tool_call_id: Field required (the first of 2 refused fields)",
        ),
    ];
    fails_at_once_saying(&cases);
}

/// A server that ignores `stream: true` and sends a whole `chat.completion`: it is the answer.
#[test]
fn a_whole_completion_is_accepted() {
    let sandbox = Sandbox::new("servers_whole_completion");
    let (out, requests) = check(&sandbox, &[], vec![answer("whole-completion-200.http")]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "a whole answer, not streamed\n");
    assert_eq!(requests.len(), 1);
}

/// Error bodies are shown as one line each (an HTML page by its title, a 10 KB validation
/// error cut short), in every retry notice; the whole body is in `--trace`.
#[test]
fn error_bodies_are_one_line_and_whole_in_the_trace() {
    let sandbox = Sandbox::new("servers_error_bodies");
    let script = vec![
        answer("nginx-bad-gateway-502.http"),
        answer("long-validation-error-400.http"),
    ];
    let (out, _) = check(&sandbox, &["--trace", "trace.jsonl"], script);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("HTTP 502: 502 Bad Gateway]"), "{out:?}");
    assert!(!out.stderr.contains("<html>"), "{out:?}");
    let last = out.stderr.lines().last().unwrap_or_default();
    let first =
        "HTTP 400: messages.0.content: field required (the first of: Request validation failed:";
    assert!(last.contains(first), "{out:?}");
    assert!(
        last.len() < 300,
        "one short line, not 10 KB: {} bytes",
        last.len()
    );
    let trace = sandbox.read("trace.jsonl");
    let bodies: Vec<String> = (trace.lines())
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["kind"] == "http_error")
        .map(|record| record.to_string())
        .collect();
    assert_eq!(bodies.len(), 2, "{trace}");
    assert!(
        bodies[0].contains("<center><h1>502 Bad Gateway</h1></center>"),
        "{}",
        bodies[0]
    );
    assert!(
        bodies[1].contains("119") && bodies[1].len() > 10_000,
        "the whole body"
    );
}

/// The provider's window is smaller than `CORECODER_MAX_CONTEXT` (vLLM's wording, with its
/// numbers): the history is compacted for the provider's count and sent once more, smaller;
/// if compaction cannot shrink it, the run fails at once with the provider's message.
#[test]
fn a_context_overflow_compacts_by_the_providers_numbers() {
    let sandbox = Sandbox::new("servers_overflow");
    sandbox.write(
        "big.txt",
        &"a line of a fairly long file for the context\n".repeat(150),
    );
    let read = sse::tool_calls(&[(
        "call_1",
        "read_file",
        serde_json::json!({"file_path": "big.txt"}),
    )]);
    let script = vec![
        Reply::Sse(read),
        answer("vllm-context-overflow-400.http"),
        Reply::Sse(sse::text("fits now")),
    ];
    let server = Server::answering_summaries(script, "summary: read big.txt");
    let out = run(&["-p", "go"], &server, &sandbox);
    let requests: Vec<Recorded> = server
        .requests()
        .into_iter()
        .filter(|r| r.body.get("tools").is_some())
        .collect();
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "fits now\n");
    assert_eq!(requests.len(), 3, "{out:?}");
    let size = |r: &Recorded| r.body["messages"].to_string().len();
    assert!(
        size(&requests[2]) * 2 < size(&requests[1]),
        "{} -> {}",
        size(&requests[1]),
        size(&requests[2])
    );
    assert!(
        out.stderr
            .contains("the provider allows about 1984 prompt tokens"),
        "{out:?}"
    );

    // Nothing left to compact: one request, then the provider's message, exit 1.
    let sandbox = Sandbox::new("servers_overflow_stuck");
    let script = vec![
        answer("vllm-context-overflow-400.http"),
        Reply::Sse(sse::text("never")),
    ];
    let (out, requests) = check(&sandbox, &[], script);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(requests.len(), 1, "{out:?}");
    assert!(
        out.stderr.contains("maximum context length is 2048 tokens"),
        "{out:?}"
    );
}

/// What the provider taught is kept in the session: `-c` sends `content: ""` in its first
/// request, rather than spending a 500 to learn it again.
#[test]
fn a_resumed_session_remembers_the_content_null_repair() {
    let sandbox = Sandbox::new("servers_content_resumed");
    sandbox.write("test.txt", "first line of the test file\n");
    let first = Server::start(vec![
        Reply::Sse(stream("llamacpp-python-forced-tool-call.sse")),
        answer("llamacpp-python-null-content-500.http"),
        Reply::Sse(sse::text("read it")),
    ]);
    let out = run(&["-p", "read test.txt"], &first, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(first.requests().len(), 3, "learnt from the 500: {out:?}");
    let second = Server::start(vec![Reply::Sse(sse::text("still there"))]);
    let out = run(&["-c", "-p", "and now?"], &second, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let resumed = second.requests();
    assert_eq!(resumed.len(), 1, "{out:?}");
    let call = &resumed[0].messages()[2];
    assert!(call["tool_calls"].is_array(), "{call}");
    assert_eq!(call["content"], "", "{call}");
}

/// The same adaptation for a 400 or 422 that names `content` (other validators say it so).
#[test]
fn a_400_or_422_naming_content_sends_an_empty_string_instead() {
    for code in [400, 422] {
        let sandbox = Sandbox::new(&format!("servers_content_{code}"));
        sandbox.write("notes.txt", "notes\n");
        let read = sse::tool_calls(&[(
            "c1",
            "read_file",
            serde_json::json!({"file_path": "notes.txt"}),
        )]);
        let script = vec![
            Reply::Sse(read),
            Reply::error(code, "messages.2.content: Input should be a valid string"),
            Reply::Sse(sse::text("read")),
        ];
        let (out, requests) = check(&sandbox, &[], script);
        assert_eq!(out.code, 0, "{code}: {out:?}");
        assert_eq!(requests.len(), 3, "{code}");
        assert!(requests[1].messages()[2]["content"].is_null(), "{code}");
        assert_eq!(requests[2].messages()[2]["content"], "", "{code}");
    }
}
