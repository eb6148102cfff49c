//! Careless input a newcomer gives, each answered with a clear message and exit code 2 before
//! anything is spent; and the task read from stdin (`-p -`, or piped context after `-p TEXT`).

use crate::run::{Sandbox, finish, run, run_with_stdin, spawn_with};
use crate::server::{Reply, Server};
use crate::sse;
use std::time::Duration;

/// `-p ""`, `-p "   "`, `--max-rounds 0` and `--output-format` without `-p` are usage errors:
/// exit 2, a message naming the flag, and no request sent.
#[test]
fn careless_flags_are_usage_errors_before_any_request() {
    let sandbox = Sandbox::new("newcomer_flags");
    let server = Server::start(vec![Reply::Sse(sse::text("should not be asked"))]);
    let cases: [(&[&str], &str); 4] = [
        (&["-p", ""], "-p: the task is empty"),
        (&["-p", "  \n "], "-p: the task is empty"),
        (
            &["-p", "go", "--max-rounds", "0"],
            "--max-rounds: must be at least 1",
        ),
        (
            &["--output-format", "json"],
            "--output-format works only with -p",
        ),
    ];
    for (args, said) in cases {
        let out = run(args, &server, &sandbox);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(out.stderr.contains(said), "{args:?}: {out:?}");
    }
    assert!(server.requests().is_empty(), "nothing was paid for");
}

/// `-p -` takes the whole task from stdin, past what a command line can hold (256 KiB here).
#[test]
fn the_task_can_come_from_stdin() {
    let sandbox = Sandbox::new("newcomer_stdin_task");
    let server = Server::start(vec![Reply::Sse(sse::text("done"))]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let task = format!(
        "summarise this:\n{}",
        "a long line of the task\n".repeat(11_000)
    );
    let out = run_with_stdin(&["-p", "-"], &env, &sandbox, &task);
    assert_eq!(out.code, 0, "{out:?}");
    let requests = server.requests();
    let last_user = &requests[0].messages()[1];
    assert_eq!(last_user["content"], task.as_str());
    let empty = run_with_stdin(&["-p", "-"], &env, &sandbox, "  \n");
    assert_eq!(empty.code, 2, "{empty:?}");
    assert!(empty.stderr.contains("stdin held no task"), "{empty:?}");
}

/// `git diff | corecoder -p "review this"`: the piped text follows the task.
#[test]
fn piped_stdin_is_context_after_the_task() {
    let sandbox = Sandbox::new("newcomer_stdin_context");
    let server = Server::start(vec![Reply::Sse(sse::text("reviewed"))]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n";
    let out = run_with_stdin(&["-p", "review this"], &env, &sandbox, diff);
    assert_eq!(out.code, 0, "{out:?}");
    let content = server.requests()[0].messages()[1]["content"].clone();
    assert_eq!(content, format!("review this\n\n{diff}").as_str());
    // No stdin at all (the harness gives /dev/null): the task alone.
    let server = Server::start(vec![Reply::Sse(sse::text("ok"))]);
    let out = run(&["-p", "just this"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(server.requests()[0].messages()[1]["content"], "just this");
}

/// Ctrl+C during a piped `-p` run: the part of the answer that arrived still reaches stdout.
#[test]
fn an_interrupted_piped_run_keeps_its_partial_answer() {
    let sandbox = Sandbox::new("newcomer_partial");
    let head = sse::role() + &sse::content("the first half of the answer");
    let server = Server::start(vec![Reply::SseThenStall {
        body: head,
        ms: 30_000,
    }]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let child = spawn_with(&["-p", "hello"], &env, &sandbox);
    assert!(server.wait_for_requests(1, Duration::from_secs(20)));
    // Time for the first half to arrive and be read.
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: `child` is our own, still unreaped.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = finish(child);
    assert_eq!(out.code, 130, "{out:?}");
    assert_eq!(out.stdout, "the first half of the answer\n", "{out:?}");
}

/// Without colour (here: stderr is a pipe), reasoning is marked, so it is not mistaken for
/// the answer.
#[test]
fn reasoning_without_colour_is_marked() {
    let sandbox = Sandbox::new("newcomer_reasoning");
    let body = sse::role()
        + &sse::reasoning("let me think")
        + &sse::content("42")
        + &sse::finish("stop")
        + &sse::done();
    let server = Server::start(vec![Reply::Sse(body)]);
    let out = run(&["-p", "go"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("[reasoning] let me think"), "{out:?}");
    assert_eq!(out.stdout, "42\n");
}

/// In `-p`, a refused call and a failed one each get one short line under their call line,
/// and `stream-json` marks them `is_error`.
#[test]
fn refused_and_failed_calls_say_so_in_one_line() {
    let sandbox = Sandbox::new("newcomer_refused");
    let calls = sse::tool_calls(&[
        (
            "c1",
            "edit_file",
            serde_json::json!({"file_path": "calc.py", "old_string": "a", "new_string": "b"}),
        ),
        (
            "c2",
            "read_file",
            serde_json::json!({"file_path": "missing.txt"}),
        ),
    ]);
    let script = || vec![Reply::Sse(calls.clone()), Reply::Sse(sse::text("stopped"))];
    let server = Server::start(script());
    let out = run(&["-p", "go"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let said = |start: &str| out.stderr.lines().any(|line| line.starts_with(start));
    assert!(said("  ↳ edit_file(calc.py): Refused:"), "{out:?}");
    assert!(said("  ↳ read_file(missing.txt): Error"), "{out:?}");
    let server = Server::start(script());
    let out = run(
        &["-p", "go", "--output-format", "stream-json"],
        &server,
        &sandbox,
    );
    let results: Vec<serde_json::Value> = (out.stdout.lines())
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|v: &serde_json::Value| v["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2, "{out:?}");
    assert!(results.iter().all(|r| r["is_error"] == true), "{results:?}");
}

/// A base URL without `http://` or `https://` is a configuration error naming where it came
/// from and the value: exit 2, nothing sent, no zero-token summary.
#[test]
fn a_base_url_that_is_not_http_is_a_usage_error() {
    let sandbox = Sandbox::new("newcomer_base_url");
    let cases = [
        (
            &[("OPENAI_BASE_URL", "api.deepseek.com/v1")][..],
            &[][..],
            "OPENAI_BASE_URL: 'api.deepseek.com/v1'",
        ),
        (
            &[("CORECODER_BASE_URL", "ftp://example.org/v1")][..],
            &[][..],
            "CORECODER_BASE_URL: 'ftp://example.org/v1'",
        ),
        (
            &[][..],
            &["--base-url", "localhost:8080"][..],
            "--base-url: 'localhost:8080'",
        ),
    ];
    for (vars, flags, said) in cases {
        let mut env = vec![("CORECODER_API_KEY", "sk-test")];
        env.extend_from_slice(vars);
        let mut args = vec!["-p", "go"];
        args.extend_from_slice(flags);
        let out = crate::run::run_with(&args, &env, &sandbox);
        assert_eq!(out.code, 2, "{out:?}");
        assert!(out.stderr.contains(said), "{out:?}");
        assert!(
            !out.stderr.contains("tokens:"),
            "no summary of nothing: {out:?}"
        );
    }
}

/// Error messages name what to check: a 404 the URL and model tried, a 401 where the key came
/// from (a variable, or a variable of `.env`), a failed connection the host.
#[test]
fn api_errors_name_what_to_check() {
    let sandbox = Sandbox::new("newcomer_api_errors");
    let server = Server::start(vec![Reply::error(404, "no such model")]);
    let out = run(&["-p", "go", "-m", "gpt-9"], &server, &sandbox);
    assert_eq!(out.code, 1, "{out:?}");
    let tried = format!("POST {}/chat/completions, model gpt-9", server.url());
    assert!(out.stderr.contains(&tried), "{out:?}");

    let server = Server::start(vec![Reply::error(401, "Incorrect API key provided")]);
    let url = server.url();
    let env = [
        ("OPENAI_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let out = crate::run::run_with(&["-p", "go"], &env, &sandbox);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("the API key from OPENAI_API_KEY was rejected by 127.0.0.1"),
        "{out:?}"
    );

    sandbox.write(".env", "DEEPSEEK_API_KEY=sk-test-from-file\n");
    let server = Server::start(vec![Reply::error(401, "Incorrect API key provided")]);
    let url = server.url();
    let out = crate::run::run_with(
        &["-p", "go", "--trust-project"],
        &[("OPENAI_BASE_URL", url.as_str())],
        &sandbox,
    );
    let from_file = format!(
        "the API key from DEEPSEEK_API_KEY in {}",
        sandbox.path(".env").display()
    );
    assert!(out.stderr.contains(&from_file), "{out:?}");
    std::fs::remove_file(sandbox.path(".env")).expect("remove .env");

    // A port nothing listens on (on loopback: a local server not started): named at once, not
    // retried (`careless::a_closed_local_port_and_an_unknown_host_fail_at_once` times it).
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let url = format!("http://127.0.0.1:{port}/v1");
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let out = crate::run::run_with(&["-p", "go"], &env, &sandbox);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains(&format!("request to 127.0.0.1:{port} failed")),
        "{out:?}"
    );
}

/// `.env` as python-dotenv reads it: `CORECODER_MODEL=gpt-4o # my default` is `gpt-4o`; a line
/// that is not `NAME=value`, or a file that is not UTF-8, is named in a warning.
#[test]
fn dotenv_comments_and_bad_lines() {
    let sandbox = Sandbox::new("newcomer_dotenv");
    sandbox.write(
        ".env",
        "CORECODER_MODEL=gpt-4o # my default\nthis is not a pair\n",
    );
    let server = Server::start(vec![Reply::Sse(sse::text("ok"))]);
    // The model is the project's choice only once it is trusted.
    let out = run(&["-p", "go", "--trust-project"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(server.requests()[0].body["model"], "gpt-4o");
    let warned = format!(
        "{}:2: not NAME=value; ignored",
        sandbox.path(".env").display()
    );
    assert!(out.stderr.contains(&warned), "{out:?}");
    std::fs::write(sandbox.path(".env"), b"CORECODER_MODEL=\xff\xfe\n").expect("write");
    let server = Server::start(vec![Reply::Sse(sse::text("ok"))]);
    let out = run(&["-p", "go"], &server, &sandbox);
    assert!(out.stderr.contains("not UTF-8 text; ignored"), "{out:?}");
}

/// `~/.corecoder` is made private (0700), and when sessions cannot be written the warning
/// names the path that failed.
#[test]
fn the_state_directory_is_private_and_failures_name_their_path() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new("newcomer_state_dir");
    let ok = || Reply::Sse(sse::text("ok"));
    let server = Server::start(vec![ok(), ok(), ok()]);
    let out = run(&["-p", "go"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let home = sandbox.home.join(".corecoder");
    let mode = |path: &std::path::Path| {
        std::fs::metadata(path)
            .expect("created")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(&home), 0o700);
    let sessions: Vec<_> = (std::fs::read_dir(home.join("sessions")).expect("sessions"))
        .flatten()
        .collect();
    assert_eq!(sessions.len(), 1);
    assert_eq!(mode(&sessions[0].path()), 0o600, "a session file");
    let out = run(&["-p", "go", "--trace", "t.jsonl"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(mode(&sandbox.path("t.jsonl")), 0o600, "a trace");
    // A file where the sessions directory should be: the session is not saved, and says where.
    std::fs::remove_dir_all(home.join("sessions")).expect("remove sessions");
    std::fs::write(home.join("sessions"), "not a directory").expect("write");
    let out = run(&["-p", "go"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let said = format!("cannot write in {}", home.join("sessions").display());
    assert!(out.stderr.contains(&said), "{out:?}");
}

/// `--help` names the default base URL and the files corecoder keeps under `~/.corecoder`.
#[test]
fn help_names_the_default_url_and_the_files() {
    let sandbox = Sandbox::new("newcomer_help");
    let out = crate::run::run_with(&["--help"], &[], &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let files = [
        "sessions/",
        "checkpoints/",
        "history",
        "permissions.json",
        "trusted.json",
    ];
    let more = [
        "pricing.json",
        "hooks.json",
        "mcp.json",
        "default https://api.openai.com/v1",
    ];
    for name in files.iter().chain(&more) {
        assert!(
            out.stdout.contains(name),
            "{name} not in --help:\n{}",
            out.stdout
        );
    }
    assert!(
        out.stdout.contains("Files in ~/.corecoder"),
        "{}",
        out.stdout
    );
}

/// stdin is read up to 16 MiB; past that the run is a usage error, before anything is sent.
#[test]
fn stdin_past_its_bound_is_refused() {
    let sandbox = Sandbox::new("newcomer_stdin_bound");
    let server = Server::start(vec![Reply::Sse(sse::text("never"))]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let huge = "x".repeat(17 << 20);
    let out = run_with_stdin(&["-p", "-"], &env, &sandbox, &huge);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("stdin is over 16 MiB"),
        "{}",
        out.stderr
    );
    assert!(server.requests().is_empty());
}
