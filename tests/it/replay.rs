//! Recorded provider streams from `fixtures/sse/` replayed through the whole binary.
//!
//! `src/client/sse.rs` unit-tests the parser on these files; here the same bytes go over a socket to
//! the real binary, to show the parse reaches stdout and the history intact. The files are read
//! at run time (they come from the SSE work); only their text outcomes are asserted here.

use crate::driver::{Repl, WAIT};
use crate::run::{Output, Sandbox, run};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::json;
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

// ---- `--replay FILE`: a traced session run again against its recorded replies ----

/// A trace in `fixtures/traces/`, by its absolute path.
fn trace(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/traces");
    path.join(name).display().to_string()
}

/// `corecoder ARGS` with no key and no base URL at all: a replay needs neither.
fn replay(args: &[&str], sandbox: &Sandbox) -> Output {
    crate::run::run_with(args, &[], sandbox)
}

/// A copy of a trace's starting directory, every file with one modification time (as the demo
/// gives its files), so `glob`, newest first, lists them by name as it did when recorded.
fn project(name: &str, fixture: &str) -> Sandbox {
    let sandbox = Sandbox::with_copy(name, &format!("fixtures/traces/{fixture}"));
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_767_225_600);
    for entry in std::fs::read_dir(&sandbox.dir).expect("the copy") {
        let file = std::fs::File::options()
            .write(true)
            .open(entry.expect("a file").path());
        file.and_then(|f| f.set_modified(when))
            .expect("set its time");
    }
    sandbox
}

/// What the run printed on stderr holds `text`.
fn said(out: &Output, text: &str) {
    assert!(out.stderr.contains(text), "{text:?} not said: {out:?}");
}

/// The lines of a trace file, parsed.
fn records(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{e}"));
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Re-records `fixtures/traces/` with the real binary: the demo's session (`--demo --trace`),
/// and a session against the scripted server with two parallel writes, a failed read, a
/// stream that breaks and is retried, a big read that makes the next round compact the
/// history (summary and all), then an edit.
#[test]
#[ignore = "writes fixtures/traces/: cargo test --test it replay::record_the_fixture_traces -- --ignored"]
fn record_the_fixture_traces() {
    let sandbox = Sandbox::new("record_traces_demo");
    let out = replay(&["--demo", "--trace", &trace("demo.jsonl")], &sandbox);
    assert_eq!(out.code, 0, "{out:?}");

    let sandbox = project("record_traces_busy", "busy");
    let write = |id, file, text| {
        (
            id,
            "write_file",
            json!({"file_path": file, "content": text}),
        )
    };
    let read = |id, file| (id, "read_file", json!({"file_path": file}));
    let edit = json!({"file_path": "alpha.txt", "old_string": "alpha", "new_string": "ALPHA"});
    let big_read = sse::tool_calls(&[read("call_big", "big.log")]);
    let script = vec![
        Reply::Sse(sse::tool_calls(&[
            write("call_alpha", "alpha.txt", "alpha\n"),
            write("call_beta", "beta.txt", "beta\n"),
        ])),
        Reply::Sse(sse::tool_calls(&[read("call_missing", "missing.txt")])),
        Reply::SseThenDrop(big_read[..big_read.len() / 2].to_string()),
        Reply::Sse(big_read),
        Reply::Sse(sse::tool_calls(&[("call_edit", "edit_file", edit)])),
        Reply::Sse(sse::text(
            "Wrote alpha.txt and beta.txt, capitalised alpha.",
        )),
    ];
    let server = Server::answering_summaries(script, "Two files written; big.log is quiet.");
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
        ("CORECODER_MAX_CONTEXT", BUSY_WINDOW),
    ];
    let (task, file) = (
        "Write alpha and beta, check the log, capitalise alpha.",
        trace(BUSY),
    );
    let out = crate::run::run_with(&["-p", task, "--yes", "--trace", &file], &env, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    said(&out, "context Summarise");
    assert_eq!(sandbox.read("alpha.txt"), "ALPHA\n");
}

const BUSY: &str = "busy.jsonl";
const BUSY_WINDOW: &str = "9000";

#[test]
fn the_demo_trace_replays_and_fixes_calc() {
    let sandbox = project("replay_demo", "demo");
    let out = replay(&["--replay", &trace("demo.jsonl"), "--yes"], &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    said(&out, "replay: 5 of 5 rounds matched");
    assert!(
        out.stdout.contains("now prints `ok: add 2 3 = 5`"),
        "{out:?}"
    );
    assert!(sandbox.read("calc.sh").contains("$(( $1 + $2 ))"));
    let mut test = std::process::Command::new("sh");
    let test = test.arg("test_calc.sh").current_dir(&sandbox.dir).output();
    assert!(test.expect("sh").status.success());
}

#[test]
fn the_busy_trace_replays_parallel_writes_a_retry_and_a_compaction() {
    let sandbox = project("replay_busy", "busy");
    let out = replay(&["--replay", &trace(BUSY), "--yes"], &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    said(&out, "replay: 7 of 7 rounds matched");
    said(&out, "file not found");
    said(&out, "the stream broke");
    said(&out, "context Summarise");
    assert_eq!(sandbox.read("alpha.txt"), "ALPHA\n");
    assert_eq!(sandbox.read("beta.txt"), "beta\n");
}

/// A file that reads differently now: the replay names the first request, message and field
/// where the history left the trace, shows both sides, and stops before anything is edited.
#[test]
fn a_changed_file_is_reported_where_the_history_first_differs() {
    let sandbox = project("replay_diverges", "demo");
    let calc = sandbox.read("calc.sh").replace("$1 - $2", "$1 * $2");
    sandbox.write("calc.sh", &calc);
    let out = replay(&["--replay", &trace("demo.jsonl"), "--yes"], &sandbox);
    assert_eq!(out.code, 7, "{out:?}");
    said(
        &out,
        "first divergence, request 2: message 4 (tool), field content",
    );
    assert!(
        out.stderr
            .contains(r#"trace: …"d() {\n3:    echo $(( $1 - $2 ))"#),
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains(r#"now:   …"d() {\n3:    echo $(( $1 * $2 ))"#),
        "{out:?}"
    );
    said(&out, "replay: 1 of 5 rounds matched");
    said(&out, "--replay-loose goes on");
    assert_eq!(sandbox.read("calc.sh"), calc, "it stopped before the edit");
}

/// `--replay-loose` serves the recorded replies past the difference: the edit no longer
/// matches the file, the model is told, and the run still ends with the recorded answer.
#[test]
fn replay_loose_goes_on_past_a_difference() {
    let sandbox = project("replay_loose", "demo");
    let calc = sandbox.read("calc.sh").replace("$1 - $2", "$1 * $2");
    sandbox.write("calc.sh", &calc);
    let file = trace("demo.jsonl");
    let out = replay(&["--replay", &file, "--yes", "--replay-loose"], &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    said(&out, "replay: 1 of 5 rounds matched");
    said(&out, "4 of 5 requests differed");
    said(&out, "old_string not found");
    assert!(out.stdout.contains("Fixed: `add`"), "{out:?}");
}

/// The demo ran with everything allowed; a replay without `--yes` refuses the test run, and
/// says that is where it parted from the trace.
#[test]
fn a_replay_does_not_imply_yes() {
    let sandbox = project("replay_no_yes", "demo");
    let out = replay(&["--replay", &trace("demo.jsonl")], &sandbox);
    assert_eq!(out.code, 7, "{out:?}");
    said(
        &out,
        "first divergence, request 3: message 6 (tool), field content",
    );
    said(&out, r#"now:   "Refused: bash"#);
    assert!(sandbox.read("calc.sh").contains("$1 - $2"));
}

/// `-p TEXT` is the task instead of the recorded one: the first request already differs.
#[test]
fn p_gives_the_task_instead_of_the_recorded_one() {
    let sandbox = project("replay_p", "demo");
    let file = trace("demo.jsonl");
    let out = replay(
        &["--replay", &file, "--yes", "-p", "Add a mul function."],
        &sandbox,
    );
    assert_eq!(out.code, 7, "{out:?}");
    said(
        &out,
        "first divergence, request 1: message 1 (user), field content",
    );
    said(&out, r#"now:   "Add a mul function.""#);
}

/// A trace another version wrote still replays, with a warning first.
#[test]
fn a_trace_from_another_version_replays_with_a_warning() {
    let sandbox = project("replay_old", "demo");
    let text = std::fs::read_to_string(trace("demo.jsonl")).expect("the demo trace");
    let version = format!(r#""corecoder":"{}""#, env!("CARGO_PKG_VERSION"));
    assert!(text.lines().next().expect("a header").contains(&version));
    let old = sandbox.home.join("old.jsonl");
    std::fs::write(&old, text.replacen(&version, r#""corecoder":"0.0.1""#, 1)).expect("write");
    let out = replay(&["--replay", &old.display().to_string(), "--yes"], &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let warning = format!(
        "written by corecoder 0.0.1, this is {}",
        env!("CARGO_PKG_VERSION")
    );
    said(&out, &warning);
    said(&out, "replay: 5 of 5 rounds matched");
}

/// Flags that make no sense with `--replay`, a trace that is not there or too big, and a
/// `--trace` that would overwrite the trace being replayed: usage errors, the trace kept.
#[test]
fn replay_flags_that_make_no_sense_are_usage_errors() {
    let sandbox = Sandbox::new("replay_usage");
    let copy = sandbox.path("t.jsonl");
    std::fs::copy(trace("demo.jsonl"), &copy).expect("a copy of the demo trace");
    for args in [
        vec!["--replay-loose"],
        vec!["--replay", "t.jsonl", "--demo"],
        vec!["--replay", "t.jsonl", "-c"],
        vec!["--replay", "t.jsonl", "-p", "x", "--output-format", "json"],
        vec!["--replay", "no-such-trace.jsonl"],
        vec!["--replay", "t.jsonl", "--trace", "./t.jsonl"],
    ] {
        let out = replay(&args, &sandbox);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
    }
    // A sparse file: its size is all the refusal looks at.
    let huge = std::fs::File::create(sandbox.path("huge.jsonl")).expect("huge.jsonl");
    huge.set_len(257 << 20).expect("a 257 MiB file");
    let out = replay(&["--replay", "huge.jsonl"], &sandbox);
    assert_eq!(out.code, 2, "{out:?}");
    said(&out, "is over 256 MiB");
    let kept = std::fs::read_to_string(&copy).expect("the trace");
    assert_eq!(
        kept,
        std::fs::read_to_string(trace("demo.jsonl")).expect("the demo trace")
    );
}

/// The key is in the environment, and a file the model reads holds it too: the trace has
/// neither (the request's header is never traced; the read result has the key replaced),
/// and its header names the version, the dialect and the model.
#[test]
fn a_key_in_the_environment_never_reaches_the_trace() {
    let key = "sk-live-0123456789abcdefSECRET";
    let sandbox = Sandbox::new("replay_no_key_in_trace");
    sandbox.write("notes.txt", &format!("the key is {key}\n"));
    let call = json!({"file_path": "notes.txt"});
    let server = Server::start(vec![
        Reply::Sse(sse::tool_calls(&[("call_notes", "read_file", call)])),
        Reply::Sse(sse::text("It holds a key.")),
    ]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", key),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let args = [
        "-p",
        "What is in notes.txt?",
        "--trace",
        "t.jsonl",
        "-m",
        "m1",
    ];
    let out = crate::run::run_with(&args, &env, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let requests = server.requests();
    assert!(
        requests[1]
            .header("authorization")
            .is_some_and(|h| h.contains(key))
    );
    let text = sandbox.read("t.jsonl");
    assert!(!text.contains(key), "the key reached the trace");
    assert!(
        !text.contains("SECRET"),
        "part of the key reached the trace"
    );
    assert!(text.contains("the key is [API key]"), "{text}");
    let header = &records(&sandbox.path("t.jsonl"))[0];
    assert_eq!(header["kind"], "header");
    assert_eq!(header["corecoder"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        (&header["dialect"], &header["model"]),
        (&json!("openai"), &json!("m1"))
    );
}

/// An interactive session of two tasks, the first asking consent, is traced; its replay runs
/// both tasks one after the other in one conversation (`--yes` standing for the "y" typed).
#[test]
fn a_traced_interactive_session_replays_its_tasks_in_order() {
    let sandbox = Sandbox::new("replay_repl");
    let file = sandbox.home.join("repl.jsonl").display().to_string();
    let write = json!({"file_path": "note.txt", "content": "one\n"});
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("call_note", "write_file", write)])),
        Reply::Sse(sse::text("Wrote note.txt.")),
        Reply::Sse(sse::text("It says one.")),
    ];
    let mut repl = Repl::start(&sandbox, &["--trace", &file], script);
    repl.enter("write note.txt");
    repl.expect("Allow write_file(");
    repl.enter("y");
    repl.expect("Wrote note.txt.");
    repl.idle();
    repl.turn("what does it say?", "It says one.");
    repl.enter("quit");
    assert_eq!(repl.pty.wait_exit(WAIT), Some(0), "{}", repl.pty.screen());
    std::fs::remove_file(sandbox.path("note.txt")).expect("the note was written");

    let out = replay(&["--replay", &file, "--yes"], &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    said(&out, "replay: 3 of 3 rounds matched");
    assert_eq!(out.stdout, "Wrote note.txt.\nIt says one.\n");
    assert_eq!(sandbox.read("note.txt"), "one\n");
}

/// What guards a live run guards a replay: the user's PreToolUse hook vetoes the test run, and
/// the read-only sandbox refuses the edit; each time the replay names that result as where it
/// left the trace, and nothing was changed.
#[test]
fn hooks_and_the_sandbox_act_in_a_replay_as_in_a_live_run() {
    let sandbox = project("replay_guards", "demo");
    let dir = sandbox.home.join(".corecoder");
    std::fs::create_dir_all(&dir).expect("create ~/.corecoder");
    let veto = sandbox.home.join("veto.sh");
    std::fs::write(&veto, "#!/bin/sh\necho 'no tests today' >&2\nexit 2\n").expect("veto.sh");
    let command = format!("sh {}", veto.display());
    let hooks = json!({"PreToolUse": [{"matcher": "bash", "command": command, "timeout": 5}]});
    std::fs::write(dir.join("hooks.json"), hooks.to_string()).expect("hooks.json");
    let file = trace("demo.jsonl");
    let out = replay(&["--replay", &file, "--yes"], &sandbox);
    assert_eq!(out.code, 7, "{out:?}");
    said(
        &out,
        "first divergence, request 3: message 6 (tool), field content",
    );
    said(&out, "no tests today");

    std::fs::remove_file(dir.join("hooks.json")).expect("no hooks now");
    let out = replay(
        &["--replay", &file, "--yes", "--sandbox", "read-only"],
        &sandbox,
    );
    assert_eq!(out.code, 7, "{out:?}");
    said(
        &out,
        "first divergence, request 4: message 8 (tool), field content",
    );
    assert!(
        sandbox.read("calc.sh").contains("$1 - $2"),
        "nothing was edited"
    );
}

/// A trace is a model's replies, and one from a stranger is as hostile as any model: what it
/// asks for meets the same gate. Here it asks for `rm -rf ~` under `--yes`; the danger gate
/// refuses it in the replay as it did when the trace was recorded, and the home survives.
#[test]
fn a_hostile_trace_meets_the_same_danger_gate() {
    let sandbox = Sandbox::new("replay_hostile");
    std::fs::write(sandbox.home.join("keep.txt"), "mine\n").expect("a file to keep");
    let wipe = json!({"command": "rm -rf ~"});
    let server = Server::start(vec![
        Reply::Sse(sse::tool_calls(&[("call_wipe", "bash", wipe)])),
        Reply::Sse(sse::text("Done.")),
    ]);
    let file = sandbox.home.join("hostile.jsonl").display().to_string();
    let out = run(
        &["-p", "tidy up", "--yes", "--trace", &file],
        &server,
        &sandbox,
    );
    assert_eq!(out.code, 0, "{out:?}");
    let out = replay(&["--replay", &file, "--yes"], &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    said(&out, "replay: 2 of 2 rounds matched");
    said(&out, "rm -rf ~");
    assert!(sandbox.home.join("keep.txt").exists(), "{out:?}");
}

/// `--demo --trace FILE` records the demo's session (how `fixtures/traces/demo.jsonl` was
/// made): the header, the task, five requests; replayed in a copy of the demo's project it
/// matches round for round.
#[test]
fn the_demo_traced_now_replays_as_the_fixture_does() {
    let sandbox = project("replay_demo_now", "demo");
    let file = sandbox.home.join("demo.jsonl");
    let out = replay(
        &["--demo", "--trace", &file.display().to_string()],
        &sandbox,
    );
    assert_eq!(out.code, 0, "{out:?}");
    let lines = records(&file);
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["kind"].as_str()).collect();
    assert_eq!(&kinds[..2], ["header", "task"]);
    assert_eq!(kinds.iter().filter(|k| **k == "request").count(), 5);
    let out = replay(
        &["--replay", &file.display().to_string(), "--yes"],
        &sandbox,
    );
    assert_eq!(out.code, 0, "{out:?}");
    said(&out, "replay: 5 of 5 rounds matched");
}

/// Plan mode is the user's as it was for each task: the traced session planned with `/plan`
/// (the model's bash call refused), then `approve`d; the replay refuses the first call as plan
/// mode did, runs the second, and matches every round.
#[test]
fn plan_mode_is_replayed_as_the_user_had_it() {
    let sandbox = Sandbox::new("replay_plan");
    let file = sandbox.home.join("plan.jsonl").display().to_string();
    let touch = |id| {
        Reply::Sse(sse::tool_calls(&[(
            id,
            "bash",
            json!({"command": "touch plan.txt"}),
        )]))
    };
    let script = vec![
        touch("call_early"),
        Reply::Sse(sse::text("Here is the plan")),
        touch("call_late"),
        Reply::Sse(sse::text("Built it")),
    ];
    let mut repl = Repl::start(&sandbox, &["--trace", &file], script);
    repl.turn("/plan", "Plan mode on");
    repl.turn("add plan.txt", "Here is the plan");
    repl.enter("approve");
    repl.expect("Allow bash(");
    repl.enter("y");
    repl.expect("Built it");
    repl.idle();
    repl.enter("quit");
    assert_eq!(repl.pty.wait_exit(WAIT), Some(0), "{}", repl.pty.screen());
    std::fs::remove_file(sandbox.path("plan.txt")).expect("approved, it ran");

    let out = replay(&["--replay", &file, "--yes"], &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    said(&out, "replay: 4 of 4 rounds matched");
    said(&out, "Refused: plan mode is on");
    assert_eq!(out.stdout, "Here is the plan\nBuilt it\n");
    assert!(sandbox.path("plan.txt").exists());
}

/// What the tools see counts down to the files' times: `glob` lists the newest first, so a
/// `test_calc.sh` touched after `calc.sh` lists first, and the replay says so.
#[test]
fn a_file_touched_later_lists_first_and_the_replay_says_so() {
    let sandbox = project("replay_touched", "demo");
    let later = std::time::SystemTime::now();
    let file = std::fs::File::options()
        .write(true)
        .open(sandbox.path("test_calc.sh"));
    file.and_then(|f| f.set_modified(later)).expect("touch it");
    let out = replay(&["--replay", &trace("demo.jsonl"), "--yes"], &sandbox);
    assert_eq!(out.code, 7, "{out:?}");
    said(
        &out,
        "first divergence, request 2: message 3 (tool), field content",
    );
    said(&out, r#"trace: "calc.sh\ntest_calc.sh""#);
    said(&out, r#"now:   "test_calc.sh\ncalc.sh""#);
}

/// What answered a request is served again as it came: an error status (and the retry after
/// it), and a whole completion that was not a stream.
#[test]
fn an_error_status_and_a_whole_completion_are_served_again() {
    let sandbox = Sandbox::new("replay_status");
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/http/whole-completion-200.http");
    let whole = std::fs::read(path).expect("the whole completion");
    let server = Server::start(vec![
        Reply::error(503, "busy, try again"),
        Reply::Raw(whole),
    ]);
    let file = sandbox.home.join("status.jsonl").display().to_string();
    let out = run(&["-p", "answer", "--trace", &file], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let kinds: Vec<String> = records(Path::new(&file))
        .iter()
        .map(|r| r["kind"].to_string())
        .collect();
    assert!(
        kinds.contains(&"\"http_error\"".into()) && kinds.contains(&"\"not_a_stream\"".into()),
        "{kinds:?}"
    );
    let out = replay(&["--replay", &file], &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    said(&out, "HTTP 503: busy, try again");
    said(&out, "replay: 2 of 2 rounds matched");
    assert_eq!(out.stdout, "a whole answer, not streamed\n");
}

/// A trace records the dialect it spoke, and `--replay` speaks it again with no `--provider`:
/// an Anthropic and a Responses session (a `read_file` call, then the answer) each replay
/// round for round.
#[test]
fn a_trace_replays_in_the_dialect_it_recorded() {
    let cases = [
        ("anthropic", "anthropic-tool-call.sse", "anthropic-text.sse"),
        (
            "responses",
            "responses_tool_call_deltas.sse",
            "responses_text.sse",
        ),
    ];
    for (provider, call, answer) in cases {
        let sandbox = Sandbox::new(&format!("replay_dialect_{provider}"));
        sandbox.write("src/main.rs", "fn main() {}\n");
        let script = vec![Reply::Sse(fixture(call)), Reply::Sse(fixture(answer))];
        let server = Server::start(script);
        let file = sandbox.home.join("trace.jsonl").display().to_string();
        let url = server.url();
        let root = url.trim_end_matches("/v1").to_string();
        let env = [
            ("ANTHROPIC_API_KEY", "sk-test"),
            ("ANTHROPIC_BASE_URL", root.as_str()),
            ("CORECODER_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", url.as_str()),
        ];
        let args = ["--provider", provider, "--trace", &file, "-p", "read main"];
        let out = crate::run::run_with(&args, &env, &sandbox);
        assert_eq!(out.code, 0, "{provider}: {out:?}");
        let header = &records(Path::new(&file))[0];
        assert_eq!(header["dialect"], provider, "{header}");
        let out = replay(&["--replay", &file], &sandbox);
        assert_eq!(out.code, 0, "{provider}: {out:?}");
        said(&out, "replay: 2 of 2 rounds matched");
    }
}
