//! The OpenAI Responses dialect (`--provider responses`) through the binary: what each request
//! carries (`POST /v1/responses`, `input` items, calls and results paired by `call_id`, the
//! encrypted reasoning sent back, `store: false`, `include`), the replies replayed from
//! `fixtures/sse/responses_*.sse`, faults in the stream, Ctrl+C mid-stream, early start of a
//! read-only call, and a session saved in chat completions resumed in this dialect.

use crate::early::read_before_the_stream_ends;
use crate::run::{Output, Sandbox, finish, run, spawn_with};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::time::Duration;

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/sse/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The answer `responses_text.sse` streams.
const ANSWER: &str = "Hello! The tests pass.";

fn responses(task: &str, server: &Server, sandbox: &Sandbox) -> Output {
    let out = run(&["--provider", "responses", "-p", task], server, sandbox);
    assert!(!out.stderr.contains("panicked"), "{out:?}");
    out
}

fn input(request: &Recorded) -> Vec<Value> {
    request.body["input"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn kinds(items: &[Value]) -> Vec<String> {
    let kind = |item: &Value| match item["type"].as_str() {
        Some("message") => item["role"].as_str().unwrap_or("?").to_string(),
        Some(other) => other.to_string(),
        None => "?".to_string(),
    };
    items.iter().map(kind).collect()
}

/// Every `function_call` is answered by exactly one `function_call_output` with its `call_id`,
/// after it; no output answers nothing. The API refuses the request otherwise.
fn assert_paired(request: &Recorded) {
    let items = input(request);
    let mut open: Vec<&str> = Vec::new();
    for item in &items {
        let call_id = item["call_id"].as_str().unwrap_or("");
        match item["type"].as_str() {
            Some("function_call") => open.push(call_id),
            Some("function_call_output") => {
                let at = open.iter().position(|id| *id == call_id);
                let at = at.unwrap_or_else(|| panic!("{call_id} answers nothing: {items:#?}"));
                open.remove(at);
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "unanswered {open:?}: {items:#?}");
}

fn event(kind: &str, mut fields: Value) -> String {
    fields["type"] = json!(kind);
    format!("event: {kind}\ndata: {fields}\n\n")
}

/// A whole `function_call` item: added, its arguments in two deltas, done.
fn call(index: u64, call_id: &str, name: &str, args: &str) -> String {
    let item_id = format!("fc_{index}");
    let item = json!({"type": "function_call", "id": item_id, "call_id": call_id,
                      "name": name, "arguments": ""});
    let (head, tail) = args.split_at(args.len() / 2);
    let delta = |d: &str| {
        let fields = json!({"item_id": item_id, "output_index": index, "delta": d});
        event("response.function_call_arguments.delta", fields)
    };
    let mut done = item.clone();
    done["arguments"] = json!(args);
    event(
        "response.output_item.added",
        json!({"output_index": index, "item": item}),
    ) + &delta(head)
        + &delta(tail)
        + &event(
            "response.function_call_arguments.done",
            json!({"item_id": item_id, "output_index": index, "arguments": args}),
        )
        + &event(
            "response.output_item.done",
            json!({"output_index": index, "item": done}),
        )
}

fn completed() -> String {
    let usage = json!({"input_tokens": 50, "output_tokens": 5,
                       "input_tokens_details": {"cached_tokens": 0}});
    event(
        "response.completed",
        json!({"response": {"status": "completed", "usage": usage}}),
    )
}

/// A plain answer goes to `/v1/responses` in the stateless streaming shape, with the key as a
/// bearer token and the tools flattened; nothing of chat completions' body is sent.
#[test]
fn a_text_answer_comes_from_a_stateless_request() {
    let sandbox = Sandbox::new("responses_text");
    let server = Server::start(vec![Reply::Sse(fixture("responses_text.sse"))]);
    let out = responses("say hello", &server, &sandbox);
    assert_eq!((out.code, out.stdout.trim_end()), (0, ANSWER), "{out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/responses")
    );
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    let body = &request.body;
    assert_eq!(
        (&body["stream"], &body["store"]),
        (&json!(true), &json!(false))
    );
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["max_output_tokens"], 4096);
    for not_sent in ["messages", "stream_options", "max_tokens", "temperature"] {
        assert!(body.get(not_sent).is_none(), "{not_sent}: {body:#}");
    }
    let items = input(request);
    assert_eq!(kinds(&items), ["system", "user"], "{items:#?}");
    assert_eq!(items[1]["content"], "say hello");
    let tools = body["tools"].as_array().expect("tools");
    let read = tools
        .iter()
        .find(|t| t["name"] == "read_file")
        .expect("read_file");
    assert_eq!(
        (&read["type"], &read["strict"]),
        (&json!("function"), &json!(false))
    );
    assert!(read["parameters"]["properties"].is_object(), "{read:#}");
}

/// Two parallel calls, then a reasoning item and a call: every result names its call's
/// `call_id` (not the `fc_` item id), and the reasoning item goes back encrypted, without its
/// id, just before the call it came with.
#[test]
fn calls_pair_by_call_id_and_reasoning_goes_back() {
    let sandbox = Sandbox::new("responses_calls");
    sandbox.write("src/main.rs", "fn main() { println!(\"hi\"); }\n");
    let script = vec![
        Reply::Sse(fixture("responses_two_calls.sse")),
        Reply::Sse(fixture("responses_reasoning.sse")),
        Reply::Sse(fixture("responses_text.sse")),
    ];
    let server = Server::start(script);
    let out = responses("find main", &server, &sandbox);
    assert_eq!((out.code, out.stdout.trim_end()), (0, ANSWER), "{out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{out:?}");
    requests.iter().for_each(assert_paired);
    let second = input(&requests[1]);
    let calls = ["function_call", "function_call"];
    let outputs = ["function_call_output", "function_call_output"];
    assert_eq!(kinds(&second)[2..], [&calls[..], &outputs[..]].concat());
    assert_eq!(
        (&second[2]["call_id"], &second[4]["call_id"]),
        (&json!("call_A1"), &json!("call_A1"))
    );
    assert_eq!(second[5]["call_id"], "call_B2");
    let third = input(&requests[2]);
    let tail = ["reasoning", "function_call", "function_call_output"];
    assert_eq!(kinds(&third)[6..], tail, "{third:#?}");
    let reasoning = &third[6];
    assert!(
        reasoning["encrypted_content"]
            .as_str()
            .unwrap()
            .starts_with("gAAAAAB")
    );
    assert_eq!(reasoning["summary"][0]["type"], "summary_text");
    assert!(reasoning.get("id").is_none(), "{reasoning:#}");
    assert_eq!(third[7]["call_id"], "call_R3");
    assert_eq!(third[8]["call_id"], "call_R3");
    let output = third[8]["output"].as_str().unwrap();
    assert!(output.contains("println!"), "{output}");
    // Shown as reasoning is: dimmed on a terminal, marked on a pipe.
    let shown = out
        .stderr
        .contains("[reasoning] **Finding the entry point**");
    assert!(shown, "the summary is shown as reasoning: {out:?}");
}

/// `response.failed`, a stream cut mid-event and an `error` event are each retried, and the
/// answer of the retry is printed once.
#[test]
fn failed_cut_and_error_streams_are_retried() {
    let faults = [
        ("failed", Reply::Sse(fixture("responses_failed.sse"))),
        ("cut", Reply::SseThenDrop(fixture("responses_cut.sse"))),
        ("error", Reply::Sse(fixture("responses_error_event.sse"))),
    ];
    for (name, fault) in faults {
        let sandbox = Sandbox::new(&format!("responses_fault_{name}"));
        let script = vec![fault, Reply::Sse(fixture("responses_text.sse"))];
        let server = Server::start(script);
        let out = responses("go", &server, &sandbox);
        assert_eq!(
            (out.code, out.stdout.trim_end()),
            (0, ANSWER),
            "{name}: {out:?}"
        );
        assert_eq!(server.requests().len(), 2, "{name}: {out:?}");
    }
    let sandbox = Sandbox::new("responses_fault_said");
    let failing = (0..5).map(|_| Reply::Sse(fixture("responses_failed.sse")));
    let server = Server::start(failing.collect());
    let out = responses("go", &server, &sandbox);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("The model failed to generate a response."),
        "{out:?}"
    );
}

/// The output limit cut the answer: what came is printed, and the user is told why.
#[test]
fn an_incomplete_response_is_reported_cut_off() {
    let sandbox = Sandbox::new("responses_incomplete");
    let server = Server::start(vec![Reply::Sse(fixture("responses_incomplete.sse"))]);
    let out = responses("go", &server, &sandbox);
    assert_eq!(out.code, 6, "{out:?}");
    assert!(
        out.stdout.contains("Here is the first half of the ans"),
        "{out:?}"
    );
    assert!(
        out.stderr.contains("cut off at the output token limit"),
        "{out:?}"
    );
}

/// Ctrl+C while the stream is silent mid-answer: exit 130, the part that arrived kept.
#[test]
fn ctrl_c_mid_stream_exits_130_with_the_partial_answer() {
    let sandbox = Sandbox::new("responses_ctrl_c");
    let text = fixture("responses_text.sse");
    let head = &text[..text
        .find("event: response.output_text.done")
        .expect("text.done")];
    let stall = Reply::SseThenStall {
        body: head.to_string(),
        ms: 30_000,
    };
    let server = Server::start(vec![stall]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
        ("CORECODER_PROVIDER", "responses"),
    ];
    let child = spawn_with(&["-p", "hello"], &env, &sandbox);
    assert!(server.wait_for_requests(1, Duration::from_secs(20)));
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: `child` is our own, still unreaped.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = finish(child);
    assert_eq!(out.code, 130, "{out:?}");
    assert_eq!(out.stdout, format!("{ANSWER}\n"), "{out:?}");
}

/// A `read_file` call whose arguments are done runs while the response goes on streaming
/// for two more seconds (`early.rs`'s FIFO: the pipe empties when the tool reads).
#[test]
fn a_finished_read_only_call_starts_before_the_response_ends() {
    let sandbox = Sandbox::new("responses_early");
    let reply = |path: &str| {
        let args = json!({"file_path": path}).to_string();
        let second = call(1, "call_glob", "glob", r#"{"pattern": "*.txt"}"#);
        let at = second.find("event: response.function_call_arguments.delta");
        let (second_head, second_tail) = second.split_at(at.expect("a delta"));
        let mut tail = vec![second_tail.to_string()];
        tail.extend((0..20).map(|_| ": keep-alive\n\n".to_string()));
        tail.push(completed());
        let head = call(0, "call_read", "read_file", &args) + second_head;
        Reply::SseSlowTail {
            head,
            tail,
            pause_ms: 100,
        }
    };
    let args = ["--provider", "responses", "-p", "read the pipe"];
    let next = Reply::Sse(fixture("responses_text.sse"));
    let requests = read_before_the_stream_ends(&sandbox, &args, reply, next);
    assert_paired(&requests[1]);
    let results = input(&requests[1]);
    let read = results.iter().find(|i| i["type"] == "function_call_output");
    let read = read.expect("a result");
    assert_eq!(read["call_id"], "call_read");
    assert!(
        read["output"].as_str().unwrap().contains("from the pipe"),
        "{read:#}"
    );
}

/// A session saved in chat completions (a call and its result, an answer) resumes in the
/// Responses dialect: the history becomes `input` items, the call and its result paired by
/// the chat call's id.
#[test]
fn a_chat_completions_session_resumes_in_responses() {
    let sandbox = Sandbox::new("responses_resume");
    sandbox.write("notes.txt", "some notes\n");
    let chat = vec![
        Reply::Sse(sse::tool_calls(&[(
            "call_chat1",
            "read_file",
            json!({"file_path": "notes.txt"}),
        )])),
        Reply::Sse(sse::text("They are notes.")),
    ];
    let server = Server::start(chat);
    let out = run(&["-p", "read the notes"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let id = only_session(&sandbox);
    let server = Server::start(vec![Reply::Sse(fixture("responses_text.sse"))]);
    let out = run(
        &["--provider", "responses", "-r", &id, "-p", "and now?"],
        &server,
        &sandbox,
    );
    assert_eq!((out.code, out.stdout.trim_end()), (0, ANSWER), "{out:?}");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/responses");
    assert_paired(request);
    let items = input(request);
    let want = [
        "system",
        "user",
        "function_call",
        "function_call_output",
        "assistant",
        "user",
    ];
    assert_eq!(kinds(&items), want, "{items:#?}");
    assert_eq!(
        (&items[2]["call_id"], &items[3]["call_id"]),
        (&json!("call_chat1"), &json!("call_chat1"))
    );
    assert!(items[3]["output"].as_str().unwrap().contains("some notes"));
    assert_eq!(items[4]["content"], "They are notes.");
}

/// The other way: a Responses session whose reply carried encrypted reasoning resumes in chat
/// completions, and the reasoning items stay behind (chat completions has no place for them).
#[test]
fn a_responses_session_resumes_in_chat_completions() {
    let sandbox = Sandbox::new("responses_resume_chat");
    sandbox.write("src/main.rs", "fn main() {}\n");
    let script = vec![
        Reply::Sse(fixture("responses_reasoning.sse")),
        Reply::Sse(fixture("responses_text.sse")),
    ];
    let server = Server::start(script);
    assert_eq!(responses("find main", &server, &sandbox).code, 0);
    let id = only_session(&sandbox);
    let server = Server::start(vec![Reply::Sse(sse::text("resumed"))]);
    let out = run(&["-r", &id, "-p", "and now?"], &server, &sandbox);
    assert_eq!((out.code, out.stdout.trim_end()), (0, "resumed"), "{out:?}");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    request.assert_valid_history();
    let sent = request.body.to_string();
    assert!(
        sent.contains("call_R3") && !sent.contains("encrypted_content"),
        "{sent}"
    );
}

/// The id of the one session the sandbox holds.
fn only_session(sandbox: &Sandbox) -> String {
    let sessions = sandbox.home.join(".corecoder/sessions");
    let entry = std::fs::read_dir(&sessions).expect("a session").next();
    let path = entry.expect("one").expect("entry").path();
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// A stream that lost an event is never used: a gap in `sequence_number` (4 → 6: the "!"
/// lost), or, from a gateway that strips the numbers, a call whose arguments lost a delta
/// (`"offset":1` for 10) unlike its `.done`. Each is retried like a broken stream: the retry's
/// answer is printed, the lost reply's call never runs, and the user is told why.
#[test]
fn a_stream_that_lost_an_event_is_retried_never_used() {
    let lossy = [
        ("gap", "responses_handmade_sequence_gap.sse"),
        ("args", "responses_handmade_lost_delta_no_sequence.sse"),
    ];
    for (name, stream) in lossy {
        let sandbox = Sandbox::new(&format!("responses_lost_{name}"));
        sandbox.write("src/main.rs", "fn main() {}\n");
        let script = vec![
            Reply::Sse(fixture(stream)),
            Reply::Sse(fixture("responses_text.sse")),
        ];
        let server = Server::start(script);
        let out = responses("go", &server, &sandbox);
        assert_eq!(
            (out.code, out.stdout.trim_end()),
            (0, ANSWER),
            "{name}: {out:?}"
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{name}: {out:?}");
        assert_eq!(input(&requests[1]), input(&requests[0]), "{name}: acted on");
        assert!(out.stderr.contains("lost a piece"), "{name}: {out:?}");
    }
}
