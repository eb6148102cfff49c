//! The answer as Markdown on a terminal, and as the model's exact text everywhere else.
//!
//! One Markdown answer, streamed in deltas that split a `**` marker, a table and a fence, goes
//! to `-p` through a pipe (with and without `NO_COLOR`), as `--output-format json` and
//! `stream-json`, and on a pseudo-terminal with `NO_COLOR` set: every time the model's bytes
//! come out as they were sent (on the terminal, its control characters as `?`:
//! `hostile_terminal::with_no_color_the_answers_escapes_never_reach_the_terminal`). On a
//! terminal with colour allowed, in `-p` and in the REPL, the same answer is drawn: styles, an
//! aligned table, a fenced block, no Markdown markers left, and no escape sequence of the
//! model's own; while the first line is held, the spinner goes on, and a held line is drawn
//! before a tool call's line.

use crate::driver::{Repl, WAIT};
use crate::pty::Pty;
use crate::run::{Sandbox, run, run_with};
use crate::server::{Reply, Server};
use crate::sse;
use serde_json::Value;

/// The answer, in the deltas it streams as.
const DELTAS: [&str; 8] = [
    "# Plan\n\nUse **bo",
    "ld** and *it* and `a*b`; snake_case_name stays.\n\n| name | n |\n|---",
    "---|--:|\n| 漢字 | 1 |\n| x | 22 |\n\n```ru",
    "st\nlet x = 1; // *not* italic\n",
    "```\n- item [docs](https://x.dev)\n",
    "> quoted\n",
    "1. first\n",
    "THE **END**",
];

fn answer() -> String {
    DELTAS.concat()
}

/// A reply streaming `deltas`, one SSE event each.
fn stream(deltas: &[&str]) -> String {
    let body: String = deltas.iter().map(|delta| sse::content(delta)).collect();
    sse::role() + &body + &sse::finish("stop") + &sse::usage(100, 20) + &sse::done()
}

fn server() -> Server {
    Server::start(vec![Reply::Sse(stream(&DELTAS))])
}

/// The test key, the server's address, and `NO_COLOR` (empty lets colour through).
fn env<'a>(url: &'a str, no_color: &'a str) -> [(&'a str, &'a str); 3] {
    let key = ("CORECODER_API_KEY", "sk-test");
    [key, ("OPENAI_BASE_URL", url), ("NO_COLOR", no_color)]
}

#[test]
fn piped_output_is_the_models_text_byte_for_byte() {
    let sandbox = Sandbox::new("markdown_piped");
    let out = run(&["-p", "plan it"], &server(), &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        answer() + "\n",
        "only the newline that ends every answer"
    );
}

#[test]
fn no_color_keeps_the_models_text_in_a_pipe_and_on_a_terminal() {
    let sandbox = Sandbox::new("markdown_no_color");
    let (first, second) = (server(), server());
    let url = first.url();
    let out = run_with(&["-p", "plan it"], &env(&url, "1"), &sandbox);
    assert_eq!(out.stdout, answer() + "\n", "{out:?}");
    let url = second.url();
    let pty = on_a_terminal(&["-p", "plan it"], &env(&url, "1"), &sandbox, "END");
    let printed = raw(&pty).replace("\r\n", "\n");
    assert!(printed.contains(&answer()), "{printed:?}");
    assert!(!printed.contains("\x1b[1m"), "{printed:?}");
}

#[test]
fn json_output_carries_the_models_text_unchanged() {
    let sandbox = Sandbox::new("markdown_json");
    let out = run(
        &["-p", "go", "--output-format", "json"],
        &server(),
        &sandbox,
    );
    let result: Value = serde_json::from_str(out.stdout.trim()).expect("one JSON object");
    assert_eq!(result["result"], answer(), "{out:?}");
    let flags = ["-p", "go", "--output-format", "stream-json"];
    let out = run(&flags, &server(), &sandbox);
    let events = out
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON"));
    let texts: Vec<Value> = events.filter(|e: &Value| e["type"] == "text").collect();
    let streamed: String = texts.iter().filter_map(|e| e["text"].as_str()).collect();
    assert_eq!(streamed, answer());
}

/// `-p` on a pseudo-terminal until it exits (and `last` is on screen: the reader may still be
/// draining the terminal); everything it printed, stdout and stderr.
fn on_a_terminal(args: &[&str], env: &[(&str, &str)], sandbox: &Sandbox, last: &str) -> Pty {
    let mut pty = Pty::spawn(args, env, sandbox);
    assert_eq!(pty.wait_exit(WAIT), Some(0), "{}", pty.screen());
    pty.expect(last, WAIT)
        .unwrap_or_else(|screen| panic!("{screen}"));
    pty
}

fn raw(pty: &Pty) -> String {
    String::from_utf8_lossy(&pty.raw()).into_owned()
}

/// What `-p` and the REPL must both show of the answer, drawn.
fn assert_drawn(raw: &str, screen: &str) {
    let styled = [
        "\x1b[1;4mPlan\x1b[0m\r\n",
        "Use \x1b[1mbold\x1b[0m and \x1b[3mit\x1b[0m and \x1b[36ma*b\x1b[0m; snake_case_name",
        "THE \x1b[1mEND\x1b[0m",
    ];
    for expected in styled {
        assert!(raw.contains(expected), "{expected:?} not in {raw:?}");
    }
    let drawn = [
        "name │ n \n─────┼───\n漢字 │ 1 \nx    │ 22\n",
        "╭─ rust\n│ let x = 1; // *not* italic\n╰─\n",
        "• item docs (https://x.dev)\n│ quoted\n1. first\n",
    ];
    for expected in drawn {
        assert!(screen.contains(expected), "{expected:?} not in:\n{screen}");
    }
    assert!(
        !screen.contains("**") && !screen.contains("```"),
        "{screen}"
    );
}

#[test]
fn on_a_terminal_with_colour_the_answer_is_drawn() {
    let sandbox = Sandbox::new("markdown_drawn");
    let server = server();
    let url = server.url();
    let env = env(&url, "");
    let pty = on_a_terminal(&["-p", "plan it"], &env, &sandbox, "END");
    assert_drawn(&raw(&pty), &pty.screen());
}

/// A model that sends its own escape sequences (a window title, the clipboard, a cleared
/// screen) gets `?` for each escape character: only the renderer's styles reach the terminal.
#[test]
fn the_models_escape_sequences_never_reach_a_terminal_with_colour() {
    let sandbox = Sandbox::new("markdown_escapes");
    let hostile = "title\x1b]0;pwned\x07 clip\x1b]52;c;aGk=\x07 wipe\x1b[2J\x1b[H **done**\n";
    let server = Server::start(vec![Reply::Sse(stream(&[hostile]))]);
    let url = server.url();
    let env = env(&url, "");
    let raw = raw(&on_a_terminal(&["-p", "go"], &env, &sandbox, "done"));
    for attack in ["\x1b]0;", "\x1b]52;", "\x1b[2J", "\x1b[H", "\x07"] {
        assert!(
            !raw.contains(attack),
            "{attack:?} reached the terminal: {raw:?}"
        );
    }
    assert!(raw.contains("title?]0;pwned? clip?]52;c;aGk=? wipe?[2J?[H \x1b[1mdone"));
}

/// The REPL draws the same way, on the terminal it runs on.
#[test]
fn the_repl_draws_the_answer_too() {
    let sandbox = Sandbox::new("markdown_repl");
    let mut repl = Repl::start_with_env(&sandbox, &[], server(), &[("NO_COLOR", "")]);
    repl.turn("plan it", "END");
    assert_drawn(&raw(&repl.pty), &repl.pty.screen());
}

/// While a line is held (no newline yet), nothing of the answer is on screen: the spinner
/// that started with the request goes on meanwhile instead of stopping at the first delta.
#[test]
fn the_spinner_goes_on_while_the_first_line_is_held() {
    let sandbox = Sandbox::new("markdown_spinner");
    let head = sse::role() + &sse::content("a first line that takes its ti");
    let tail = stream(&["me\n"]);
    let tail = tail.strip_prefix(&sse::role()).unwrap_or(&tail).to_string();
    let server = Server::start(vec![Reply::SseSlowTail {
        head,
        tail: vec![tail],
        pause_ms: 1500,
    }]);
    let url = server.url();
    let pty = on_a_terminal(&["-p", "go"], &env(&url, ""), &sandbox, "takes its time");
    let raw = raw(&pty);
    let spun = raw.find("thinking").expect("the spinner was drawn");
    let drawn = raw.find("a first line").expect("the line was drawn");
    assert!(spun < drawn, "{raw:?}");
}

/// A held line is drawn before anything else is printed: the text before a tool call comes
/// before the call's line, styled, though its newline never came.
#[test]
fn a_held_line_is_drawn_before_the_tool_call_that_follows_it() {
    let sandbox = Sandbox::new("markdown_before_call");
    sandbox.write("a.txt", "alpha\n");
    let call =
        sse::call_start(0, "c1", "read_file") + &sse::call_args(0, r#"{"file_path":"a.txt"}"#);
    let first = sse::role() + &sse::content("Let me look at **a.txt**") + &call;
    let first = first + &sse::finish("tool_calls") + &sse::usage(10, 5) + &sse::done();
    let script = vec![Reply::Sse(first), Reply::Sse(sse::text("It says alpha."))];
    let server = Server::start(script);
    let mut repl = Repl::start_with_env(&sandbox, &[], server, &[("NO_COLOR", "")]);
    repl.turn("read a.txt", "It says alpha.");
    let raw = raw(&repl.pty);
    let said = raw
        .find("Let me look at \x1b[1ma.txt\x1b[0m\r\n")
        .expect("the held line, drawn");
    let called = raw.find("> read_file(").expect("the call's line");
    assert!(said < called, "{raw:?}");
}
