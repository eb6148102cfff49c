//! Careless settings and terminals (issue 30): an out-of-range number, an empty model or key,
//! a `HOME` that is not there, a long flag given one dash, `--demo` with a task, a server that
//! is not running or a host that does not exist, `TERM=dumb`, and Esc+Enter at the prompt.
//! Each is answered at once, with a message naming the setting and what it accepts.
//!
//! Runs the real binary (on a pipe, or on a pty where a terminal is the point) against the
//! loopback scripted server; nothing of corecoder's code is called.

use crate::driver::{Repl, WAIT};
use crate::pty::Pty;
use crate::run::{Output, Sandbox, finish, run, run_with};
use crate::server::{Reply, Server};
use crate::sse;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A careless run: the variables, the flags, and what stderr must say.
type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str], &'a str);

/// Each setting out of its range is exit 2 with a message naming the setting and the range,
/// before any request; the values at the edges of the ranges are accepted.
#[test]
fn out_of_range_settings_are_usage_errors_before_any_request() {
    let sandbox = Sandbox::new("careless_ranges");
    let server = Server::start(vec![Reply::Sse(sse::text("at the edges"))]);
    let url = server.url();
    let base = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let cases: [Case; 7] = [
        (
            &[("CORECODER_MAX_TOKENS", "0")],
            &[],
            "CORECODER_MAX_TOKENS: '0' is out of range: it must be at least 1",
        ),
        (
            &[("CORECODER_TEMPERATURE", "5")],
            &[],
            "CORECODER_TEMPERATURE: '5' is out of range: it must be between 0 and 2",
        ),
        (
            &[("CORECODER_TEMPERATURE", "NaN")],
            &[],
            "CORECODER_TEMPERATURE: 'NaN' is out of range: it must be between 0 and 2",
        ),
        (
            &[("CORECODER_MAX_CONTEXT", "10")],
            &[],
            "CORECODER_MAX_CONTEXT: '10' is out of range: it must be at least 4096",
        ),
        (&[], &["--model", ""], "--model: the model name is empty"),
        (&[], &["-m", "  "], "--model: the model name is empty"),
        (&[], &["--api-key", ""], "--api-key: the key is empty"),
    ];
    for (vars, flags, said) in cases {
        let mut env = base.to_vec();
        env.extend_from_slice(vars);
        let mut args = vec!["-p", "go"];
        args.extend_from_slice(flags);
        let out = run_with(&args, &env, &sandbox);
        assert_eq!(out.code, 2, "{vars:?} {flags:?}: {out:?}");
        assert!(out.stderr.contains(said), "{said:?}: {out:?}");
    }
    assert!(server.requests().is_empty(), "nothing was sent");
    let mut env = base.to_vec();
    env.extend_from_slice(&[
        ("CORECODER_MAX_TOKENS", "1"),
        ("CORECODER_TEMPERATURE", "2"),
        ("CORECODER_MAX_CONTEXT", "4096"),
    ]);
    let out = run_with(&["-p", "go"], &env, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let body = &server.requests()[0].body;
    assert_eq!(
        (&body["max_tokens"], &body["temperature"]),
        (&1.into(), &2.0.into())
    );
}

/// The binary with exactly `env` (plus `PATH`) and no `HOME` unless `env` gives one.
fn without_home(args: &[&str], env: &[(&str, &str)], sandbox: &Sandbox) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_corecoder"));
    command
        .args(args)
        .current_dir(&sandbox.dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    finish(command.spawn().expect("start the corecoder binary"))
}

/// A `HOME` that is unset, empty, relative or missing is refused (exit 2, naming it), before
/// anything is written: no home is created, and the password file's is not used unseen.
#[test]
fn a_home_that_is_not_there_is_refused_and_never_created() {
    let sandbox = Sandbox::new("careless_home");
    let server = Server::start(vec![Reply::Sse(sse::text("never"))]);
    let url = server.url();
    let missing = sandbox.home.join("no/such/home");
    let missing = missing.to_str().expect("UTF-8");
    let said_missing = format!("HOME '{missing}' does not exist or is not a directory");
    let cases: [(Option<&str>, &str); 4] = [
        (None, "HOME is not set"),
        (Some(""), "HOME is empty"),
        (
            Some("relative/dir"),
            "HOME 'relative/dir' is not an absolute path",
        ),
        (Some(missing), &said_missing),
    ];
    for (home, said) in cases {
        let mut env = vec![
            ("CORECODER_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", url.as_str()),
        ];
        env.extend(home.map(|home| ("HOME", home)));
        let out = without_home(&["-p", "go"], &env, &sandbox);
        assert_eq!(out.code, 2, "{home:?}: {out:?}");
        assert!(out.stderr.contains(said), "{said:?}: {out:?}");
        assert!(
            out.stderr.contains("set HOME to your home directory"),
            "{out:?}"
        );
    }
    assert!(
        !sandbox.home.join("no").exists(),
        "the missing home was created"
    );
    assert!(
        !sandbox.path("relative").exists(),
        "the relative home was created"
    );
    assert!(server.requests().is_empty());
}

/// A long flag given one dash (`-yes`) is named with its two-dash form, not read as `-y -e -s`.
#[test]
fn a_long_flag_with_one_dash_suggests_two() {
    let sandbox = Sandbox::new("careless_one_dash");
    let server = Server::start(vec![Reply::Sse(sse::text("never"))]);
    let cases = [
        (
            &["-p", "go", "-yes"][..],
            "'-yes': a long option takes two dashes: --yes",
        ),
        (
            &["-model", "x", "-p", "go"][..],
            "'-model': a long option takes two dashes: --model",
        ),
        (
            &["-max-rounds=3", "-p", "go"][..],
            "'-max-rounds=3': a long option takes two dashes: --max-rounds",
        ),
    ];
    for (args, said) in cases {
        let out = run(args, &server, &sandbox);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(out.stderr.contains(said), "{said:?}: {out:?}");
    }
    // A task that starts with a dash is still a task.
    let server = Server::start(vec![Reply::Sse(sse::text("done"))]);
    let out = run(&["-p", "-yes is a word here"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(server.requests().len() == 1);
}

/// `--demo` runs its own offline task: with `-p` (or `-r`, `-c`) it is a usage error, not a
/// flag silently dropped.
#[test]
fn the_demo_with_a_task_is_a_usage_error() {
    let sandbox = Sandbox::new("careless_demo");
    for args in [&["--demo", "-p", "hi"][..], &["-c", "--demo"][..]] {
        let out = run_with(args, &[], &sandbox);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        let said = "--demo runs its own offline task: not with -p, -r or -c";
        assert!(out.stderr.contains(said), "{out:?}");
    }
}

/// Nothing listening on loopback (a local server not started) and a host the resolver does
/// not know are reported at once, not retried for 15 s. (`-x.y` is refused by the resolver
/// itself, so no query leaves the machine.)
#[test]
fn a_closed_local_port_and_an_unknown_host_fail_at_once() {
    let sandbox = Sandbox::new("careless_unreachable");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let refused = format!("http://127.0.0.1:{port}/v1");
    let refused_said = format!("request to 127.0.0.1:{port} failed");
    let cases = [
        (
            refused.as_str(),
            refused_said.as_str(),
            "is the server running?",
        ),
        (
            "http://-x.y/v1",
            "request to -x.y:80 failed",
            "no such host: check the base URL",
        ),
    ];
    for (url, failed, hint) in cases {
        let env = [("CORECODER_API_KEY", "sk-test"), ("OPENAI_BASE_URL", url)];
        let started = Instant::now();
        let out = run_with(&["-p", "go"], &env, &sandbox);
        let took = started.elapsed();
        assert_eq!(out.code, 1, "{out:?}");
        assert!(
            out.stderr.contains(failed) && out.stderr.contains(hint),
            "{out:?}"
        );
        assert!(!out.stderr.contains("[retry"), "{out:?}");
        assert!(took < Duration::from_secs(5), "took {took:?}: {out:?}");
    }
}

/// An answer drawn as Markdown, a tool line and a preview, after a wait long enough for the
/// spinner: everything that is painted or drawn when colour is allowed.
fn painted_script() -> Vec<Reply> {
    let read = serde_json::json!({"file_path": "notes.txt"});
    let answer = sse::content("# Title\n**bold** and `code`\n") + &sse::finish("stop");
    vec![
        Reply::Sse(sse::tool_calls(&[("c1", "read_file", read)])),
        Reply::SseSlowTail {
            head: sse::role(),
            tail: vec![answer, sse::done()],
            pause_ms: 1200,
        },
    ]
}

/// `-p` on a terminal with colour allowed (`NO_COLOR` empty): the raw bytes it printed.
fn one_task_on_a_terminal(sandbox: &Sandbox, term: &str) -> String {
    let server = Server::start(painted_script());
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
        ("NO_COLOR", ""),
        ("TERM", term),
    ];
    let mut pty = Pty::spawn(&["-p", "go"], &env, sandbox);
    assert_eq!(pty.wait_exit(WAIT), Some(0), "{}", pty.screen());
    pty.expect("tokens:", WAIT)
        .unwrap_or_else(|screen| panic!("{screen}"));
    String::from_utf8_lossy(&pty.raw()).into_owned()
}

/// `TERM=dumb` is a terminal that knows no escape sequences: as with `NO_COLOR`, no colour, no
/// drawing and no spinner, in `-p` and in the interactive session. (With `TERM=xterm` the same
/// run is painted, so the test can see escapes when they come.)
#[test]
fn term_dumb_gets_no_escape_sequences() {
    let sandbox = Sandbox::new("careless_dumb");
    sandbox.write("notes.txt", "a note\n");
    let painted = one_task_on_a_terminal(&sandbox, "xterm");
    assert!(painted.contains('\x1b'), "{painted:?}");
    let plain = one_task_on_a_terminal(&sandbox, "dumb");
    assert!(!plain.contains('\x1b'), "{plain:?}");
    assert!(plain.contains("**bold** and `code`"), "{plain:?}");
    let server = Server::start(painted_script());
    let more = [("NO_COLOR", ""), ("TERM", "dumb")];
    let mut repl = Repl::start_with_env(&sandbox, &[], server, &more);
    repl.turn("go", "**bold** and `code`");
    let raw = String::from_utf8_lossy(&repl.pty.raw()).into_owned();
    assert!(!raw.contains('\x1b'), "{raw:?}");
}

/// Esc+Enter (Alt+Enter) at the prompt starts a new line of the same message, as `\` does.
#[test]
fn esc_enter_inserts_a_newline() {
    let sandbox = Sandbox::new("careless_esc_enter");
    let mut repl = Repl::start(&sandbox, &[], vec![Reply::Sse(sse::text("got both"))]);
    repl.pty.send("first line");
    repl.pty.send("\x1b\r");
    repl.enter("second line");
    repl.expect("got both");
    let request = &repl.requests(1)[0];
    let messages = request.messages();
    let last = messages.last().expect("a message");
    assert_eq!(
        last["content"],
        "first line\nsecond line",
        "{}",
        repl.pty.screen()
    );
}
