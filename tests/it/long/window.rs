//! Keeping the history inside the context window: a provider's "context too long" answer is
//! met by compacting and sending once more, and a long run never outgrows a small window nor
//! splits a tool call from its result.

use super::{answer, check, only_session_id, read_call};
use crate::run::{Sandbox, run_with};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::json;
use std::time::{Duration, Instant};

fn messages_chars(request: &Recorded) -> usize {
    request.body["messages"].to_string().len()
}

#[test]
fn context_overflow_compacts_and_resends_once() {
    let sandbox = Sandbox::new("long_overflow");
    sandbox.write("big.txt", &"a line of filler text\n".repeat(1500));
    let script = vec![read_call("call_1", "big.txt"), answer("read it")];
    let (first, _) = check(&sandbox, &["-p", "read big"], script);
    assert_eq!(first.code, 0, "{first:?}");
    let id = only_session_id(&sandbox);
    let overflow = "This model's maximum context length is 128000 tokens. \
                    However, your messages resulted in 130000 tokens.";
    // By the provider's count the prompt is past 90 % of the window: the history collapses
    // into a summary (a request of its own, without tools) before it is sent again.
    let script = vec![
        Reply::error(400, overflow),
        answer("summary: read big.txt"),
        answer("fits now"),
    ];
    let (out, requests) = check(&sandbox, &["-r", &id, "-p", "go on"], script);
    let requests: Vec<Recorded> = (requests.into_iter())
        .filter(|r| r.body.get("tools").is_some())
        .collect();
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.trim_end(), "fits now", "{out:?}");
    assert_eq!(requests.len(), 2, "{out:?}");
    assert_ne!(
        requests[1].messages(),
        requests[0].messages(),
        "resent as is"
    );
    assert!(messages_chars(&requests[1]) <= messages_chars(&requests[0]));
}

/// Every tool message answers a call made earlier in the same request, and every call is
/// answered.
fn assert_tool_pairs(number: usize, request: &Recorded) {
    let messages = request.messages();
    let mut open: Vec<String> = Vec::new();
    for message in &messages {
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            open.push(call["id"].as_str().unwrap_or_default().to_string());
        }
        if message["role"] == "tool" {
            let id = message["tool_call_id"].as_str().unwrap_or_default();
            let answered = open.iter().position(|o| o == id);
            let at = answered.unwrap_or_else(|| panic!("request {number}: {id} unasked"));
            open.remove(at);
        }
    }
    assert!(open.is_empty(), "request {number}: {open:?} unanswered");
}

#[test]
fn two_hundred_big_rounds_stay_inside_a_small_window() {
    const MAX_CONTEXT: usize = 6000;
    const ROUNDS: usize = 200;
    let sandbox = Sandbox::new("long_compaction");
    sandbox.write(
        "big.txt",
        &"0123456789 filler line for the window\n".repeat(800),
    );
    let mut script: Vec<Reply> = (0..ROUNDS)
        // Each call a little different: the loop guard stops identical calls in a row.
        .map(|n| {
            let args = json!({"file_path": "big.txt", "offset": 1 + n % 7});
            Reply::Sse(sse::tool_calls(&[(
                &format!("call_{n}"),
                "read_file",
                args,
            )]))
        })
        .collect();
    script.push(answer("read it all"));
    let server = Server::answering_summaries(script, "Summary: big.txt was read again.");
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
        ("CORECODER_MAX_CONTEXT", "6000"),
    ];
    let args = ["-p", "read it many times", "--yes", "--max-rounds", "250"];
    let started = Instant::now();
    let out = run_with(&args, &env, &sandbox);
    let took = started.elapsed();
    // Summary requests (no tools) carry the old turns on purpose; the turns must fit.
    let requests: Vec<_> = (server.requests().into_iter())
        .filter(|r| r.body.get("tools").is_some())
        .collect();
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.trim_end(), "read it all", "{out:?}");
    assert!(requests.len() > ROUNDS, "{} requests", requests.len());
    for (number, request) in requests.iter().enumerate() {
        let chars = messages_chars(request);
        assert!(
            chars < 3 * MAX_CONTEXT,
            "request {number}: {chars} characters"
        );
        assert_tool_pairs(number, request);
    }
    assert!(took < Duration::from_secs(20), "took {took:?}");
}
