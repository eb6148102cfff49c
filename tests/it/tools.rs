//! The tools as the model sees them through the binary: parallel bash calls, the tracked
//! working directory, a timeout on a bash that closed its pipes, edit_file's refusals, consent
//! for mutating tools, and the sample repo.

use crate::run::{Output, Sandbox, run};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::time::Duration;

/// Run `-p --yes` in `sandbox`; each round is one reply of tool calls, then a text answer.
fn check(sandbox: &Sandbox, rounds: &[&[(&str, &str, Value)]]) -> (Output, Vec<Recorded>) {
    let mut script: Vec<Reply> = rounds
        .iter()
        .map(|calls| Reply::Sse(sse::tool_calls(calls)))
        .collect();
    script.push(Reply::Sse(sse::text("done")));
    let server = Server::start(script);
    let output = run(&["-p", "go", "--yes"], &server, sandbox);
    let requests = server.requests();
    assert_eq!(output.code, 0, "{output:?}");
    assert_eq!(requests.len(), rounds.len() + 1, "{output:?}");
    (output, requests)
}

/// Run `-p go` plus `flags` in `sandbox` against `script`.
fn check_with(sandbox: &Sandbox, flags: &[&str], script: Vec<Reply>) -> (Output, Vec<Recorded>) {
    let server = Server::start(script);
    let mut args = vec!["-p", "go"];
    args.extend_from_slice(flags);
    let output = run(&args, &server, sandbox);
    (output, server.requests())
}

#[test]
fn calls_in_one_reply_run_in_parallel_and_keep_call_order() {
    let sandbox = Sandbox::new("parallel");
    let calls = [
        ("call_a", "bash", json!({"command": "sleep 1; echo out-a"})),
        ("call_b", "bash", json!({"command": "echo out-b; sleep 1"})),
        ("call_c", "bash", json!({"command": "sleep 1; echo out-c"})),
    ];
    let (_, requests) = check(&sandbox, &[&calls]);
    // From the request that asked to the one carrying the results: one sleep, not three.
    let took = requests[1].at - requests[0].at;
    assert!(
        took < Duration::from_millis(2500),
        "three 1 s calls took {took:?}"
    );
    let results = requests[1].tool_results();
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["call_a", "call_b", "call_c"]);
    for (id, content) in &results {
        let mine = format!("out-{}", &id[5..]);
        assert!(content.contains(&mine), "{id}: {content}");
        let others = ["out-a", "out-b", "out-c"]
            .into_iter()
            .filter(|o| *o != mine);
        for other in others {
            assert!(!content.contains(other), "{id} got {other}: {content}");
        }
    }
}

#[test]
fn cd_in_one_round_moves_the_next_rounds_bash() {
    let sandbox = Sandbox::new("tracked_cwd");
    sandbox.write("sub/marker.txt", "here");
    let (_, requests) = check(
        &sandbox,
        &[
            &[("call_cd", "bash", json!({"command": "cd sub"}))],
            &[("call_pwd", "bash", json!({"command": "pwd; ls"}))],
        ],
    );
    let result = requests[2].last_tool_result();
    assert!(result.contains("/work/sub"), "{result}");
    assert!(result.contains("marker.txt"), "{result}");
}

/// A command that closed its pipes at once and never ends (the runner waits on its pidfd, no
/// pipe left to wake it): the timeout still kills it, and the next call runs at once.
#[test]
fn the_timeout_kills_a_bash_that_closed_its_pipes() {
    let sandbox = Sandbox::new("closed_pipes_timeout");
    let hang = json!({"command": "exec >&- 2>&-; sleep 30", "timeout": 1});
    let started = std::time::Instant::now();
    let (_, requests) = check(
        &sandbox,
        &[
            &[("call_hang", "bash", hang)],
            &[(
                "call_next",
                "bash",
                json!({"command": "exec >&-; echo gone >&2"}),
            )],
        ],
    );
    let took = started.elapsed();
    let result = requests[1].last_tool_result();
    assert!(result.contains("timed out after 1s"), "{result}");
    assert!(requests[2].last_tool_result().contains("gone"));
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn ambiguous_edit_leaves_the_file_untouched() {
    let sandbox = Sandbox::new("edit_ambiguous");
    let original = "x = 1\ny = 2\nx = 1\n";
    sandbox.write("dup.txt", original);
    let edit = json!({"file_path": "dup.txt", "old_string": "x = 1", "new_string": "x = 3"});
    let (_, requests) = check(&sandbox, &[&[("call_1", "edit_file", edit)]]);
    assert_eq!(sandbox.read("dup.txt"), original);
    let result = requests[1].last_tool_result();
    assert!(result.contains("appears 2 times"), "{result}");
}

#[test]
fn unmatched_edit_leaves_the_file_untouched() {
    let sandbox = Sandbox::new("edit_unmatched");
    let original = "x = 1\n";
    sandbox.write("one.txt", original);
    let edit = json!({"file_path": "one.txt", "old_string": "z = 9", "new_string": "z = 0"});
    let (_, requests) = check(&sandbox, &[&[("call_1", "edit_file", edit)]]);
    assert_eq!(sandbox.read("one.txt"), original);
    let result = requests[1].last_tool_result();
    assert!(
        result.starts_with("Error") || result.contains("not found"),
        "{result}"
    );
}

#[test]
fn write_file_creates_nested_file() {
    let sandbox = Sandbox::new("write_file");
    let write = json!({"file_path": "notes/todo.md", "content": "- fix add\n"});
    check(&sandbox, &[&[("call_1", "write_file", write)]]);
    assert_eq!(sandbox.read("notes/todo.md"), "- fix add\n");
}

/// Read-only tools run without `--yes`, so this run has none.
#[test]
fn read_only_tools_explore_the_sample_repo() {
    let sandbox = Sandbox::with_repo("read_only", "calc");
    let calls = [
        ("call_read", "read_file", json!({"file_path": "README.md"})),
        ("call_glob", "glob", json!({"pattern": "*.sh"})),
        ("call_grep", "grep", json!({"pattern": "PASS"})),
    ];
    let script = vec![
        Reply::Sse(sse::tool_calls(&calls)),
        Reply::Sse(sse::text("explored")),
    ];
    let server = Server::start(script);
    let out = run(&["-p", "look around"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let results = server.requests()[1].tool_results();
    assert_eq!(results.len(), 3, "{out:?}");
    assert!(
        results[0].1.contains("A tiny shell calculator"),
        "{results:#?}"
    );
    assert!(results[1].1.contains("calc.sh") && results[1].1.contains("test_calc.sh"));
    assert!(results[2].1.contains("test_calc.sh"), "{results:#?}");
    assert!(
        !results[2].1.contains("README"),
        "grep matched a file without PASS"
    );
}

fn touch_call() -> Reply {
    let args = json!({"command": "touch made_by_bash.txt"});
    Reply::Sse(sse::tool_calls(&[("call_touch", "bash", args)]))
}

#[test]
fn mutating_tool_is_refused_without_yes() {
    let script = vec![touch_call(), Reply::Sse(sse::text("ok"))];
    let sandbox = Sandbox::new("refused");
    let (out, requests) = check_with(&sandbox, &[], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        !sandbox.path("made_by_bash.txt").exists(),
        "bash ran without --yes"
    );
    let result = requests[1].last_tool_result().to_lowercase();
    let says_so = ["refus", "denied", "not allowed", "--yes", "permission"];
    assert!(says_so.iter().any(|w| result.contains(w)), "{result}");
}

#[test]
fn mutating_tool_runs_with_yes() {
    let script = vec![touch_call(), Reply::Sse(sse::text("ok"))];
    let sandbox = Sandbox::new("allowed");
    let (out, _) = check_with(&sandbox, &["--yes"], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(sandbox.path("made_by_bash.txt").exists(), "{out:?}");
    assert!(
        out.stderr.contains("> bash(touch made_by_bash.txt"),
        "{out:?}"
    );
}

/// The whole loop on the sample repo: read, fix with edit_file, run the test with bash.
#[test]
fn fixes_the_sample_repo_end_to_end() {
    let edit = json!({"file_path": "calc.sh", "old_string": "$(( $1 - $2 ))",
                      "new_string": "$(( $1 + $2 ))"});
    let script = vec![
        Reply::Sse(sse::tool_calls(&[(
            "call_1",
            "read_file",
            json!({"file_path": "calc.sh"}),
        )])),
        Reply::Sse(sse::tool_calls(&[("call_2", "edit_file", edit)])),
        Reply::Sse(sse::tool_calls(&[(
            "call_3",
            "bash",
            json!({"command": "sh test_calc.sh"}),
        )])),
        Reply::Sse(sse::text("Fixed: add now adds.")),
    ];
    let sandbox = Sandbox::with_repo("end_to_end", "calc");
    let (out, requests) = check_with(&sandbox, &["--yes"], script);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.trim_end(), "Fixed: add now adds.");
    assert!(
        sandbox
            .read("calc.sh")
            .contains("add() { echo $(( $1 + $2 )); }")
    );
    assert_eq!(requests.len(), 4, "{out:?}");
    assert!(
        requests[3].last_tool_result().contains("PASS"),
        "{:?}",
        requests[3].tool_results()
    );
    assert_eq!(requests[3].tool_results().len(), 3);
}
