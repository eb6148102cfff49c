//! Requests a provider's prompt cache can reuse: each request starts with the bytes of the one
//! before it, whatever the session changes, and the model is told the change in a note at the
//! end instead (`core/notes.rs`). Judged on the raw bodies the loopback server read.

use crate::driver::Repl;
use crate::run::{Sandbox, run};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};

fn answer(text: &str) -> Reply {
    Reply::Sse(sse::text(text))
}

fn call(id: &str, name: &str, args: Value) -> Reply {
    Reply::Sse(sse::tool_calls(&[(id, name, args)]))
}

/// The bytes of `request`'s body up to the end of its last message, as they were sent: up to
/// the bracket that closes its `"messages"` array (strings and their escapes skipped).
fn through_last_message(request: &Recorded) -> &[u8] {
    let raw = &request.raw;
    let key = b"\"messages\":[";
    let start = (raw.windows(key.len()).position(|w| w == key)).expect("a messages array");
    let (mut depth, mut in_string, mut escaped) = (0, false, false);
    for (at, byte) in raw.iter().enumerate().skip(start + key.len() - 1) {
        match (in_string, escaped, byte) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (true, false, _) => {}
            (false, _, b'"') => in_string = true,
            (false, _, b'[' | b'{') => depth += 1,
            (false, _, b']' | b'}') if depth == 1 => return &raw[..at],
            (false, _, b']' | b'}') => depth -= 1,
            _ => {}
        }
    }
    panic!("the messages array never closes")
}

/// Every request repeats the one before it byte for byte, through its last message.
fn assert_each_starts_with_the_last(requests: &[Recorded]) {
    for (n, pair) in requests.windows(2).enumerate() {
        let earlier = through_last_message(&pair[0]);
        assert!(
            pair[1].raw.starts_with(earlier),
            "request {} changed a byte of request {n}:\n{}\n---\n{}",
            n + 1,
            String::from_utf8_lossy(earlier),
            String::from_utf8_lossy(&pair[1].raw)
        );
    }
}

fn content(message: &Value) -> &str {
    message["content"].as_str().unwrap_or_default()
}

fn last_message(request: &Recorded) -> String {
    content(request.messages().last().expect("a message")).to_string()
}

#[test]
fn a_cd_a_todo_update_and_plan_mode_change_no_byte_already_sent() {
    let sandbox = Sandbox::new("prompt_cache_notes");
    std::fs::create_dir_all(sandbox.path("sub")).expect("a directory");
    let todos = json!({"tasks": [{"content": "write the tests", "status": "in_progress"}]});
    let script = vec![
        call("call_cd", "bash", json!({"command": "cd sub"})),
        call("call_todo", "todo_write", todos),
        answer("moved and planned"),
        answer("here is the plan"),
        answer("done"),
    ];
    let mut repl = Repl::start(&sandbox, &["--yes"], script);
    repl.turn("go to sub", "moved and planned");
    repl.turn("/plan", "Plan mode on");
    repl.turn("plan the rest", "here is the plan");
    repl.turn("/plan", "Plan mode off");
    repl.turn("carry on", "done");
    let requests = repl.requests(5);

    assert_each_starts_with_the_last(&requests);
    let system = &requests[0].messages()[0];
    assert!(requests.iter().all(|r| &r.messages()[0] == system));
    // Nothing changed before the first request: the task goes as typed.
    assert_eq!(last_message(&requests[0]), "go to sub");
    // Each change is told once, where it happened.
    let moved = last_message(&requests[1]);
    let sub = sandbox.path("sub").canonicalize().expect("sub");
    let told = format!("[session state]\nWorking directory: {}", sub.display());
    assert!(moved.ends_with(&told), "{moved}");
    let listed = last_message(&requests[2]);
    assert!(
        listed.contains("Current todo list:\n[>] write the tests"),
        "{listed}"
    );
    assert!(!listed.contains("Working directory"), "{listed}");
    assert!(last_message(&requests[3]).contains("PLAN MODE IS ON"));
    assert!(last_message(&requests[4]).contains("Plan mode is off"));
}

#[test]
fn a_resumed_session_starts_with_what_the_saved_one_sent() {
    let sandbox = Sandbox::new("prompt_cache_resume");
    sandbox.write("notes.txt", "remember the milk\n");
    let read = json!({"file_path": "notes.txt"});
    let first = Server::start(vec![call("call_1", "read_file", read), answer("all read")]);
    let out = run(&["-p", "read notes"], &first, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let second = Server::start(vec![answer("ok")]);
    let out = run(&["-c", "-p", "and now?"], &second, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");

    let saved = first.requests();
    let resumed = second.requests();
    assert_each_starts_with_the_last(&[saved[1].clone(), resumed[0].clone()]);
    assert_eq!(last_message(&resumed[0]), "and now?");
}

/// 30 rounds of 6 KB reads (30 files) in a 20k-token window, each read a tenth of it:
/// compaction goes well below its line, so a request that rewrote the history is never
/// followed by another one, and no call is ever separated from its result.
#[test]
fn compaction_breaks_the_prefix_a_few_times_not_every_round() {
    let sandbox = Sandbox::new("prompt_cache_compaction");
    let line = "let value = compute(input); // a line of code the model read\n";
    let reads: Vec<Reply> = (0..30)
        .map(|n| {
            // A file of its own each time: the loop guard stops the same call repeated.
            sandbox.write(&format!("big_{n}.rs"), &line.repeat(100));
            let args = json!({"file_path": format!("big_{n}.rs")}).to_string();
            // No usage: the provider's count would anchor the estimate at the script's 100.
            let id = format!("call_{n}");
            let deltas = sse::call_deltas(&[(id.as_str(), "read_file", args.as_str())]);
            Reply::Sse(sse::role() + &deltas + &sse::finish("tool_calls") + &sse::done())
        })
        .chain([answer("read it all")])
        .collect();
    let server = Server::answering_summaries(reads, "the model read big.rs thirty times");
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
        ("CORECODER_MAX_CONTEXT", "20000"),
    ];
    let args = [
        "-p",
        "read big.rs again and again",
        "--output-format",
        "json",
    ];
    let out = crate::run::run_with(&args, &env, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let result: Value = serde_json::from_str(&out.stdout).expect("one JSON object");

    let rounds: Vec<Recorded> = (server.requests().into_iter())
        .filter(|r| r.body.get("tools").is_some())
        .collect();
    assert_eq!(rounds.len(), 31);
    rounds.iter().for_each(Recorded::assert_valid_history);
    let broke: Vec<bool> = (rounds.windows(2))
        .map(|pair| !pair[1].raw.starts_with(through_last_message(&pair[0])))
        .collect();
    let breaks = broke.iter().filter(|b| **b).count();
    // Each compaction lands well below the line, so the next request never compacts again.
    assert!(breaks >= 2, "{breaks} breaks");
    assert!(!broke.windows(2).any(|two| two[0] && two[1]), "{broke:?}");
    let rewrites = result["history_rewrites"]
        .as_u64()
        .expect("history_rewrites");
    assert_eq!(breaks as u64, rewrites, "{result}");
}

/// An `AGENTS.md` edit mid-session is told in a note; the system prompt keeps the instructions
/// as they were when the session started.
#[test]
fn an_agents_md_edit_is_told_in_a_note_not_in_the_system_prompt() {
    let sandbox = Sandbox::new("prompt_cache_agents_md");
    sandbox.write("AGENTS.md", "Use spaces.\n");
    let edit = json!({"command": "echo 'Use tabs.' > AGENTS.md"});
    let server = Server::start(vec![call("call_edit", "bash", edit), answer("edited")]);
    let out = run(&["-p", "change the rule", "--yes"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");

    let requests = server.requests();
    assert_each_starts_with_the_last(&requests);
    let system = content(&requests[1].messages()[0]).to_string();
    assert!(
        system.contains("Use spaces.") && !system.contains("Use tabs."),
        "{system}"
    );
    let told = last_message(&requests[1]);
    assert!(
        told.contains("[session state]\nThe project instructions changed"),
        "{told}"
    );
    assert!(told.contains("Use tabs."), "{told}");
}

/// The body goes out from its pieces (`net::Pieces`: each message's JSON shared, not copied
/// into one string): a history of megabytes arrives whole under a `Content-Length` that is its
/// size, never chunked, and a retry after a 500 sends the same bytes again from the start.
#[test]
fn a_body_of_megabytes_is_sent_whole_under_its_length_and_again_on_a_retry() {
    let sandbox = Sandbox::new("prompt_cache_pieces");
    let line = format!("{}\n", "y".repeat(79));
    for n in 0..3 {
        sandbox.write(&format!("big{n}.txt"), &line.repeat(1_900));
    }
    let read = |n: usize| {
        call(
            &format!("call_{n}"),
            "read_file",
            json!({"file_path": format!("big{n}.txt")}),
        )
    };
    let script = vec![
        read(0),
        read(1),
        read(2),
        Reply::error(500, "try again"),
        answer("read"),
    ];
    let server = Server::start(script);
    let out = run(&["-p", "read the big files"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    for request in &requests {
        assert_eq!(
            request.header("content-length"),
            Some(request.raw.len().to_string().as_str())
        );
        assert_eq!(request.header("transfer-encoding"), None);
        request.assert_valid_history();
    }
    // The last three results, about 150 KB each, are all in the body, and the retry is the
    // refused request again, byte for byte.
    assert!(requests[3].raw.len() > 450_000, "{}", requests[3].raw.len());
    let results = requests[3]
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    assert_eq!(results, 3);
    assert_eq!(requests[4].raw, requests[3].raw);
    assert_each_starts_with_the_last(&requests[..4]);
}
