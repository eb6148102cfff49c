//! Shell safety through the binary: bash never sees secret-looking variables, and
//! `--sandbox` (Landlock) keeps its writes inside the working and temp directories, or off
//! the disk altogether. The sandbox tests skip, saying so on the terminal, where the kernel has no Landlock.
//! The escapes a prompt-injected model would try (moving the sandbox with `cd`, writing with
//! `write_file` instead, symlinks, metadata changes) are in `escape.rs`.

use crate::run::{Output, Sandbox, run_with};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::io::Write;

/// Run `-p go --yes` plus `flags` with `env` (and the server's URL); the model makes one
/// bash call, then answers. Returns the bash result the model read.
pub fn bash_once(sandbox: &Sandbox, flags: &[&str], env: &[(&str, &str)], command: &str) -> String {
    let results = calls_in_turn(
        sandbox,
        flags,
        env,
        &[("bash", json!({"command": command}))],
    );
    results[0].clone()
}

/// Like `bash_once`, with one tool call per round, in order (so each `cd` has taken effect
/// before the next call). Returns the result of each call, as the model read it.
pub fn calls_in_turn(
    sandbox: &Sandbox,
    flags: &[&str],
    env: &[(&str, &str)],
    calls: &[(&str, Value)],
) -> Vec<String> {
    let mut script: Vec<Reply> = (calls.iter().enumerate())
        .map(|(i, (name, args))| {
            let id = format!("call_{i}");
            Reply::Sse(sse::tool_calls(&[(id.as_str(), *name, args.clone())]))
        })
        .collect();
    script.push(Reply::Sse(sse::text("done")));
    let server = Server::start(script);
    let url = server.url();
    let mut full_env = vec![("OPENAI_BASE_URL", url.as_str())];
    full_env.extend_from_slice(env);
    let mut args = vec!["-p", "go", "--yes"];
    args.extend_from_slice(flags);
    let output: Output = run_with(&args, &full_env, sandbox);
    let requests: Vec<Recorded> = server.requests();
    assert_eq!(output.code, 0, "{output:?}");
    assert_eq!(requests.len(), calls.len() + 1, "{output:?}");
    let results = requests[calls.len()].tool_results();
    results.into_iter().map(|(_, text)| text).collect()
}

/// Does this kernel offer Landlock? Asked as the `landlock` crate asks: the ABI version call. If
/// not, `test` is skipped and says so straight on stderr: libtest captures `eprintln!` of a
/// passing test, and a skip reported as a plain `ok` must not pass for a sandbox that works.
/// `CORECODER_REQUIRE_LANDLOCK=1` (for machines that must have it) fails the test instead.
pub fn landlock_available(test: &str) -> bool {
    let null = std::ptr::null::<u64>();
    // SAFETY: with the VERSION flag (1) the kernel reads no memory and returns a number.
    let version = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, null, 0usize, 1u32) };
    if version <= 0 {
        let why = "this kernel has no Landlock, so --sandbox cannot be tested here";
        assert!(
            std::env::var("CORECODER_REQUIRE_LANDLOCK").as_deref() != Ok("1"),
            "{test}: {why}"
        );
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
    }
    version > 0
}

/// A sandbox with its own temp dir (`TMPDIR`) and a directory outside both it and the
/// working directory (the usual temp dir holds the sandbox, so it cannot be the outside).
pub fn with_outside(name: &str) -> (Sandbox, String, String) {
    let sandbox = Sandbox::new(name);
    let root = sandbox.home.clone();
    let (tmp, outside) = (root.join("tmp"), root.join("outside"));
    std::fs::create_dir_all(&tmp).expect("create tmp");
    std::fs::create_dir_all(&outside).expect("create outside");
    let text = |p: std::path::PathBuf| p.display().to_string();
    (sandbox, text(tmp), text(outside))
}

#[test]
fn env_in_bash_shows_no_api_key() {
    let sandbox = Sandbox::new("safety_env");
    let env = [("OPENAI_API_KEY", "sk-test-secret"), ("MY_TOKEN", "x")];
    let result = bash_once(&sandbox, &[], &env, "env");
    assert!(!result.contains("sk-test-secret"), "{result}");
    assert!(!result.contains("MY_TOKEN"), "{result}");
    assert!(result.contains("PATH="), "{result}");
}

#[test]
fn env_allow_lets_a_named_variable_through() {
    let sandbox = Sandbox::new("safety_env_allow");
    let env = [
        ("OPENAI_API_KEY", "sk-test-secret"),
        ("MY_TOKEN", "shown"),
        ("CORECODER_ENV_ALLOW", "MY_TOKEN"),
    ];
    let result = bash_once(&sandbox, &[], &env, "env");
    assert!(result.contains("MY_TOKEN=shown"), "{result}");
    assert!(!result.contains("sk-test-secret"), "{result}");
}

#[test]
fn workspace_write_sandbox_refuses_a_write_outside() {
    if !landlock_available("safety::workspace_write_sandbox_refuses_a_write_outside") {
        return;
    }
    let (sandbox, tmp, outside) = with_outside("safety_workspace");
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    let command = format!(
        "touch {outside}/x; touch inside.txt; touch {tmp}/t; echo quiet > /dev/null && echo ok"
    );
    let flags = ["--sandbox", "workspace-write"];
    let result = bash_once(&sandbox, &flags, &env, &command);
    assert!(result.contains("Permission denied"), "{result}");
    assert!(result.contains("ok"), "{result}");
    assert!(!std::path::Path::new(&outside).join("x").exists());
    assert!(sandbox.path("inside.txt").exists(), "{result}");
    assert!(std::path::Path::new(&tmp).join("t").exists(), "{result}");
}

#[test]
fn read_only_sandbox_refuses_any_write() {
    if !landlock_available("safety::read_only_sandbox_refuses_any_write") {
        return;
    }
    let (sandbox, tmp, _) = with_outside("safety_read_only");
    sandbox.write("kept.txt", "original\n");
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    let command = format!(
        "touch inside.txt; touch {tmp}/t; echo new > kept.txt; rm kept.txt; \
         cat kept.txt; echo quiet > /dev/null && echo ok"
    );
    let result = bash_once(&sandbox, &["--sandbox", "read-only"], &env, &command);
    assert!(result.contains("Permission denied"), "{result}");
    assert!(result.contains("original\nok"), "{result}");
    assert!(!sandbox.path("inside.txt").exists(), "{result}");
    assert!(!std::path::Path::new(&tmp).join("t").exists(), "{result}");
    assert_eq!(sandbox.read("kept.txt"), "original\n");
}

#[test]
fn sandbox_flag_rejects_bad_values() {
    let sandbox = Sandbox::new("safety_bad_flag");
    let output = run_with(&["--sandbox", "bogus"], &[], &sandbox);
    assert_eq!(output.code, 2, "{output:?}");
    assert!(output.stderr.contains("--sandbox"), "{output:?}");
    assert!(output.stderr.contains("workspace-write"), "{output:?}");
    let output = run_with(&[], &[("CORECODER_SANDBOX", "on")], &sandbox);
    assert_eq!(output.code, 2, "{output:?}");
    assert!(output.stderr.contains("CORECODER_SANDBOX"), "{output:?}");
}
