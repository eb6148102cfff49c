//! A provider whose replies are well-formed but hostile in size or shape: many new tool calls
//! each with a 60 KB name and id (once not counted against the 64 MiB reply cap; chat
//! completions and Anthropic), one call with such a name, 80,000 small calls in one reply
//! (once 30 s of quadratic work; chat completions and Responses), a tool not offered, and a
//! sub-agent that calls `agent`, a tool it is not offered (once about 1,090 levels deep,
//! until the stack overflowed). Each run must end with a clear message or a refusal the model
//! reads, in bounded memory and time (generous margins; the figures are printed).

use crate::run::{Output, Sandbox, finish, finish_measured, spawn_with};
use crate::server::{Reply, Server};
use crate::sse;
use serde_json::json;
use std::time::{Duration, Instant};

/// Run `-p go --yes` against `server`; also the run's peak memory in KiB (`VmHWM`).
fn run_measured(name: &str, server: &Server) -> (Output, u64) {
    let sandbox = Sandbox::new(&format!("hostile_wire_{name}"));
    sandbox.write("a.txt", "alpha\n");
    let url = server.url();
    let env = [("CORECODER_API_KEY", "sk-test"), ("OPENAI_BASE_URL", &url)];
    let child = spawn_with(&["-p", "go", "--yes"], &env, &sandbox);
    let (output, peak) = finish_measured(child);
    assert!(!output.stderr.contains("panicked"), "{output:?}");
    (output, peak)
}

/// 640 new calls, each with a 60 KB name and a 60 KB id and no arguments: 75 MB of reply in
/// which the arguments are empty. Every byte counts: the cap stops it, at once, unretried.
#[test]
fn many_calls_with_huge_names_and_ids_meet_the_reply_cap() {
    let big = "n".repeat(60_000);
    let mut body = sse::role();
    for n in 0..640 {
        body += &sse::call_start(n, &format!("id{n}{big}"), &format!("t{n}{big}"));
    }
    body += &(sse::finish("tool_calls") + &sse::done());
    let server = Server::start(vec![Reply::Sse(body), Reply::Sse(sse::text("went on"))]);
    let started = Instant::now();
    let (out, peak) = run_measured("huge_names", &server);
    let took = started.elapsed();
    eprintln!(
        "640 calls of 120 KB names and ids: {took:?}, peak {} MiB",
        peak >> 10
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("the whole of the reply is too large"),
        "{}",
        out.stderr
    );
    assert_eq!(server.requests().len(), 1, "not retried, not run");
    assert!(peak < 250 << 10, "peak {} MiB (343 MiB before)", peak >> 10);
}

/// One call whose name is 60 KB (or whose id is): no tool is named so, and no provider sends
/// such a thing. The reply is refused with a message saying why, not run, not retried.
#[test]
fn a_call_with_a_huge_name_or_id_is_refused() {
    let big = "x".repeat(60_000);
    let args = json!({"file_path": "a.txt"});
    let name = format!("read_file{big}");
    let id = format!("c{big}");
    for (id, name) in [("c1", name.as_str()), (id.as_str(), "read_file")] {
        let reply = sse::tool_calls(&[(id, name, args.clone())]);
        let server = Server::start(vec![Reply::Sse(reply), Reply::Sse(sse::text("went on"))]);
        let (out, _) = run_measured("huge_name", &server);
        assert_eq!(out.code, 1, "{}", &out.stderr[..out.stderr.len().min(2000)]);
        assert!(
            out.stderr
                .contains("bytes long; a name or id is at most 256"),
            "{}",
            &out.stderr[..out.stderr.len().min(2000)]
        );
        assert_eq!(server.requests().len(), 1, "not retried, not run");
    }
}

/// 80,000 small calls in one reply: put together in linear time (over 60 s before, in a debug
/// build; 30 s in release), and refused
/// whole with a clear message, for no reply of a real model holds that many.
#[test]
fn eighty_thousand_calls_in_one_reply_are_refused_quickly() {
    // Each reads another line (a call whose arguments are whole may start while the reply
    // streams: read-only calls are not held back by the loop guard for being alike).
    let args = |n: usize| json!({"file_path": "a.txt", "limit": n + 1}).to_string();
    // Numbered by index, and (as some servers do) by id alone: each is looked up, not scanned.
    let by_index = |n: usize| sse::call_start(n, &format!("c{n}"), "read_file");
    let by_id = |n: usize| {
        let call = json!({"id": format!("c{n}"), "function": {"name": "read_file"}});
        sse::chunk(json!({"tool_calls": [call]}))
    };
    let by_index_args = |n: usize| sse::call_args(n, &args(n));
    let by_id_args = |n: usize| {
        let call = json!({"id": format!("c{n}"), "function": {"arguments": args(n)}});
        sse::chunk(json!({"tool_calls": [call]}))
    };
    type Piece<'a> = &'a dyn Fn(usize) -> String;
    let shapes: [(&str, Piece, Piece); 2] = [
        ("index", &by_index, &by_index_args),
        ("id", &by_id, &by_id_args),
    ];
    for (shape, start, more) in shapes {
        let mut body = sse::role();
        for n in 0..80_000 {
            body += &(start(n) + &more(n));
        }
        body += &(sse::finish("tool_calls") + &sse::done());
        let server = Server::start(vec![Reply::Sse(body), Reply::Sse(sse::text("went on"))]);
        let started = Instant::now();
        let (out, peak) = run_measured("many_calls", &server);
        let took = started.elapsed();
        eprintln!("80,000 calls by {shape}: {took:?}, peak {} MiB", peak >> 10);
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert!(
            out.stderr.contains("the reply holds 80000 tool calls"),
            "{}",
            out.stderr
        );
        // Linear takes 3-6 s in a debug build, quadratic over 5 minutes: the margin is for a
        // loaded machine (25 s was seen with ten builds beside it).
        assert!(took < Duration::from_secs(55), "by {shape}: {took:?}");
        // Early start stops at the cap too (80,000 reads started early peaked at 143 MiB).
        assert!(peak < 100 << 10, "by {shape}: peak {} MiB", peak >> 10);
    }
}

/// The calls a real model may send in one reply still all run (the cap is far above them).
#[test]
fn a_reply_with_many_calls_below_the_cap_runs_them_all() {
    // Each reads another line, so the loop guard (five equal calls) has nothing to stop.
    let ids: Vec<String> = (0..200).map(|n| format!("c{n}")).collect();
    let calls: Vec<(&str, &str, serde_json::Value)> = (ids.iter().enumerate())
        .map(|(n, id)| {
            (
                id.as_str(),
                "read_file",
                json!({"file_path": "a.txt", "limit": n + 1}),
            )
        })
        .collect();
    let script = vec![
        Reply::Sse(sse::tool_calls(&calls)),
        Reply::Sse(sse::text("read them")),
    ];
    let server = Server::start(script);
    let (out, _) = run_measured("two_hundred_calls", &server);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let results = server.requests()[1].tool_results();
    assert_eq!(results.len(), 200);
    assert!(results.iter().all(|(_, text)| text.contains("alpha")));
}

/// The names of the tools a request offered.
fn offered(request: &crate::server::Recorded) -> Vec<String> {
    let tools = request.body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let name = |tool: &serde_json::Value| tool["function"]["name"].as_str().map(str::to_string);
    tools.iter().filter_map(name).collect()
}

/// A sub-agent is not offered `agent`; a model that calls it anyway, again and again, is told
/// it is not available, and nothing nests: the main agent's sub-agents are the only level.
/// (Before, each call ran a sub-agent inside the sub-agent: about 1,090 levels deep the
/// stack overflowed.)
#[test]
fn a_sub_agent_that_calls_agent_is_refused_and_nothing_nests() {
    let call = |n: usize| {
        let task = json!({"task": format!("level {n}")});
        Reply::Sse(sse::tool_calls(&[(&format!("a{n}"), "agent", task)]))
    };
    let mut script: Vec<Reply> = (0..6).map(call).collect();
    script.push(Reply::Sse(sse::text("sub done")));
    script.push(Reply::Sse(sse::text("main done")));
    let server = Server::start(script);
    let (out, _) = run_measured("nested_agents", &server);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "main done\n", "{out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 8, "{}", out.stderr);
    let subs: Vec<_> = (requests.iter())
        .filter(|r| !offered(r).contains(&"agent".to_string()))
        .collect();
    assert_eq!(subs.len(), 6, "one sub-agent, six rounds");
    for request in &subs[1..] {
        let (_, result) = request.tool_results().pop().expect("a result");
        assert!(
            result.contains("tool 'agent' is not available here"),
            "{result}"
        );
    }
    // The main agent got its one sub-agent's answer.
    assert!(requests[7].last_tool_result().contains("sub done"));
}

/// Every tool, not only `agent`: a name the request did not offer is refused, not run.
#[test]
fn a_tool_that_was_not_offered_is_refused() {
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("c1", "launch_rockets", json!({}))])),
        Reply::Sse(sse::text("ok")),
    ];
    let server = Server::start(script);
    let (out, _) = run_measured("not_offered", &server);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let result = server.requests()[1].last_tool_result();
    assert!(
        result.contains("tool 'launch_rockets' is not available here"),
        "{result}"
    );
}

/// The same 80,000 calls in the Responses dialect, each found by its item id: a lookup, not a
/// scan (once quadratic there too), and the same refusal.
#[test]
fn eighty_thousand_calls_in_one_responses_reply_are_refused_quickly() {
    let event = |kind: &str, mut fields: serde_json::Value| {
        fields["type"] = json!(kind);
        format!("event: {kind}\ndata: {fields}\n\n")
    };
    let mut body = String::new();
    for n in 0..80_000 {
        let item = json!({"type": "function_call", "id": format!("fc_{n}"),
                          "call_id": format!("c{n}"), "name": "read_file", "arguments": ""});
        body += &event("response.output_item.added", json!({"item": item}));
        let delta = json!({"item_id": format!("fc_{n}"), "delta": "{\"file_path\":\"a.txt\"}"});
        body += &event("response.function_call_arguments.delta", delta);
    }
    let usage = json!({"input_tokens": 50, "output_tokens": 5});
    let done = json!({"response": {"status": "completed", "usage": usage}});
    body += &event("response.completed", done);
    let server = Server::start(vec![Reply::Sse(body), Reply::Sse(sse::text("went on"))]);
    let sandbox = Sandbox::new("hostile_wire_many_responses_calls");
    let url = server.url();
    let env = [("CORECODER_API_KEY", "sk-test"), ("OPENAI_BASE_URL", &url)];
    let started = Instant::now();
    let args = ["--provider", "responses", "-p", "go", "--yes"];
    let out = finish(spawn_with(&args, &env, &sandbox));
    let took = started.elapsed();
    eprintln!("80,000 Responses calls: {took:?}");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("the reply holds 80000 tool calls"),
        "{}",
        out.stderr
    );
    // As above: linear is seconds, quadratic minutes; the margin is for a loaded machine.
    assert!(took < Duration::from_secs(55), "{took:?}");
}

/// The same flood of 60 KB names and ids in Anthropic's dialect, whose parser counted 64 bytes
/// per new block: every byte of the stream counts there too.
#[test]
fn many_anthropic_calls_with_huge_names_and_ids_meet_the_reply_cap() {
    let big = "n".repeat(60_000);
    let event = |kind: &str, data: serde_json::Value| format!("event: {kind}\ndata: {data}\n\n");
    let start = json!({"type": "message_start", "message": {"id": "m", "type": "message",
        "role": "assistant", "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}});
    let mut body = event("message_start", start);
    for n in 0..640 {
        let block = json!({"type": "tool_use", "id": format!("id{n}{big}"),
                           "name": format!("t{n}{big}"), "input": {}});
        let data = json!({"type": "content_block_start", "index": n, "content_block": block});
        body += &event("content_block_start", data);
    }
    body += &event("message_stop", json!({"type": "message_stop"}));
    let server = Server::start(vec![Reply::Sse(body)]);
    let sandbox = Sandbox::new("hostile_wire_anthropic_names");
    let base = server.url().trim_end_matches("/v1").to_string();
    let env = [
        ("ANTHROPIC_API_KEY", "sk-test"),
        ("ANTHROPIC_BASE_URL", base.as_str()),
        ("CORECODER_PROVIDER", "anthropic"),
    ];
    let out = finish(spawn_with(&["-p", "go", "--yes"], &env, &sandbox));
    assert_eq!(out.code, 1, "{}", &out.stderr[..out.stderr.len().min(3000)]);
    assert!(
        out.stderr.contains("the whole of the reply is too large"),
        "{}",
        &out.stderr[..out.stderr.len().min(3000)]
    );
    assert_eq!(server.requests().len(), 1, "not retried");
}
