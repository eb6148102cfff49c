//! Hooks: the user's shell commands around tool calls and prompts, in `-p` mode.
//!
//! Each test writes a hooks.json (the user's under `HOME/.corecoder`, or the project's under
//! the working directory's `.corecoder`) and small hook scripts into its sandbox, then reads
//! what the model was sent and what the scripts saw. The hooks' own parsing and matching are
//! unit-tested in `src/extras/hooks.rs`; here only the binary's behaviour counts.

use crate::run::{Output, Sandbox, run};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};

/// One `-p` run with `config` as the user's hooks.json, and the requests it sent.
fn check(sandbox: &Sandbox, config: Value, script: Vec<Reply>, args: &[&str]) -> Checked {
    let dir = sandbox.home.join(".corecoder");
    std::fs::create_dir_all(&dir).expect("create ~/.corecoder");
    std::fs::write(dir.join("hooks.json"), config.to_string()).expect("write hooks.json");
    let server = Server::start(script);
    let out = run(args, &server, sandbox);
    Checked {
        requests: server.requests(),
        out,
    }
}

struct Checked {
    out: Output,
    requests: Vec<Recorded>,
}

/// A hook script in the sandbox's working directory; hooks run with that as their cwd.
fn script(sandbox: &Sandbox, name: &str, body: &str) -> String {
    sandbox.write(name, &format!("#!/bin/sh\n{body}\n"));
    format!("sh {}", sandbox.path(name).display())
}

fn bash(id: &str, command: &str) -> Reply {
    Reply::Sse(sse::tool_calls(&[(
        id,
        "bash",
        json!({ "command": command }),
    )]))
}

fn answer(text: &str) -> Reply {
    Reply::Sse(sse::text(text))
}

/// The veto wins over consent too: without `--yes` a `-p` bash call would be refused as
/// read-only, and the model must hear the hook's reason instead.
#[test]
fn pre_tool_use_veto_reaches_the_model() {
    let sandbox = Sandbox::new("hooks_veto");
    let veto = script(&sandbox, "veto.sh", "echo 'no rm here' >&2\nexit 2");
    let config = json!({"PreToolUse": [{"matcher": "bash", "command": veto, "timeout": 5}]});
    let script = vec![bash("call_1", "touch ran.txt"), answer("ok, I will not")];
    let checked = check(&sandbox, config, script, &["-p", "make a file"]);
    assert_eq!(checked.out.code, 0, "{:?}", checked.out);
    assert_eq!(checked.requests.len(), 2, "{:?}", checked.out);
    let result = checked.requests[1].last_tool_result();
    assert_eq!(result, "Blocked by a hook: no rm here");
    assert!(!sandbox.path("ran.txt").exists(), "the vetoed command ran");
}

#[test]
fn post_tool_use_sees_the_response() {
    let sandbox = Sandbox::new("hooks_post");
    sandbox.write("notes.txt", "the quick brown fox\n");
    let saved = sandbox.home.join("post-input.json");
    let body = format!("cat > {}\necho checked", saved.display());
    let post = script(&sandbox, "post.sh", &body);
    let config = json!({"PostToolUse": [{"matcher": "read_file", "command": post}]});
    let read = json!({"file_path": "notes.txt"});
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "read_file", read)])),
        answer("read it"),
    ];
    let checked = check(&sandbox, config, script, &["-p", "read notes"]);
    assert_eq!(checked.out.code, 0, "{:?}", checked.out);
    let seen = std::fs::read_to_string(&saved).expect("the hook saved its stdin");
    let seen: Value = serde_json::from_str(&seen).expect("the hook's stdin is JSON");
    assert_eq!(seen["hook_event_name"], "PostToolUse", "{seen}");
    assert_eq!(seen["tool_name"], "read_file", "{seen}");
    assert_eq!(seen["tool_input"]["file_path"], "notes.txt", "{seen}");
    let response = seen["tool_response"].as_str().unwrap_or_default();
    assert!(response.contains("the quick brown fox"), "{seen}");
    assert!(seen["session_id"].is_string(), "{seen}");
    assert!(seen["cwd"].is_string(), "{seen}");
    let result = checked.requests[1].last_tool_result();
    assert!(result.contains("the quick brown fox"), "{result}");
    assert!(result.ends_with("\n\n[hook] checked"), "{result:?}");
}

/// A hook that fails, one that hangs past its timeout and a broken project file are each a
/// warning; the call still runs and the run still ends with the answer.
#[test]
fn broken_hooks_do_not_stop_the_loop() {
    let sandbox = Sandbox::new("hooks_broken");
    sandbox.write(".corecoder/hooks.json", "{ this is not json");
    let failing = script(&sandbox, "fail.sh", "echo 'it broke' >&2\nexit 1");
    let hanging = script(&sandbox, "hang.sh", "sleep 5");
    let config = json!({"PreToolUse": [
        {"matcher": "bash", "command": failing},
        {"matcher": "bash", "command": hanging, "timeout": 1},
    ]});
    let script = vec![bash("call_1", "touch ran.txt"), answer("all done")];
    // Trusted, so the broken project file is read (and found broken).
    let args = ["-p", "make a file", "--yes", "--trust-project"];
    let checked = check(&sandbox, config, script, &args);
    let out = &checked.out;
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("all done"), "{out:?}");
    assert!(sandbox.path("ran.txt").exists(), "{out:?}");
    assert!(out.stderr.contains("exited 1: it broke"), "{out:?}");
    assert!(out.stderr.contains("timed out after 1s"), "{out:?}");
    assert!(out.stderr.contains("hooks.json ignored"), "{out:?}");
    let result = checked.requests[1].last_tool_result();
    assert!(!result.contains("Blocked"), "{result}");
}

#[test]
fn user_prompt_submit_can_refuse() {
    let sandbox = Sandbox::new("hooks_prompt");
    let refuse = script(&sandbox, "refuse.sh", "echo 'not on a friday' >&2\nexit 2");
    let config = json!({"UserPromptSubmit": [{"command": refuse}]});
    let checked = check(&sandbox, config, vec![answer("never")], &["-p", "hi"]);
    let out = &checked.out;
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("a hook refused the prompt: not on a friday"),
        "{out:?}"
    );
    assert!(checked.requests.is_empty(), "{out:?}");
}

/// Claude Code's nested form, with its tool name `Bash`, from the project's file.
#[test]
fn claude_code_nested_form_matches_bash() {
    let sandbox = Sandbox::new("hooks_nested");
    let veto = script(
        &sandbox,
        "veto.sh",
        "echo 'from claude settings' >&2\nexit 2",
    );
    let nested = json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": veto}]},
    ]}});
    sandbox.write(".corecoder/hooks.json", &nested.to_string());
    let script = vec![bash("call_1", "touch ran.txt"), answer("fine")];
    let args = ["-p", "make a file", "--yes", "--trust-project"];
    let checked = check(&sandbox, json!({}), script, &args);
    assert_eq!(checked.out.code, 0, "{:?}", checked.out);
    let result = checked.requests[1].last_tool_result();
    assert_eq!(result, "Blocked by a hook: from claude settings");
    assert!(!sandbox.path("ran.txt").exists());
}

/// A hook that leaves a process in a session of its own (`setsid`) holding its stdout and
/// stderr: the hook's answer is still read, and the turn goes on when the hook ends, not when
/// the straggler lets go of the pipes 30 seconds later. (A reader thread per pipe would wait
/// for it; the poll-based runner stops reading after a short grace.)
#[test]
fn a_hook_leaving_a_setsid_child_on_its_pipes_does_not_hold_the_turn() {
    let sandbox = Sandbox::new("hooks_setsid");
    let pid_file = sandbox.path("straggler.pid");
    let body = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 30' &\necho 'held but answered' >&2\nexit 2",
        pid_file.display()
    );
    let veto = script(&sandbox, "veto.sh", &body);
    let config = json!({"PreToolUse": [{"matcher": "bash", "command": veto, "timeout": 20}]});
    let script = vec![bash("call_1", "touch ran.txt"), answer("ok, I will not")];
    let started = std::time::Instant::now();
    let checked = check(&sandbox, config, script, &["-p", "make a file", "--yes"]);
    let took = started.elapsed();
    // The straggler is ours to end: it leads its own session, so its pid is its group.
    if let Ok(pid) = std::fs::read_to_string(&pid_file) {
        let group = format!("-{}", pid.trim());
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &group])
            .status();
    }
    assert!(took < std::time::Duration::from_secs(15), "{took:?}");
    assert_eq!(checked.out.code, 0, "{:?}", checked.out);
    assert!(pid_file.exists(), "the straggler never started");
    let result = checked.requests[1].last_tool_result();
    assert_eq!(result, "Blocked by a hook: held but answered");
    assert!(!sandbox.path("ran.txt").exists(), "the vetoed command ran");
}
