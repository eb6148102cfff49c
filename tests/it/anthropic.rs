//! The Anthropic Messages dialect through the binary: `--provider anthropic` (or
//! `CORECODER_PROVIDER`) against the loopback server replaying `fixtures/sse/anthropic-*.sse`
//! and `fixtures/http/anthropic-*.http`. Every request the server receives is checked: the path,
//! the headers, the mapping of our history (tool_use, merged tool_result, is_error), the signed
//! thinking sent back, where cache_control goes. Then faults (a cut stream, an error event, a
//! 529, a 429, a 400), Ctrl+C mid-stream, and a session resumed across dialects.

use crate::run::{Output, Sandbox, finish, run_with, spawn_with};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

fn fixture(path: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn stream(name: &str) -> String {
    String::from_utf8(fixture(&format!("sse/{name}"))).expect("a UTF-8 stream")
}

/// The environment of an Anthropic user: the key under its own name, the server's root as the
/// base URL (the client adds `/v1/messages`).
fn env(server: &Server) -> Vec<(&'static str, String)> {
    let base = server.url().trim_end_matches("/v1").to_string();
    vec![
        ("ANTHROPIC_API_KEY", "sk-test".to_string()),
        ("ANTHROPIC_BASE_URL", base),
        ("CORECODER_PROVIDER", "anthropic".to_string()),
    ]
}

/// `-p TASK` (plus `extra`) against `script`; every request must be a valid Messages request.
fn check(sandbox: &Sandbox, extra: &[&str], script: Vec<Reply>) -> (Output, Vec<Recorded>) {
    let server = Server::start(script);
    let mut args = vec!["-p", "look at main.rs"];
    args.extend_from_slice(extra);
    let env = env(&server);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let output = run_with(&args, &env, sandbox);
    let requests = server.requests();
    requests.iter().for_each(assert_messages_request);
    assert!(!output.stderr.contains("panicked"), "{output:?}");
    (output, requests)
}

/// What the Messages API requires of every request we send.
fn assert_messages_request(request: &Recorded) {
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-test"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        request.header("authorization"),
        None,
        "the key goes in x-api-key only"
    );
    let body = &request.body;
    assert_eq!(
        (body["stream"].as_bool(), body["max_tokens"].as_u64()),
        (Some(true), Some(4096))
    );
    assert!(
        body["system"][0]["text"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{body}"
    );
    let messages = body["messages"].as_array().expect("messages");
    // Roles alternate, starting with the user; each tool_use is answered in the next message.
    for (at, message) in messages.iter().enumerate() {
        let role = if at % 2 == 0 { "user" } else { "assistant" };
        assert_eq!(message["role"], role, "message {at}: {body:#}");
        let ids = |kind: &str, key: &str| -> Vec<String> {
            let blocks = message["content"].as_array().cloned().unwrap_or_default();
            (blocks.iter().filter(|b| b["type"] == kind))
                .map(|b| b[key].as_str().unwrap_or("").to_string())
                .collect()
        };
        let asked = ids("tool_use", "id");
        if !asked.is_empty() {
            let next = messages.get(at + 1).expect("the calls are answered");
            let blocks = next["content"].as_array().cloned().unwrap_or_default();
            let answered: Vec<&str> = (blocks.iter().filter(|b| b["type"] == "tool_result"))
                .filter_map(|b| b["tool_use_id"].as_str())
                .collect();
            assert_eq!(asked, answered, "message {at}: {body:#}");
        }
    }
    // Two breakpoints: the system prompt and the newest message's last block.
    let marked = body.to_string().matches("\"cache_control\"").count();
    assert_eq!(marked, 2, "{body:#}");
    assert!(body["system"].as_array().unwrap().last().unwrap()["cache_control"].is_object());
    let newest = messages.last().unwrap()["content"].as_array().unwrap();
    assert_eq!(
        newest.last().unwrap()["cache_control"],
        json!({"type": "ephemeral"})
    );
}

/// An Anthropic stream of one text answer.
fn text(answer: &str) -> Reply {
    let text = serde_json::to_string(answer).unwrap();
    Reply::Sse(
        stream("anthropic-text.sse")
            .replace(r#""Hello""#, &text)
            .replace("! How can I help?", ""),
    )
}

/// One `tool_use` block at `index`, its input in two `input_json_delta` pieces.
fn tool_use(index: usize, id: &str, name: &str, input: Value) -> String {
    let input = input.to_string();
    let (head, tail) = input.split_at(input.len() / 2);
    let start = json!({"type": "content_block_start", "index": index,
        "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}});
    let piece = |part: &str| {
        json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": part}})
    };
    let stop = json!({"type": "content_block_stop", "index": index});
    [
        ("content_block_start", start),
        ("content_block_delta", piece(head)),
    ]
    .into_iter()
    .chain([
        ("content_block_delta", piece(tail)),
        ("content_block_stop", stop),
    ])
    .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
    .collect()
}

/// A whole reply of `blocks`, ending with `stop_reason: tool_use`.
fn calls(blocks: &str) -> Reply {
    let start = r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}"#;
    let delta = r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}"#;
    Reply::Sse(format!(
        "event: message_start\ndata: {start}\n\n{blocks}event: message_delta\ndata: {delta}\n\n\
         event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
    ))
}

fn blocks(message: &Value) -> Vec<Value> {
    message["content"].as_array().cloned().unwrap_or_default()
}

/// A tool round: the call arrives in seven pieces, runs, and goes back as `tool_use` with its
/// result as `tool_result`; the answer is stdout.
#[test]
fn a_tool_round_speaks_messages_both_ways() {
    let sandbox = Sandbox::new("anthropic_round");
    sandbox.write("src/main.rs", "fn main() { println!(\"hi\"); }\n");
    let script = vec![
        Reply::Sse(stream("anthropic-tool-call.sse")),
        text("It prints hi."),
    ];
    let (out, requests) = check(&sandbox, &[], script);
    assert_eq!(
        (out.code, out.stdout.trim()),
        (0, "It prints hi."),
        "{out:?}"
    );
    assert_eq!(requests.len(), 2);
    let first = &requests[0].body;
    assert_eq!(first["model"], "claude-sonnet-5-5");
    let read_file = (first["tools"].as_array().unwrap().iter())
        .find(|tool| tool["name"] == "read_file")
        .expect("read_file offered");
    assert!(read_file["input_schema"]["properties"]["file_path"].is_object());
    assert!(read_file.get("function").is_none() && read_file.get("type").is_none());
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert_eq!(blocks(&messages[0])[0]["text"], "look at main.rs");
    let assistant = blocks(&messages[1]);
    assert_eq!(
        assistant[0],
        json!({"type": "text", "text": "I'll read the file."})
    );
    let call = &assistant[1];
    assert_eq!(
        (&call["type"], &call["id"]),
        (&json!("tool_use"), &json!("toolu_01T1x1fJ34qAmk2tNTrN7Up6"))
    );
    assert_eq!(
        call["input"],
        json!({"file_path": "src/main.rs", "limit": 40})
    );
    let result = &blocks(&messages[2])[0];
    assert_eq!(result["tool_use_id"], "toolu_01T1x1fJ34qAmk2tNTrN7Up6");
    assert!(
        result["content"].as_str().unwrap().contains("println!"),
        "{result}"
    );
    assert!(result.get("is_error").is_none());
    // Tokens read from the cache count in the prompt, as cached: (37 × 2 + 1,800 × 0.1 + 104 ×
    // 10) / 1e6 dollars at claude-sonnet-5-5's row.
    assert!(out.stderr.contains("1,837 prompt (1,800 cached"), "{out:?}");
    assert!(out.stderr.contains("$0.0013"), "{out:?}");
    // The task's block lost its breakpoint to the newest one: two marks, never more.
    assert!(blocks(&messages[0])[0].get("cache_control").is_none());
}

/// Two parallel calls, one of which fails: both results in one user message, the failure
/// marked `is_error`.
#[test]
fn parallel_results_are_one_message_and_a_failure_says_is_error() {
    let sandbox = Sandbox::new("anthropic_parallel");
    sandbox.write("a.txt", "alpha\n");
    let two = tool_use(0, "toolu_a", "read_file", json!({"file_path": "a.txt"}))
        + &tool_use(
            1,
            "toolu_b",
            "read_file",
            json!({"file_path": "missing.txt"}),
        );
    let (out, requests) = check(&sandbox, &[], vec![calls(&two), text("one of two")]);
    assert_eq!(out.code, 0, "{out:?}");
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    let results = blocks(&messages[2]);
    assert_eq!(results.len(), 2, "{results:#?}");
    assert_eq!(
        (&results[0]["tool_use_id"], &results[1]["tool_use_id"]),
        (&json!("toolu_a"), &json!("toolu_b"))
    );
    assert!(results[0].get("is_error").is_none(), "{results:#?}");
    assert_eq!(results[1]["is_error"], true, "{results:#?}");
}

/// Thinking is shown (on stderr, dimmed) and goes back with its signature, the redacted block
/// as it came, before the call, in the next request.
#[test]
fn signed_thinking_goes_back_with_the_call() {
    let sandbox = Sandbox::new("anthropic_thinking");
    sandbox.write("lib.rs", "pub fn f() {}\n");
    let thinking = stream("anthropic-thinking.sse")
        .replace(r#""name":"bash""#, r#""name":"glob""#)
        .replace(
            r#"{\"command\": \"cargo test\"}"#,
            r#"{\"pattern\": \"*.rs\"}"#,
        );
    let (out, requests) = check(
        &sandbox,
        &[],
        vec![Reply::Sse(thinking), text("found lib.rs")],
    );
    assert_eq!(
        (out.code, out.stdout.trim()),
        (0, "found lib.rs"),
        "{out:?}"
    );
    assert!(out.stderr.contains("I should call bash."), "{out:?}");
    let assistant = blocks(&requests[1].body["messages"][1]);
    let signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";
    let thought = "The user wants the tests run. I should call bash.";
    assert_eq!(
        assistant[0],
        json!({"type": "thinking", "thinking": thought, "signature": signature})
    );
    assert_eq!(assistant[1]["type"], "redacted_thinking");
    assert_eq!(
        assistant[1]["data"],
        "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"
    );
    assert_eq!(
        (&assistant[2]["type"], &assistant[2]["name"]),
        (&json!("tool_use"), &json!("glob"))
    );
}

#[test]
fn an_error_event_mid_stream_is_retried() {
    let sandbox = Sandbox::new("anthropic_error_event");
    let script = vec![
        Reply::Sse(stream("anthropic-error-mid-stream.sse")),
        text("fine now"),
    ];
    let (out, requests) = check(&sandbox, &[], script);
    assert_eq!((out.code, out.stdout.trim()), (0, "fine now"), "{out:?}");
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body, "the same request again");
    assert!(
        out.stderr.contains("overloaded_error: Overloaded"),
        "{out:?}"
    );
    assert!(out.stderr.contains("[retry 1"), "{out:?}");
}

/// 529 `overloaded_error` and 429 (with `retry-after`) are retried; the user sees why.
#[test]
fn overloaded_and_rate_limited_are_retried() {
    let sandbox = Sandbox::new("anthropic_529");
    let rate_limited = Reply::Status {
        code: 429,
        headers: vec![("retry-after".into(), "0".into())],
        body: r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#.into(),
    };
    let overloaded = Reply::Raw(fixture("http/anthropic-overloaded-529.http"));
    let (out, requests) = check(
        &sandbox,
        &[],
        vec![overloaded, rate_limited, text("made it")],
    );
    assert_eq!((out.code, out.stdout.trim()), (0, "made it"), "{out:?}");
    assert_eq!(requests.len(), 3);
    assert!(out.stderr.contains("HTTP 529: Overloaded"), "{out:?}");
    assert!(
        out.stderr.contains("HTTP 429: Number of request tokens"),
        "{out:?}"
    );
}

/// A 400 as the Messages API sends one, saying `said`.
fn invalid_request(said: &str) -> Reply {
    let body =
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": said}});
    Reply::Status {
        code: 400,
        headers: vec![],
        body: body.to_string(),
    }
}

/// Any other 4xx is not retried, and the user reads the API's own message.
#[test]
fn a_refused_request_shows_the_apis_message() {
    let sandbox = Sandbox::new("anthropic_400");
    let said =
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`";
    let refused = invalid_request(said);
    let (out, requests) = check(&sandbox, &[], vec![refused]);
    assert_eq!((out.code, requests.len()), (1, 1), "{out:?}");
    assert!(out.stderr.contains(&format!("HTTP 400: {said}")), "{out:?}");
}

/// Claude Opus 4.7 and later refuse `temperature` with a 400 ("`temperature` is deprecated for
/// this model."): the request goes again at once without it, and so does every later one.
#[test]
fn a_model_that_refuses_temperature_is_asked_again_without_it() {
    let sandbox = Sandbox::new("anthropic_temperature");
    sandbox.write("main.rs", "fn main() {}\n");
    let said = "`temperature` is deprecated for this model.";
    let refused = invalid_request(said);
    let read = tool_use(0, "toolu_1", "read_file", json!({"file_path": "main.rs"}));
    let (out, requests) = check(&sandbox, &[], vec![refused, calls(&read), text("read")]);
    assert_eq!((out.code, out.stdout.trim()), (0, "read"), "{out:?}");
    assert_eq!(requests.len(), 3, "{out:?}");
    assert!(requests[0].body.get("temperature").is_some());
    for later in &requests[1..] {
        assert!(later.body.get("temperature").is_none(), "{}", later.body);
    }
}

/// A stream cut before `message_stop` runs no call: the whole request is sent again.
#[test]
fn a_cut_stream_is_retried_and_the_call_runs_once() {
    let sandbox = Sandbox::new("anthropic_cut");
    sandbox.write("src/main.rs", "fn main() {}\n");
    let whole = stream("anthropic-tool-call.sse");
    let cut = whole[..whole.find("mit").unwrap()].to_string();
    let script = vec![Reply::SseThenDrop(cut), Reply::Sse(whole), text("read it")];
    let (out, requests) = check(&sandbox, &[], script);
    assert_eq!((out.code, out.stdout.trim()), (0, "read it"), "{out:?}");
    assert_eq!(requests.len(), 3, "{out:?}");
    assert_eq!(requests[0].body, requests[1].body);
    let results = blocks(&requests[2].body["messages"][2]);
    assert_eq!(results.len(), 1, "the call ran once: {results:#?}");
}

/// `stop_reason: max_tokens` is the answer cut off at the output limit, as `length` is.
#[test]
fn max_tokens_is_a_cut_off_answer() {
    let sandbox = Sandbox::new("anthropic_max_tokens");
    let (out, _) = check(
        &sandbox,
        &[],
        vec![Reply::Sse(stream("anthropic-max-tokens.sse"))],
    );
    assert_eq!(out.code, 6, "{out:?}");
    assert!(out.stdout.contains("The answer begins and then"), "{out:?}");
}

#[test]
fn ctrl_c_mid_stream_exits_130() {
    let sandbox = Sandbox::new("anthropic_ctrl_c");
    let whole = stream("anthropic-text.sse");
    let head = whole[..whole.find("content_block_stop").unwrap()].to_string();
    let server = Server::start(vec![Reply::SseThenStall {
        body: head,
        ms: 30_000,
    }]);
    let env = env(&server);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let child = spawn_with(&["-p", "hello"], &env, &sandbox);
    let arrived = server.wait_for_requests(1, Duration::from_secs(20));
    // The first text has reached the client before the signal.
    std::thread::sleep(Duration::from_millis(300));
    let pid = child.id() as libc::pid_t;
    // SAFETY: `pid` is our own child, still unreaped (we have not waited on it).
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = finish(child);
    assert!(arrived, "no request arrived; {out:?}");
    assert_eq!(out.code, 130, "{out:?}");
    assert!(out.stdout.contains("Hello! How can I help?"), "{out:?}");
}

/// A session saved in chat completions (a call and its result) goes on with `--provider
/// anthropic`: the same history, mapped; and back again, with the thinking left out.
#[test]
fn a_session_resumes_in_the_other_dialect() {
    let sandbox = Sandbox::new("anthropic_resume");
    sandbox.write("a.txt", "alpha\n");
    let read = json!({"file_path": "a.txt"});
    let chat = Server::start(vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "read_file", read)])),
        Reply::Sse(sse::text("it says alpha")),
    ]);
    let url = chat.url();
    let chat_env = [
        ("OPENAI_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let first = run_with(&["-p", "read a.txt"], &chat_env, &sandbox);
    assert_eq!(first.code, 0, "{first:?}");
    let id = session_id(&sandbox);
    let thinking = stream("anthropic-thinking.sse")
        .replace(r#""name":"bash""#, r#""name":"read_file""#)
        .replace(
            r#"{\"command\": \"cargo test\"}"#,
            r#"{\"file_path\": \"a.txt\"}"#,
        );
    let (out, requests) = check(
        &sandbox,
        &["-r", &id],
        vec![Reply::Sse(thinking), text("still alpha")],
    );
    assert_eq!((out.code, out.stdout.trim()), (0, "still alpha"), "{out:?}");
    // The session's model was a chat-completions one: Anthropic's default is asked instead.
    assert_eq!(requests[0].body["model"], "claude-sonnet-5-5");
    let messages = requests[0].body["messages"].as_array().unwrap().clone();
    let call = &blocks(&messages[1])[0];
    assert_eq!(
        (&call["id"], &call["input"]),
        (&json!("call_1"), &json!({"file_path": "a.txt"}))
    );
    assert_eq!(blocks(&messages[2])[0]["tool_use_id"], "call_1");
    assert_eq!(blocks(&messages[3])[0]["text"], "it says alpha");
    let back = Server::start(vec![Reply::Sse(sse::text("alpha, again"))]);
    let url = back.url();
    let chat_env = [
        ("OPENAI_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let last = run_with(&["-r", &id, "-p", "and now?"], &chat_env, &sandbox);
    assert_eq!(
        (last.code, last.stdout.trim()),
        (0, "alpha, again"),
        "{last:?}"
    );
    let request = &back.requests()[0];
    request.assert_valid_history();
    assert!(
        !request.body.to_string().contains("signature"),
        "{}",
        request.body
    );
}

fn session_id(sandbox: &Sandbox) -> String {
    let sessions = sandbox.home.join(".corecoder/sessions");
    let entry = (std::fs::read_dir(&sessions).expect("sessions directory"))
        .filter_map(Result::ok)
        .next()
        .expect("a session file");
    entry
        .path()
        .file_stem()
        .expect("stem")
        .to_string_lossy()
        .into_owned()
}

/// A project's `.env` may not send the user's Anthropic key to a host of its choosing: it is
/// ignored, with a note, and the user's own server gets the request.
#[test]
fn an_untrusted_env_file_cannot_send_the_key_elsewhere() {
    let sandbox = Sandbox::new("anthropic_env_host");
    let theirs = Server::start(vec![text("got your key")]);
    let base = theirs.url();
    sandbox.write(
        ".env",
        &format!("ANTHROPIC_BASE_URL={base}\nCORECODER_PROVIDER=anthropic\n"),
    );
    let env = [
        ("ANTHROPIC_API_KEY", "sk-test"),
        ("CORECODER_PROVIDER", "anthropic"),
    ];
    let mine = Server::start(vec![text("ok")]);
    let url = mine.url();
    let out = run_with(&["-p", "hi", "--base-url", &url], &env, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let note = "ANTHROPIC_BASE_URL ignored, because this project is not trusted";
    assert!(out.stderr.contains(note), "{out:?}");
    assert_eq!(mine.requests()[0].header("x-api-key"), Some("sk-test"));
    assert!(theirs.requests().is_empty(), "the key was sent: {out:?}");
}

#[test]
fn litellm_is_told_what_there_is() {
    let sandbox = Sandbox::new("anthropic_names");
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("CORECODER_PROVIDER", "litellm"),
    ];
    let out = run_with(&["-p", "hi"], &env, &sandbox);
    assert_eq!(out.code, 2, "{out:?}");
    for name in ["openai", "anthropic", "responses"] {
        assert!(out.stderr.contains(name), "{out:?}");
    }
}

/// The banner and `/model` name the dialect; a turn in the REPL speaks it.
#[test]
fn the_banner_and_model_command_name_the_dialect() {
    let sandbox = Sandbox::new("anthropic_banner");
    let server = Server::start(vec![text("hello from claude")]);
    let url = server.url();
    let args = ["--provider", "anthropic", "--base-url", url.as_str()];
    let mut repl = crate::driver::Repl::start_with(&sandbox, &args, server);
    let screen = repl.pty.screen();
    let banner = screen.lines().next().unwrap_or_default();
    let named = "model claude-sonnet-5-5 · anthropic (Messages API)";
    assert!(banner.contains(named), "banner: {banner:?}\n{screen}");
    repl.turn(
        "/model",
        "Model: claude-sonnet-5-5 · anthropic (Messages API)",
    );
    repl.turn("hi", "hello from claude");
    let requests = repl.requests(1);
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some("sk-test"));
}

/// An endless thinking block: stopped at the reply's 64 MiB bound, at once (no retry).
#[test]
fn endless_thinking_is_cut_off() {
    let sandbox = Sandbox::new("anthropic_endless");
    let whole = stream("anthropic-thinking.sse");
    let head = whole[..whole.find("event: content_block_delta").unwrap()].to_string();
    let thought = json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "more ".repeat(8000)}});
    let piece = format!("event: content_block_delta\ndata: {thought}\n\n").repeat(8);
    let flood = Reply::Flood {
        head,
        piece,
        bytes: 2 << 30,
    };
    let (out, requests) = check(&sandbox, &[], vec![flood]);
    assert_eq!((out.code, requests.len()), (1, 1), "{out:?}");
    assert!(
        out.stderr.contains("the whole of the reply is too large"),
        "{out:?}"
    );
}

/// Tokens written to the cache are billed at 1.25× input: (300 × 2 + 1,500 × 2.5 + 64 × 10 +
/// 25 × 2 + 15 × 10) / 1e6 dollars, where input rates alone would make $0.0044.
#[test]
fn cache_writes_cost_a_quarter_more() {
    let sandbox = Sandbox::new("anthropic_cache_writes");
    sandbox.write("src/main.rs", "fn main() {}\n");
    let script = vec![
        Reply::Sse(stream("anthropic-two-calls.sse")),
        text("two found"),
    ];
    let (out, requests) = check(&sandbox, &[], script);
    assert_eq!((out.code, requests.len()), (0, 2), "{out:?}");
    assert!(
        out.stderr.contains("1,825 prompt + 79 completion"),
        "{out:?}"
    );
    assert!(out.stderr.contains("$0.0052"), "{out:?}");
}

/// A `bash` call that exits 3 goes back marked `is_error: true`, as Claude Code marks it; one
/// that exits 0 does not.
#[test]
fn a_command_that_exits_non_zero_goes_back_as_an_error() {
    let sandbox = Sandbox::new("anthropic_exit_3");
    let two = tool_use(0, "toolu_ok", "bash", json!({"command": "echo fine"}))
        + &tool_use(
            1,
            "toolu_bad",
            "bash",
            json!({"command": "echo no; exit 3"}),
        );
    let (out, requests) = check(&sandbox, &["--yes"], vec![calls(&two), text("noted")]);
    assert_eq!(out.code, 0, "{out:?}");
    let results = blocks(&requests[1].body["messages"][2]);
    assert_eq!(results.len(), 2, "{results:#?}");
    assert!(results[0].get("is_error").is_none(), "{results:#?}");
    let failed = &results[1];
    assert_eq!(failed["tool_use_id"], "toolu_bad");
    assert!(
        failed["content"]
            .as_str()
            .unwrap()
            .contains("[exit code: 3]"),
        "{failed:#}"
    );
    assert_eq!(failed["is_error"], true, "{results:#?}");
}

/// Anthropic's stream numbers no event, but a block stopped without its start, or a call whose
/// input lost a piece (not JSON at its block's stop), lost an event: the reply is retried and
/// never acted on (the retry's call runs once), and the user is told why.
#[test]
fn a_stream_that_lost_an_event_is_retried_never_used() {
    for lossy in [
        "anthropic-handmade-stop-without-start.sse",
        "anthropic-handmade-lost-json-delta.sse",
    ] {
        let sandbox = Sandbox::new("anthropic_lost");
        sandbox.write("src/main.rs", "fn main() {}\n");
        let whole = stream("anthropic-tool-call.sse");
        let script = vec![
            Reply::Sse(stream(lossy)),
            Reply::Sse(whole),
            text("read it"),
        ];
        let (out, requests) = check(&sandbox, &[], script);
        assert_eq!(
            (out.code, out.stdout.trim()),
            (0, "read it"),
            "{lossy}: {out:?}"
        );
        assert_eq!(requests.len(), 3, "{lossy}: {out:?}");
        assert_eq!(
            requests[0].body, requests[1].body,
            "{lossy}: the same request again"
        );
        let results = blocks(&requests[2].body["messages"][2]);
        assert_eq!(results.len(), 1, "{lossy}: the call ran once: {results:#?}");
        assert!(out.stderr.contains("lost a piece"), "{lossy}: {out:?}");
    }
}
