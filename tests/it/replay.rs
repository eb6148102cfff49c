//! Recorded provider streams from `fixtures/sse/` replayed through the whole binary.
//!
//! `src/core/sse.rs` unit-tests the parser on these files; here the same bytes go over a socket to
//! the real binary, to show the parse reaches stdout and the history intact. The files are read
//! at run time (they come from the SSE work); only their text outcomes are asserted here.

use crate::run::{Output, Sandbox, run};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use std::path::Path;

pub fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/sse")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (the SSE fixtures must be merged)", path.display()))
}

fn check(sandbox: &Sandbox, replies: &[&str]) -> (Output, Vec<Recorded>) {
    let mut script: Vec<Reply> = replies.iter().map(|f| Reply::Sse(fixture(f))).collect();
    script.push(Reply::Sse(sse::text(
        "extra reply, not expected to be used",
    )));
    let server = Server::start(script);
    let output = run(&["-p", "read it"], &server, sandbox);
    let requests = server.requests();
    requests.iter().for_each(Recorded::assert_valid_history);
    (output, requests)
}

#[test]
fn captured_tool_call_then_captured_answer() {
    let sandbox = Sandbox::new("replay_captured");
    sandbox.write("mock-file_path", "hello from the mock file\n");
    let replies = [
        "openai-compatible-tool-call.sse",
        "openai-compatible-text-after-tool.sse",
    ];
    let (out, requests) = check(&sandbox, &replies);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout.trim_end(),
        "Hello! gpt-4o received: read the file hello"
    );
    assert_eq!(requests.len(), 2, "{out:?}");
    let call = &requests[1].messages()[2]["tool_calls"][0];
    assert_eq!(call["id"], "call_c404bb347ab44ccfac02e035");
    assert_eq!(
        call["function"]["arguments"],
        r#"{"file_path": "mock-file_path"}"#
    );
    let results = requests[1].tool_results();
    assert_eq!(results[0].0, "call_c404bb347ab44ccfac02e035");
    assert!(
        results[0].1.contains("hello from the mock file"),
        "{results:?}"
    );
}

#[test]
fn unusual_framings_still_give_the_text() {
    let cases = [
        ("crlf-nospace-keepalive.sse", "Hi there"),
        ("no-blank-lines.sse", "one two"),
    ];
    for (name, text) in cases {
        let sandbox = Sandbox::new(&format!("replay_{name}"));
        let (out, requests) = check(&sandbox, &[name]);
        assert_eq!(out.code, 0, "{name}: {out:?}");
        assert_eq!(out.stdout.trim_end(), text, "{name}");
        assert_eq!(requests.len(), 1, "{name}");
    }
}

#[test]
fn deepseek_reasoning_stays_on_its_tool_call_turn() {
    let sandbox = Sandbox::new("replay_deepseek");
    let replies = [
        "deepseek-reasoning-then-tool-call.sse",
        "openai-compatible-text-after-tool.sse",
    ];
    let (out, requests) = check(&sandbox, &replies);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(requests.len(), 2, "{out:?}");
    let assistant = &requests[1].messages()[2];
    assert_eq!(assistant["reasoning_content"], "I should read the file.");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_ds");
    assert_eq!(requests[1].tool_results()[0].0, "call_ds");
}
