//! Faults injected between the provider and the client, beyond the ones `retry.rs` covers:
//! more overload statuses, streams cut after they finished, garbage and errors inside a 200
//! stream, `data:` lines split at every byte offset, odd tool-call indices, null usage and a
//! 10 MB answer. Every request the server saw must carry a valid history.

use crate::run::{Output, Sandbox, run};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};

/// Run `-p` (plus `extra`) in a sandbox holding `notes.txt` against `script`; every recorded
/// request is checked for a valid history.
fn check(name: &str, extra: &[&str], script: Vec<Reply>) -> (Output, Vec<Recorded>) {
    let sandbox = Sandbox::new(&format!("faults_{name}"));
    sandbox.write("notes.txt", "some notes\n");
    let server = Server::start(script);
    let mut args = vec!["-p", "go"];
    args.extend_from_slice(extra);
    let output = run(&args, &server, &sandbox);
    let requests = server.requests();
    for request in &requests {
        request.assert_valid_history();
    }
    assert!(!output.stderr.contains("panicked"), "{output:?}");
    (output, requests)
}

fn answer(output: &Output) -> &str {
    output.stdout.trim_end_matches('\n')
}

fn ok() -> Reply {
    Reply::Sse(sse::text("ok"))
}

#[test]
fn bad_gateway_and_overloaded_are_retried() {
    for code in [502, 503, 529] {
        let script = vec![Reply::error(code, "overloaded"), ok()];
        let (out, requests) = check(&format!("status_{code}"), &[], script);
        assert_eq!(out.code, 0, "{code}: {out:?}");
        assert_eq!(answer(&out), "ok", "{code}");
        assert_eq!(requests.len(), 2, "{code}");
    }
}

/// The connection breaks after `finish_reason` but before the body's end: the answer had
/// arrived whole, and whether it is kept or re-asked, it is printed exactly once.
#[test]
fn drop_after_finish_reason_gives_one_answer() {
    let body = sse::role() + &sse::content("all here") + &sse::finish("stop");
    let (out, requests) = check(
        "drop_after_finish",
        &[],
        vec![Reply::SseThenDrop(body), Reply::Sse(sse::text("all here"))],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(answer(&out), "all here", "{out:?}");
    assert!(requests.len() <= 2);
}

/// A tool call cut after its finish_reason is not run twice.
#[test]
fn drop_after_tool_call_finish_runs_it_once() {
    let call = sse::call_deltas(&[("call_1", "read_file", r#"{"file_path":"notes.txt"}"#)]);
    let cut = sse::role() + &call + &sse::finish("tool_calls");
    let script = vec![
        Reply::SseThenDrop(cut.clone()),
        Reply::Sse(cut + &sse::done()),
        Reply::Sse(sse::text("done")),
    ];
    let (out, requests) = check("drop_after_call_finish", &[], script);
    assert_eq!(out.code, 0, "{out:?}");
    let last = requests.last().expect("a request");
    assert_eq!(last.tool_results().len(), 1, "{:#?}", last.messages());
}

/// A chunk that is not JSON loses a piece of the reply: the whole request is sent again.
#[test]
fn a_chunk_that_is_not_json_retries_the_reply() {
    let body = sse::role()
        + &sse::content("before ")
        + "data: {this is not json}\n\n"
        + "data: <html>502 Bad Gateway</html>\n\n"
        + &sse::content("after")
        + &sse::finish("stop")
        + &sse::done();
    let (out, requests) = check("not_json", &[], vec![Reply::Sse(body), ok()]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(answer(&out), "ok");
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body);
}

/// `{"error": …}` as an event of a 200 stream is a provider failure: retried, not shown.
#[test]
fn an_error_object_inside_a_200_stream_is_retried() {
    let error = json!({"error": {"message": "upstream overloaded", "type": "server_error"}});
    let body = sse::role() + &sse::content("half") + &format!("data: {error}\n\n");
    let (out, requests) = check("error_in_stream", &[], vec![Reply::Sse(body), ok()]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(answer(&out), "ok");
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body);
    assert!(out.stderr.contains("upstream overloaded"), "{out:?}");
}

/// One reply per offset, each split into two TCP writes at that offset: every byte of a
/// `data:` line (prefix, JSON, escapes, the blank line) is once the last byte of a write.
/// The offsets are shared among a few runs (a long history makes late rounds slow).
#[test]
fn data_lines_split_at_every_byte_offset() {
    let offsets: Vec<usize> = (1..split_reply(100).len()).collect();
    std::thread::scope(|scope| {
        for (n, share) in offsets.chunks(40).enumerate() {
            scope.spawn(move || split_at_each(&format!("split_{n}"), share));
        }
    });
}

/// A tool call to read `f{n}` (a missing file), then the end of the stream.
fn split_reply(n: usize) -> String {
    let args = format!("{{\"file_path\":\"f{n}\"}}");
    let call = json!({"index": 0, "id": format!("call_{n}"), "type": "function",
                      "function": {"name": "read_file", "arguments": args}});
    sse::chunk(json!({"tool_calls": [call]})) + &sse::finish("tool_calls") + &sse::done()
}

fn split_at_each(name: &str, offsets: &[usize]) {
    let split = |&at: &usize| Reply::SseSplitAt {
        body: split_reply(at),
        at,
        pause_ms: 1,
    };
    let mut script: Vec<Reply> = offsets.iter().map(split).collect();
    script.push(Reply::Sse(sse::text("split done")));
    let (out, requests) = check(name, &["--max-rounds", "1000"], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(answer(&out), "split done");
    assert_eq!(
        requests.len(),
        offsets.len() + 1,
        "every split reply is read once"
    );
    let messages = requests.last().expect("last").messages();
    for at in offsets {
        let want = format!("{{\"file_path\":\"f{at}\"}}");
        let found = messages.iter().any(|m| {
            let call = &m["tool_calls"][0];
            call["id"] == format!("call_{at}") && call["function"]["arguments"] == want.as_str()
        });
        assert!(found, "offset {at}: call_{at} not reassembled");
    }
}

/// The same index twice (two calls), a missing index and indices out of order.
#[test]
fn odd_tool_call_indices_still_pair_every_call() {
    let start = |index: Value, id: &str, path: &str| {
        let args = json!({"file_path": path}).to_string();
        let mut call = json!({"id": id, "type": "function",
                              "function": {"name": "read_file", "arguments": args}});
        if !index.is_null() {
            call["index"] = index;
        }
        sse::chunk(json!({"tool_calls": [call]}))
    };
    let streams = [
        start(json!(0), "call_a", "notes.txt") + &start(json!(0), "call_b", "notes.txt"),
        start(Value::Null, "call_a", "notes.txt") + &start(Value::Null, "call_b", "x.txt"),
        start(json!(1), "call_b", "x.txt") + &start(json!(0), "call_a", "notes.txt"),
    ];
    for (n, calls) in streams.into_iter().enumerate() {
        let body = sse::role() + &calls + &sse::finish("tool_calls") + &sse::done();
        let script = vec![Reply::Sse(body), Reply::Sse(sse::text("paired"))];
        let (out, requests) = check(&format!("indices_{n}"), &[], script);
        assert_eq!(out.code, 0, "case {n}: {out:?}");
        assert_eq!(requests.len(), 2, "case {n}: {out:?}");
        let results = requests[1].tool_results();
        assert!(!results.is_empty(), "case {n}: no results");
    }
}

#[test]
fn null_usage_is_tolerated() {
    let null_usage = json!({"id": "c", "object": "chat.completion.chunk", "choices": [],
                            "usage": null});
    let null_fields = json!({"choices": [], "usage": {"prompt_tokens": null,
                             "completion_tokens": null, "total_tokens": null}});
    let body = sse::role()
        + &sse::content("counted")
        + &sse::finish("stop")
        + &format!("data: {null_usage}\n\ndata: {null_fields}\n\n")
        + &sse::done();
    let (out, _) = check(
        "null_usage",
        &["--output-format", "json"],
        vec![Reply::Sse(body)],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let result: Value = serde_json::from_str(out.stdout.trim()).expect("json result");
    assert_eq!(result["result"], "counted");
}

/// Ten megabytes of answer in 10 KB deltas arrive whole and in order.
#[test]
fn ten_megabytes_of_content_arrive_whole() {
    let piece: String = "0123456789abcdef".repeat(640);
    let mut body = sse::role();
    for n in 0..1024 {
        body += &sse::content(&format!("{:06}{}", n, &piece[6..]));
    }
    body += &(sse::finish("stop") + &sse::done());
    let (out, requests) = check("ten_megabytes", &[], vec![Reply::Sse(body)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(requests.len(), 1);
    assert_eq!(answer(&out).len(), 1024 * piece.len());
    assert!(answer(&out).contains("001023"));
}
