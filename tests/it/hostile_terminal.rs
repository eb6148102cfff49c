//! A provider (or a saved session) that sends terminal escapes where the binary prints text
//! that is not the answer: the reasoning, an error body, a tool name in the cut-off notice, the
//! last answer of a resumed session, and the answer itself with `NO_COLOR` on a terminal. A
//! window title (OSC 0), a clipboard write (OSC 52), a cleared screen (CSI 2J) and the bell
//! must reach neither the terminal (a pty, colour allowed and not; `-p` and the REPL) nor a
//! piped stderr: each escape shows as `?`. stdout in a pipe stays the model's bytes (it is data
//! for a program).

use crate::driver::{Repl, WAIT};
use crate::pty::Pty;
use crate::run::{Output, Sandbox, run, run_with};
use crate::server::{Reply, Server};
use crate::sse;
use serde_json::json;

/// A window title, a clipboard write, a cleared screen, a cursor move, the bell.
const HOSTILE: &str = "t\x1b]0;pwned\x07 c\x1b]52;c;aGk=\x07 w\x1b[2J\x1b[H b\x1b\\";

/// What must not reach a terminal. (The renderer's own styles and the spinner's erase are
/// escapes too, so the test looks for the hostile ones, not for every ESC.)
const ATTACKS: [&str; 5] = ["\x1b]0;", "\x1b]52;", "\x1b[2J", "\x1b[H", "\x07"];

fn assert_held(raw: &str, what: &str) {
    for attack in ATTACKS {
        assert!(!raw.contains(attack), "{what}: {attack:?} reached: {raw:?}");
    }
}

/// Run `args` on a pty against `script`, colour allowed (`NO_COLOR` = `no_color`); the raw
/// bytes the terminal received, once the run has ended.
fn on_a_terminal(name: &str, args: &[&str], script: Vec<Reply>, no_color: &str) -> String {
    let sandbox = Sandbox::new(&format!("hostile_terminal_{name}"));
    on_a_terminal_in(&sandbox, args, script, no_color)
}

fn on_a_terminal_in(sandbox: &Sandbox, args: &[&str], script: Vec<Reply>, nc: &str) -> String {
    let server = Server::start(script);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
        ("NO_COLOR", nc),
    ];
    let mut pty = Pty::spawn(args, &env, sandbox);
    let code = pty.wait_exit(WAIT);
    assert!(code.is_some(), "did not end: {}", pty.screen());
    // The last line the binary prints (the cost, or the error after it) has been read.
    let last = if code == Some(0) {
        "tokens:"
    } else {
        "corecoder:"
    };
    pty.expect(last, WAIT)
        .unwrap_or_else(|screen| panic!("{screen}"));
    String::from_utf8_lossy(&pty.raw()).into_owned()
}

/// The same run with stdout and stderr piped: stderr is for a person and holds no ESC at all.
fn piped(name: &str, args: &[&str], script: Vec<Reply>) -> Output {
    let sandbox = Sandbox::new(&format!("hostile_terminal_{name}_piped"));
    let out = run(args, &Server::start(script), &sandbox);
    assert!(!out.stderr.contains('\x1b'), "stderr: {out:?}");
    assert!(!out.stderr.contains('\x07'), "stderr: {out:?}");
    out
}

/// Reasoning is printed on stderr, dimmed: its escapes are shown as `?`.
#[test]
fn reasoning_escapes_never_reach_the_terminal() {
    let reply =
        || sse::role() + &sse::reasoning(HOSTILE) + &sse::content("done") + &sse::finish("stop");
    let reply = move || Reply::Sse(reply() + &sse::usage(10, 5) + &sse::done());
    for no_color in ["", "1"] {
        let raw = on_a_terminal("reasoning", &["-p", "go"], vec![reply()], no_color);
        assert!(raw.contains("t?]0;pwned? c?]52;c;aGk=?"), "{raw:?}");
        assert_held(&raw, "reasoning");
    }
    let out = piped("reasoning", &["-p", "go"], vec![reply()]);
    assert_eq!(out.stdout, "done\n", "{out:?}");
}

/// A provider's error body is printed by the binary's last line (`corecoder: …`).
#[test]
fn an_error_body_with_escapes_never_reaches_the_terminal() {
    let error = || Reply::error(400, &format!("bad {HOSTILE}"));
    for no_color in ["", "1"] {
        let raw = on_a_terminal("error", &["-p", "go"], vec![error()], no_color);
        assert!(raw.contains("bad t?]0;pwned?"), "{raw:?}");
        assert_held(&raw, "error body");
    }
    let out = piped("error", &["-p", "go"], vec![error()]);
    assert_eq!(out.code, 1, "{out:?}");
}

/// A validator's first refused field is put on a line of its own (`provider_errors.rs`): its
/// name and reason are the server's, so they are held like the rest of the body.
#[test]
fn a_validators_field_with_escapes_never_reaches_the_terminal() {
    let detail = json!({"detail": [{"loc": ["body", format!("f{HOSTILE}")], "msg": HOSTILE}]});
    let error = || Reply::Status {
        code: 422,
        headers: vec![],
        body: detail.to_string(),
    };
    for no_color in ["", "1"] {
        let raw = on_a_terminal("validator", &["-p", "go"], vec![error()], no_color);
        assert!(raw.contains("ft?]0;pwned?"), "{raw:?}");
        assert_held(&raw, "a validator's field");
    }
    let out = piped("validator", &["-p", "go"], vec![error()]);
    assert_eq!(out.code, 1, "{out:?}");
}

/// A call cut by the output limit is named in a notice: its name is the model's.
#[test]
fn a_cut_off_calls_name_never_reaches_the_terminal() {
    let name = format!("x{HOSTILE}");
    let cut = || {
        let call = sse::call_start(0, "c1", &name) + &sse::call_args(0, "{\"a\":\"unfini");
        Reply::Sse(sse::role() + &call + &sse::finish("length") + &sse::done())
    };
    let script = || vec![cut(), Reply::Sse(sse::text("stopped"))];
    for no_color in ["", "1"] {
        let raw = on_a_terminal("cut_name", &["-p", "go", "--yes"], script(), no_color);
        assert!(raw.contains("not run, the reply hit the output"), "{raw:?}");
        assert_held(&raw, "cut-off notice");
    }
    piped("cut_name", &["-p", "go", "--yes"], script());
}

/// A session whose last answer holds escapes: `-c` shows where it left off, as `?`.
#[test]
fn a_resumed_sessions_last_answer_never_reaches_the_terminal() {
    let sandbox = Sandbox::new("hostile_terminal_resume");
    let server = Server::start(vec![Reply::Sse(sse::text(&format!("ans {HOSTILE}")))]);
    let first = run(&["-p", "first"], &server, &sandbox);
    assert_eq!(first.code, 0, "{first:?}");
    let sessions = std::fs::read_dir(sandbox.home.join(".corecoder/sessions")).expect("sessions");
    let path = sessions
        .filter_map(Result::ok)
        .next()
        .expect("the saved session")
        .path();
    let id = path
        .file_stem()
        .expect("a name")
        .to_string_lossy()
        .into_owned();
    let again = ["-r", id.as_str(), "-p", "again"];
    for no_color in ["", "1"] {
        let script = vec![Reply::Sse(sse::text("resumed"))];
        // Each resume adds to the session: its last answer is now "resumed"; put it back.
        let saved = std::fs::read(&path).expect("the session file");
        let raw = on_a_terminal_in(&sandbox, &again, script, no_color);
        std::fs::write(&path, saved).expect("restore the session");
        assert!(raw.contains("answer: ans t?]0;pwned?"), "{raw:?}");
        assert_held(&raw, "resumed answer");
    }
    let url = Server::start(vec![Reply::Sse(sse::text("resumed"))]).url();
    let env = [("CORECODER_API_KEY", "sk-test"), ("OPENAI_BASE_URL", &url)];
    let out = run_with(&again, &env, &sandbox);
    assert!(out.stderr.contains("answer: ans t?]0;pwned?"), "{out:?}");
    assert!(!out.stderr.contains('\x1b'), "{out:?}");
}

/// With `NO_COLOR` on a terminal the answer is not drawn, but it is still a terminal: the
/// escapes are `?`. In a pipe the answer is the model's bytes.
#[test]
fn with_no_color_the_answers_escapes_never_reach_the_terminal() {
    let answer = || Reply::Sse(sse::text(&format!("ans {HOSTILE}")));
    let raw = on_a_terminal("no_color", &["-p", "go"], vec![answer()], "1");
    assert!(raw.contains("ans t?]0;pwned?"), "{raw:?}");
    assert_held(&raw, "answer with NO_COLOR");
    let out = piped("no_color", &["-p", "go"], vec![answer()]);
    assert_eq!(out.stdout, format!("ans {HOSTILE}\n"), "{out:?}");
}

/// The interactive session prints the same things the same way: reasoning, a tool's name, an
/// error body (after the turn), each with its escapes as `?`; the session goes on.
#[test]
fn in_the_repl_nothing_a_provider_sends_reaches_the_terminal_raw() {
    let sandbox = Sandbox::new("hostile_terminal_repl");
    let reasoning = sse::role() + &sse::reasoning(HOSTILE) + &sse::content("thought\n");
    let reasoning = reasoning + &sse::finish("stop") + &sse::done();
    let name = format!("x{HOSTILE}");
    let script = vec![
        Reply::Sse(reasoning),
        Reply::Sse(sse::tool_calls(&[("c1", &name, serde_json::json!({}))])),
        Reply::Sse(sse::text("called")),
        Reply::error(400, &format!("bad {HOSTILE}")),
    ];
    for no_color in ["", "1"] {
        let server = Server::start(script_copy(&script));
        let mut repl = Repl::start_with_env(&sandbox, &[], server, &[("NO_COLOR", no_color)]);
        repl.turn("think", "thought");
        repl.turn("call", "called");
        repl.turn("fail", "bad t?]0;pwned?");
        let raw = String::from_utf8_lossy(&repl.pty.raw()).into_owned();
        assert!(raw.contains("t?]0;pwned? c?]52;c;aGk=?"), "{raw:?}");
        assert_held(&raw, "the REPL");
    }
}

/// The script again (a `Reply` is not `Clone`): every reply here is a stream or an error.
fn script_copy(script: &[Reply]) -> Vec<Reply> {
    let copy = |reply: &Reply| match reply {
        Reply::Sse(body) => Reply::Sse(body.clone()),
        Reply::Status {
            code,
            headers,
            body,
        } => Reply::Status {
            code: *code,
            headers: headers.clone(),
            body: body.clone(),
        },
        _ => unreachable!("only streams and errors here"),
    };
    script.iter().map(copy).collect()
}
