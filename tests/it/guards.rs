//! Guards for what a redesign of the core could break unseen (issue 29, "Before moving a
//! line"): each test here was shown failing on a planted bug that the rest of the suite let
//! through. A `cd` in one call of a batch must not move its sibling's directory (run one after
//! another in a sub-agent, in parallel in the main agent); an SSE event assembled from many
//! `data:` lines is bounded at 16 MiB, in memory too; a snip that frees too little goes on to a
//! summary, and one that frees enough does not. The history check every scripted server runs
//! when dropped (`server.rs`) covers the loop dropping a round's results.

use crate::run::{Output, Sandbox, finish, run, run_with, spawn_with};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::time::Duration;

fn bash(id: &str, command: &str) -> (String, String, Value) {
    (id.into(), "bash".into(), json!({ "command": command }))
}

fn calls(calls: &[(String, String, Value)]) -> Reply {
    let calls: Vec<(&str, &str, Value)> = (calls.iter())
        .map(|(id, name, args)| (id.as_str(), name.as_str(), args.clone()))
        .collect();
    Reply::Sse(sse::tool_calls(&calls))
}

/// The result of call `id` in `request`.
fn result_of(request: &Recorded, id: &str) -> String {
    let results = request.tool_results();
    let found = results.iter().find(|(call, _)| call == id);
    found
        .map(|(_, text)| text.clone())
        .unwrap_or_else(|| panic!("no result for {id}"))
}

/// `pwd`'s answer names the working directory itself, not `work/sub`.
fn assert_in_work(pwd: &str) {
    let line = (pwd.lines())
        .find(|l| l.contains("/work"))
        .unwrap_or_default();
    assert!(line.trim_end().ends_with("/work"), "pwd printed {pwd:?}");
}

/// A sub-agent runs its calls one after another: its `cd sub` must not move the `pwd` beside
/// it (which printed `work/sub` when the sequential path carried the directory along); the
/// next round's `pwd` is in `sub`.
#[test]
fn a_cd_does_not_move_its_sibling_in_a_sub_agent_batch() {
    let sandbox = Sandbox::new("guards_cd_sub_agent");
    sandbox.write("sub/marker.txt", "here");
    let script = vec![
        Reply::Sse(sse::tool_calls(&[(
            "call_agent",
            "agent",
            json!({"task": "look around"}),
        )])),
        calls(&[bash("sub_cd", "cd sub"), bash("sub_pwd", "pwd")]),
        calls(&[bash("sub_pwd2", "pwd")]),
        Reply::Sse(sse::text("sub-agent report")),
        Reply::Sse(sse::text("done")),
    ];
    let server = Server::start(script);
    let out = run(&["-p", "go", "--yes"], &server, &sandbox);
    let requests = server.requests();
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(requests.len(), 5, "{out:?}");
    assert_in_work(&result_of(&requests[2], "sub_pwd"));
    let next = result_of(&requests[3], "sub_pwd2");
    assert!(next.contains("/work/sub"), "the cd did not take: {next:?}");
}

/// The main agent runs a reply's calls in parallel: the same holds there.
#[test]
fn a_cd_does_not_move_its_sibling_in_a_parallel_batch() {
    let sandbox = Sandbox::new("guards_cd_parallel");
    sandbox.write("sub/marker.txt", "here");
    let script = vec![
        calls(&[bash("cd", "cd sub"), bash("pwd", "sleep 0.2; pwd")]),
        calls(&[bash("pwd2", "pwd")]),
        Reply::Sse(sse::text("done")),
    ];
    let server = Server::start(script);
    let out = run(&["-p", "go", "--yes"], &server, &sandbox);
    let requests = server.requests();
    assert_eq!(out.code, 0, "{out:?}");
    assert_in_work(&result_of(&requests[1], "pwd"));
    assert!(result_of(&requests[2], "pwd2").contains("/work/sub"));
}

/// Run `-p go --yes` against `server`; also the run's peak memory in KiB, the child's own
/// `VmHWM` read while it runs (`wait4`'s `ru_maxrss` would carry the harness's size).
fn run_measured(sandbox: &Sandbox, server: &Server) -> (Output, u64) {
    let url = server.url();
    let env = [("CORECODER_API_KEY", "sk-test"), ("OPENAI_BASE_URL", &url)];
    let child = spawn_with(&["-p", "go", "--yes"], &env, sandbox);
    let status = format!("/proc/{}/status", child.id());
    std::thread::scope(|scope| {
        let peak = scope.spawn(move || {
            let mut peak = 0;
            while let Ok(text) = std::fs::read_to_string(&status) {
                let field = text.lines().find_map(|l| l.strip_prefix("VmHWM:"));
                let kib = field.and_then(|f| f.trim().trim_end_matches("kB").trim().parse().ok());
                peak = peak.max(kib.unwrap_or(0));
                std::thread::sleep(Duration::from_millis(5));
            }
            peak
        });
        let output = finish(child);
        (output, peak.join().expect("the sampler"))
    })
}

/// One event in 64 KiB `data:` lines that never closes its JSON: no line is long, but the
/// event passes 16 MiB after 257 of them and is refused there, unretried, before the reply cap
/// (64 MiB). With the bound changed from `>` to `==` the event grew to the cap (and, before the
/// cap existed, to 1 GiB of memory).
#[test]
fn an_event_of_many_lines_is_refused_past_sixteen_mib() {
    let sandbox = Sandbox::new("guards_sse_event");
    let script = vec![Reply::Flood {
        head: sse::role() + "data: {\"choices\":[{\"delta\":{\"content\":\"\n",
        piece: format!("data: {}\n", "x".repeat(64 * 1024 - 7)),
        bytes: 1 << 30,
    }];
    let server = Server::start(script);
    let (out, peak) = run_measured(&sandbox, &server);
    eprintln!("an event of 64 KiB lines: peak {} MiB", peak >> 10);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("an event of the reply is too large"),
        "{out:?}"
    );
    assert_eq!(server.requests().len(), 1, "not retried");
    assert!(
        peak < 50 << 10,
        "peak {} MiB (77 MiB with `>` as `==`)",
        peak >> 10
    );
}

/// The requests of a run compacting in a window of `window` tokens: those that offer tools
/// (the turns), and how many summary requests (without tools) were made.
fn compacting_run(name: &str, window: &str, script: Vec<Reply>) -> (Output, Vec<Recorded>, usize) {
    let sandbox = Sandbox::new(name);
    sandbox.write(
        "big.txt",
        &"0123456789 filler line for the window\n".repeat(420),
    );
    let server = Server::answering_summaries(script, "Summary: the files were read.");
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
        ("CORECODER_MAX_CONTEXT", window),
    ];
    let out = run_with(&["-p", "go", "--yes"], &env, &sandbox);
    eprintln!("{name}: {}", out.stderr);
    let requests = server.requests();
    let summaries = (requests.iter()).filter(|r| r.body.get("tools").is_none());
    let summaries = summaries.count();
    let turns = (requests.into_iter()).filter(|r| r.body.get("tools").is_some());
    (out, turns.collect(), summaries)
}

/// A reply of one call that reports no usage: the estimate then counts every message, not the
/// provider's (scripted, constant) count plus what was added since.
fn unmeasured(id: &str, name: &str, args: Value) -> Reply {
    let args = args.to_string();
    let deltas = sse::call_deltas(&[(id, name, args.as_str())]);
    Reply::Sse(sse::role() + &deltas + &sse::finish("tool_calls") + &sse::done())
}

/// The window of the compaction runs, in tokens: eleven rounds of about 4,000 tokens pass
/// half of it (the snip tier) near the tenth; left uncompacted they reach 70% (the summary
/// tier) by the end, so where a summary started from tells which tier asked for it.
const WINDOW: &str = "70000";

/// Eleven rounds, each reading `big.txt` (16 KB a time, which a snip cuts to a few lines).
fn reads() -> Vec<Reply> {
    let read = |n: usize| {
        let args = json!({"file_path": "big.txt", "offset": 1 + n});
        unmeasured(&format!("r{n}"), "read_file", args)
    };
    let mut script: Vec<Reply> = (0..11).map(read).collect();
    script.push(Reply::Sse(sse::text("done")));
    script
}

/// Eleven rounds, each writing 16 KB through the arguments of a call: nothing a snip can cut.
fn writes() -> Vec<Reply> {
    let write = |n: usize| {
        let content = format!("line {n} of what the model wrote\n").repeat(500);
        let args = json!({"file_path": format!("w{n}.txt"), "content": content});
        unmeasured(&format!("w{n}"), "write_file", args)
    };
    let mut script: Vec<Reply> = (0..11).map(write).collect();
    script.push(Reply::Sse(sse::text("done")));
    script
}

/// A snip that frees enough ends there: no summary request. (Fired a summary on every snip, and
/// this run made one.)
#[test]
fn a_snip_that_frees_enough_makes_no_summary_request() {
    let (out, turns, summaries) = compacting_run("guards_snip_enough", WINDOW, reads());
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(turns.len(), 12, "{out:?}");
    assert!(out.stderr.contains("context Snip:"), "{out:?}");
    assert_eq!(summaries, 0, "{out:?}");
}

/// The size, in tokens, each compaction at `tier` started from (its notice on stderr).
fn compacted_from(out: &Output, tier: &str) -> Vec<usize> {
    let prefix = format!("context {tier}: ");
    let sizes = (out.stderr.lines()).filter_map(|line| line.strip_prefix(prefix.as_str()));
    let sizes = sizes.filter_map(|rest| rest.split(' ').next()?.parse().ok());
    sizes.collect()
}

/// A snip that frees too little goes on to a summary at once: the one summary request comes
/// when the history first passes half the window, not at 70% (with the goal check switched
/// off, the history grew on to the summary tier: 52,786 tokens of 70,000).
#[test]
fn a_snip_that_frees_too_little_goes_on_to_a_summary() {
    let (out, turns, summaries) = compacting_run("guards_snip_short", WINDOW, writes());
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(turns.len(), 12, "{out:?}");
    assert_eq!(summaries, 1, "{out:?}");
    let window: usize = WINDOW.parse().expect("a number");
    let from = compacted_from(&out, "Summarise");
    let at_snip = |&tokens: &usize| tokens >= window / 2 && tokens < window * 7 / 10;
    assert!(
        from.len() == 1 && from.iter().all(at_snip),
        "{from:?}\n{out:?}"
    );
}

/// Below half the window nothing is compacted, and nothing is summarised.
#[test]
fn below_the_threshold_nothing_is_compacted() {
    let (out, turns, summaries) = compacting_run("guards_snip_none", "200000", writes());
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(turns.len(), 12, "{out:?}");
    assert!(!out.stderr.contains("context "), "{out:?}");
    assert_eq!(summaries, 0, "{out:?}");
}
