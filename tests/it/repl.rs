//! The interactive REPL through a real terminal: consent questions, plan mode, slash commands,
//! Ctrl+C and Ctrl+D, multi-line input, and what each turn sends to the model.
//!
//! Each test types into the binary on a `Pty` and reads what the scripted server recorded.
//! Before typing a line a test waits for the prompt, as a person would; typing ahead is not
//! what is tested here.

use crate::driver::{Repl, WAIT};
use crate::run::Sandbox;
use crate::server::{Recorded, Reply};
use crate::sse;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const MODEL: &str = "model-at-start";

/// The REPL with a known model, at its first prompt, its banner checked.
fn start(sandbox: &Sandbox, script: Vec<Reply>) -> Repl {
    let repl = Repl::start(sandbox, &["--model", MODEL], script);
    let screen = repl.pty.screen();
    let banner = screen.lines().next().unwrap_or_default();
    assert!(
        banner.starts_with("corecoder 0.1.0") && banner.contains(MODEL),
        "banner: {banner:?}\n{screen}"
    );
    repl
}

impl Repl {
    /// Wait for the consent question about `call`, answer it with the keys `reply`, and
    /// check that the call was shown as a tool line.
    fn consent(&mut self, call: &str, reply: &str) {
        self.expect(&question(call));
        self.pty.send(reply);
        self.assert_shown(&format!("> {call}"));
    }

    fn assert_shown(&self, text: &str) {
        let screen = self.pty.screen();
        assert!(screen.contains(text), "{text:?} not shown:\n{screen}");
    }

    fn assert_not_shown(&self, text: &str) {
        let screen = self.pty.screen();
        assert!(!screen.contains(text), "{text:?} shown:\n{screen}");
    }
}

/// The question about `call`, with the "always" choice consent offers for it: a prefix rule
/// for a bash command's program (these tests' commands have no subcommand), the project's
/// files for an edit or a write.
fn question(call: &str) -> String {
    let always = match call.split_once('(') {
        Some(("bash", command)) => {
            let program = command.split([' ', ')']).next().unwrap_or_default();
            format!("always allow \"{program} …\" in this project")
        }
        Some(("edit_file" | "write_file", _)) => "always allow edits in this project".into(),
        _ => "always allow this tool".into(),
    };
    format!("Allow {call}? [y] allow once  [a] {always}  [n] deny: ")
}

fn answer(text: &str) -> Reply {
    Reply::Sse(sse::text(text))
}

fn bash(id: &str, command: &str) -> Reply {
    let args = json!({ "command": command });
    Reply::Sse(sse::tool_calls(&[(id, "bash", args)]))
}

fn content(message: &Value) -> &str {
    message["content"].as_str().unwrap_or_default()
}

/// `text` is on the screen below the first `line`.
fn assert_shown_after(repl: &Repl, line: &str, text: &str) {
    let screen = repl.pty.screen();
    let below = screen.split_once(line).map_or("", |(_, below)| below);
    assert!(
        below.contains(text),
        "{text:?} not shown after {line:?}:\n{screen}"
    );
}

fn last_user_text(request: &Recorded) -> String {
    let messages = request.messages();
    let last = messages.last().expect("a message");
    assert_eq!(last["role"], "user", "{messages:#?}");
    content(last).to_string()
}

#[test]
fn consent_yes_runs_once_and_asks_again() {
    let sandbox = Sandbox::new("repl_yes");
    let script = vec![
        bash("call_1", "touch one.txt"),
        answer("first done"),
        bash("call_2", "touch two.txt"),
        answer("second done"),
    ];
    let mut repl = start(&sandbox, script);
    repl.enter("make one");
    repl.consent("bash(touch one.txt)", "y\r");
    repl.expect("first done");
    repl.idle();
    assert!(sandbox.path("one.txt").exists(), "{}", repl.pty.screen());
    repl.enter("make two");
    repl.consent("bash(touch two.txt)", "y\r");
    repl.expect("second done");
    let requests = repl.requests(4);
    assert!(sandbox.path("two.txt").exists());
    for request in [&requests[1], &requests[3]] {
        let result = request.last_tool_result();
        assert!(!result.starts_with("Denied"), "{result}");
    }
    assert!(!sandbox.home.join(".corecoder/permissions.json").exists());
}

/// "Always" at a bash question saves a prefix rule for this project (in the user's
/// `~/.corecoder/project-rules.json`, keyed by the folder), not the whole tool: the next
/// session runs `touch` without asking, and still asks about `ls`.
#[test]
fn consent_always_is_remembered_across_restarts() {
    let sandbox = Sandbox::new("repl_always");
    let script = vec![bash("call_a", "touch a.txt"), answer("done a")];
    let mut first = start(&sandbox, script);
    first.enter("make a");
    first.consent("bash(touch a.txt)", "a\r");
    first.expect("done a");
    first.idle();
    assert!(sandbox.path("a.txt").exists(), "{}", first.pty.screen());
    let saved = std::fs::read_to_string(sandbox.home.join(".corecoder/project-rules.json"))
        .expect("project-rules.json");
    let saved: Value = serde_json::from_str(&saved).expect("project-rules.json is JSON");
    let project = sandbox.dir.canonicalize().unwrap();
    let entry = &saved["projects"][project.to_string_lossy().as_ref()];
    assert_eq!(entry, &json!({"permissions": {"allow": ["Bash(touch:*)"]}}));
    assert!(!sandbox.home.join(".corecoder/permissions.json").exists());
    first.enter("exit");
    assert_eq!(first.pty.wait_exit(WAIT), Some(0), "{}", first.pty.screen());

    let script = vec![
        bash("call_b", "touch b.txt"),
        bash("call_c", "ls"),
        answer("done b"),
    ];
    let mut second = start(&sandbox, script);
    second.enter("make b");
    second.consent("bash(ls)", "n\r");
    second.expect("done b");
    second.assert_shown("> bash(touch b.txt)");
    second.assert_not_shown("Allow bash(touch");
    assert!(sandbox.path("b.txt").exists());
}

/// What "always" offers allows the very line it was offered for: after `a`, the same line
/// (two commands) runs without a question.
#[test]
fn always_allows_the_line_it_was_offered_for() {
    let sandbox = Sandbox::new("repl_always_fits");
    let line = "touch a.txt; echo made";
    let script = vec![
        bash("call_1", line),
        answer("first done"),
        bash("call_2", line),
        answer("second done"),
    ];
    let mut repl = start(&sandbox, script);
    repl.enter("make a");
    repl.expect(&format!(
        "Allow bash({line})? [y] allow once  \
         [a] always allow \"touch …\", \"echo …\" in this project  [n] deny: "
    ));
    repl.pty.send("a\r");
    repl.expect("first done");
    repl.idle();
    repl.turn("again", "second done");
    assert_eq!(repl.pty.screen().matches("Allow bash(").count(), 1);
    assert!(sandbox.path("a.txt").exists());
}

/// A line no rule could allow (it writes a file by redirection) is not offered `[a]`: the
/// question line says why, `a` is answered with that reason, and the next time it asks again.
#[test]
fn always_is_not_offered_where_no_rule_could_allow_the_line() {
    let sandbox = Sandbox::new("repl_always_never");
    sandbox.write("calc.py", "x = 1\n");
    let line = "echo changed >> calc.py";
    let script = vec![
        bash("call_1", line),
        answer("first done"),
        bash("call_2", line),
        answer("second done"),
    ];
    let mut repl = start(&sandbox, script);
    let asked = format!(
        "Allow bash({line})? (no [a]: no rule allows a command that writes a file by \
         redirection, >> calc.py)  [y] allow once  [n] deny: "
    );
    repl.enter("change calc");
    repl.expect(&asked);
    repl.pty.send("a\r");
    repl.expect("(\"always\" is not offered: no rule allows a command that writes a file");
    repl.pty.send("y\r");
    repl.expect("first done");
    repl.idle();
    repl.enter("again");
    repl.expect(&asked);
    repl.pty.send("n\r");
    repl.expect("second done");
    assert_eq!(sandbox.read("calc.py"), "x = 1\nchanged\n");
    assert!(!sandbox.home.join(".corecoder/project-rules.json").exists());
}

/// `n`, Ctrl+C and Ctrl+D at the question are all a denial the model is told about.
#[test]
fn consent_no_is_a_denial_result() {
    let sandbox = Sandbox::new("repl_no");
    let keys = [("n\r", "n.txt"), ("\x03", "c.txt"), ("\x04", "d.txt")];
    let script = keys.iter().flat_map(|(_, file)| {
        [
            bash("call_1", &format!("touch {file}")),
            answer(&format!("{file} refused")),
        ]
    });
    let mut repl = start(&sandbox, script.collect());
    for (key, file) in keys {
        repl.enter(&format!("make {file}"));
        repl.consent(&format!("bash(touch {file})"), key);
        repl.expect(&format!("{file} refused"));
        repl.idle();
        assert!(!sandbox.path(file).exists(), "{file} was made");
    }
    let requests = repl.requests(6);
    for (answered, key) in [(1, "n"), (3, "Ctrl+C"), (5, "Ctrl+D")] {
        let result = requests[answered].last_tool_result();
        assert!(result.starts_with("Denied:"), "after {key}: {result}");
    }
}

#[test]
fn plan_mode_refuses_then_approve_runs() {
    let sandbox = Sandbox::new("repl_plan");
    let script = vec![
        bash("call_early", "touch plan.txt"),
        answer("Here is the plan"),
        bash("call_late", "touch plan.txt"),
        answer("Built it"),
    ];
    let mut repl = start(&sandbox, script);
    repl.turn("/plan", "Plan mode on");
    repl.expect("(plan) > ");
    repl.turn("add plan.txt", "Here is the plan");
    repl.expect("(plan) > ");
    repl.assert_not_shown("Allow");
    assert!(!sandbox.path("plan.txt").exists());

    repl.enter("approve");
    repl.consent("bash(touch plan.txt)", "y\r");
    repl.expect("Built it");
    repl.idle();
    assert!(sandbox.path("plan.txt").exists());
    // `approve` turned plan mode off, so /plan turns it on again.
    repl.turn("/plan", "Plan mode on");

    let requests = repl.requests(4);
    // Plan mode is told in a note on the task, never in the system prompt (the same bytes all
    // session, so a provider's prompt cache keeps serving it).
    assert!(last_user_text(&requests[0]).contains("PLAN MODE IS ON"));
    let refused = requests[1].last_tool_result();
    assert!(refused.starts_with("Refused: plan mode is on"), "{refused}");
    assert!(last_user_text(&requests[2]).contains("approve"));
    assert!(last_user_text(&requests[2]).contains("Plan mode is off"));
    assert!(!content(&requests[2].messages()[0]).contains("PLAN MODE IS ON"));
    assert_eq!(requests[0].messages()[0], requests[3].messages()[0]);
    assert!(!requests[3].last_tool_result().starts_with("Refused"));
}

/// `/model` and `/tokens` too are answered locally. Each is judged by what it printed itself
/// (the banner names the model too, and the turn's own footer counts its tokens).
#[test]
fn model_switch_applies_to_next_request() {
    let sandbox = Sandbox::new("repl_model");
    let mut repl = start(&sandbox, vec![answer("hello there"), answer("again")]);
    let command = |repl: &mut Repl, line: &str| {
        repl.enter(line);
        repl.idle();
        printed_by(repl, line).trim().to_string()
    };
    let chat = "openai (chat completions)";
    assert_eq!(
        command(&mut repl, "/model"),
        format!("Model: {MODEL} · {chat}")
    );
    let switched = command(&mut repl, "/model other-model");
    assert_eq!(switched, "Model: other-model");
    repl.turn("hi", "hello there");
    // The stream reported 100 prompt and 20 completion tokens.
    let tokens = command(&mut repl, "/tokens");
    assert!(
        tokens.contains("100") && tokens.contains("20"),
        "{tokens:?}"
    );
    let other = format!("Model: other-model · {chat}");
    assert_eq!(command(&mut repl, "/model"), other);
    let requests = repl.requests(1);
    assert_eq!(requests[0].body["model"], "other-model");
}

/// What the last `line` typed printed: the screen between its echo and the next prompt.
fn printed_by(repl: &Repl, line: &str) -> String {
    let screen = repl.pty.screen();
    let below = screen
        .rsplit_once(&format!("> {line}\n"))
        .map_or("", |(_, below)| below);
    below
        .rsplit_once("> ")
        .map_or(below, |(printed, _)| printed)
        .to_string()
}

/// `/help` too: it lists the commands, and sends nothing.
#[test]
fn unknown_slash_command_sends_nothing() {
    let sandbox = Sandbox::new("repl_unknown");
    let mut repl = start(&sandbox, vec![answer("should not be asked")]);
    repl.turn("/xyz", "Unknown command: /xyz");
    repl.enter("/help");
    repl.idle();
    for command in ["/plan", "/model", "/tokens", "/reset"] {
        assert_shown_after(&repl, "> /help", command);
    }
    assert!(repl.server.requests().is_empty(), "{}", repl.pty.screen());
}

#[test]
fn local_commands_send_nothing() {
    let sandbox = Sandbox::new("repl_local_commands");
    let mut repl = start(&sandbox, vec![answer("should not be asked")]);
    let commands = [
        (
            "/diff",
            "No files changed by write_file or edit_file this session",
        ),
        ("/undo", "Nothing to undo."),
        ("/save", "give a name: /save NAME"),
        ("/sessions", "Resume one with corecoder -r ID."),
        ("/mcp", "No MCP servers"),
    ];
    for (command, reply) in commands {
        repl.turn(command, reply);
    }
    assert!(repl.server.requests().is_empty(), "{}", repl.pty.screen());
}

/// `quit` too: it ends the REPL with 0.
#[test]
fn reset_clears_history() {
    let sandbox = Sandbox::new("repl_reset");
    let script = vec![answer("first answer"), answer("second answer")];
    let mut repl = start(&sandbox, script);
    repl.turn("one", "first answer");
    repl.enter("/reset");
    repl.idle();
    repl.turn("two", "second answer");
    let messages = repl.requests(2)[1].messages();
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["system", "user"], "{messages:#?}");
    assert_eq!(content(&messages[1]), "two");
    repl.enter("quit");
    assert_eq!(repl.pty.wait_exit(WAIT), Some(0), "{}", repl.pty.screen());
}

/// The line history is saved at the end, whole and readable by the user only, by way of the
/// atomic write (no scratch file left beside it); the next start reads it back.
#[test]
fn the_line_history_is_saved_private_and_atomically() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new("repl_history");
    let mut repl = start(&sandbox, vec![answer("noted")]);
    repl.turn("remember this line", "noted");
    repl.enter("quit");
    assert_eq!(repl.pty.wait_exit(WAIT), Some(0), "{}", repl.pty.screen());
    let dir = sandbox.home.join(".corecoder");
    let saved = std::fs::read_to_string(dir.join("history")).expect("the history was saved");
    assert!(saved.contains("remember this line"), "{saved:?}");
    let mode = std::fs::metadata(dir.join("history"))
        .expect("history")
        .permissions();
    assert_eq!(mode.mode() & 0o777, 0o600);
    let names: Vec<String> = (std::fs::read_dir(&dir).expect("~/.corecoder"))
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .collect();
    assert!(!names.iter().any(|name| name.contains("tmp")), "{names:?}");
}

/// Processes running `sleep` with exactly `seconds` as its argument (the tests' marker).
fn sleeping(seconds: &str) -> usize {
    let marker = format!("sleep\0{seconds}\0");
    let entries = std::fs::read_dir("/proc").expect("/proc");
    entries
        .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
        .filter(|cmdline| cmdline.ends_with(marker.as_bytes()))
        .count()
}

fn wait_until(done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + WAIT;
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

#[test]
fn interrupt_during_slow_tool_keeps_history_valid() {
    let sandbox = Sandbox::new("repl_interrupt_tool");
    // An odd duration marks this test run's sleep among all processes.
    let seconds = format!("31.{}", std::process::id());
    let command = format!("sleep {seconds}");
    let script = vec![bash("call_sleep", &command), answer("after it")];
    let mut repl = start(&sandbox, script);
    repl.enter("wait a bit");
    repl.consent(&format!("bash({command})"), "y\r");
    repl.server.expect_repairs();
    assert!(wait_until(|| sleeping(&seconds) > 0), "sleep never started");
    let interrupted_at = Instant::now();
    repl.pty.send("\x03");
    repl.expect("(interrupted)");
    repl.idle();
    assert!(interrupted_at.elapsed() < Duration::from_secs(3));
    let killed = wait_until(|| sleeping(&seconds) == 0);
    assert!(killed, "the tool still runs");

    repl.enter("go on");
    repl.expect("after it");
    let messages = repl.requests(2)[1].messages();
    let asked = messages
        .iter()
        .position(|m| m["tool_calls"][0]["id"] == "call_sleep")
        .unwrap_or_else(|| panic!("no assistant tool call: {messages:#?}"));
    let result = &messages[asked + 1];
    assert_eq!(result["role"], "tool", "{messages:#?}");
    assert_eq!(result["tool_call_id"], "call_sleep");
    assert!(content(result).contains("interrupted"), "{result}");
    assert_eq!(messages.len(), asked + 3, "{messages:#?}");
    assert_eq!(messages[asked + 2]["role"], "user");
    assert_eq!(content(&messages[asked + 2]), "go on");
}

/// A bash that closed its pipes first (only its pidfd and the tick are left to watch it): the
/// first Ctrl+C still kills it at once.
#[test]
fn interrupt_kills_a_bash_that_closed_its_pipes() {
    let sandbox = Sandbox::new("repl_interrupt_closed");
    let seconds = format!("32.{}", std::process::id());
    let command = format!("exec >&- 2>&-; sleep {seconds}");
    let script = vec![bash("call_sleep", &command), answer("after it")];
    let mut repl = start(&sandbox, script);
    repl.enter("wait a bit");
    repl.expect("[n] deny: ");
    repl.pty.send("y\r");
    repl.server.expect_repairs();
    assert!(wait_until(|| sleeping(&seconds) > 0), "sleep never started");
    let interrupted_at = Instant::now();
    repl.pty.send("\x03");
    repl.expect("(interrupted)");
    repl.idle();
    assert!(interrupted_at.elapsed() < Duration::from_secs(3));
    assert!(
        wait_until(|| sleeping(&seconds) == 0),
        "the tool still runs"
    );
}

#[test]
fn interrupt_while_streaming_keeps_partial_answer() {
    let sandbox = Sandbox::new("repl_interrupt_stream");
    let partial = sse::role() + &sse::content("The partial ") + &sse::content("answer");
    let stall = Reply::SseThenStall {
        body: partial,
        ms: 20_000,
    };
    let mut repl = start(&sandbox, vec![stall, answer("fresh answer")]);
    repl.enter("tell me");
    repl.expect("The partial answer");
    let interrupted_at = Instant::now();
    repl.pty.send("\x03");
    repl.idle();
    assert!(interrupted_at.elapsed() < Duration::from_secs(3));
    repl.enter("and now?");
    repl.expect("fresh answer");
    let messages = repl.requests(2)[1].messages();
    let kept = &messages[messages.len() - 2];
    assert_eq!(kept["role"], "assistant", "{messages:#?}");
    assert!(content(kept).starts_with("The partial answer"), "{kept}");
    assert!(content(kept).contains("[interrupted]"), "{kept}");
    assert_eq!(content(&messages[messages.len() - 1]), "and now?");
}

#[test]
fn ctrl_c_at_prompt_does_not_exit_and_ctrl_d_does() {
    let sandbox = Sandbox::new("repl_ctrl_c_d");
    let mut repl = start(&sandbox, vec![answer("still here")]);
    repl.mark = repl.pty.screen().len();
    repl.pty.send("half a thought");
    repl.pty.send("\x03");
    repl.expect("(cleared, not sent)");
    repl.idle();
    assert_eq!(repl.pty.wait_exit(Duration::from_millis(200)), None);
    repl.turn("are you there?", "still here");
    let sent = repl.requests(1)[0].messages();
    assert!(
        !sent.iter().any(|m| m["content"] == "half a thought"),
        "{sent:#?}"
    );
    repl.pty.send("\x04");
    assert_eq!(repl.pty.wait_exit(WAIT), Some(0), "{}", repl.pty.screen());
}

#[test]
fn multi_line_input_with_backslash() {
    let sandbox = Sandbox::new("repl_multi_line");
    let mut repl = start(&sandbox, vec![answer("got both")]);
    repl.enter("first line\\");
    repl.expect("... ");
    repl.enter("second line");
    repl.expect("got both");
    let request = &repl.requests(1)[0];
    assert_eq!(last_user_text(request), "first line\nsecond line");
}

/// The consent question comes after what the call would do: an edit's diff, a write's size and
/// first lines, a command and its directory; nothing has changed yet when it is asked.
#[test]
fn the_question_shows_what_the_call_would_do() {
    let sandbox = Sandbox::new("repl_preview");
    sandbox.write("notes.txt", "alpha\nbeta\n");
    let edit = json!({"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"});
    let write = json!({"file_path": "new.txt", "content": "line one\nline two\n"});
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("c1", "edit_file", edit)])),
        Reply::Sse(sse::tool_calls(&[("c2", "write_file", write)])),
        bash("c3", "echo previewed"),
        answer("all done"),
    ];
    let mut repl = start(&sandbox, script);
    repl.enter("change things");
    repl.expect(&question("edit_file(notes.txt)"));
    let before = |screen: &str, text: &str, call: &str| {
        let asked = screen.find(&question(call)).expect("the question");
        screen[..asked].contains(text)
    };
    let screen = repl.pty.screen();
    assert!(before(&screen, "+BETA", "edit_file(notes.txt)"), "{screen}");
    assert!(before(&screen, "-beta", "edit_file(notes.txt)"), "{screen}");
    assert_eq!(
        sandbox.read("notes.txt"),
        "alpha\nbeta\n",
        "nothing changed yet"
    );
    repl.pty.send("y\r");
    repl.expect(&question("write_file(new.txt)"));
    let screen = repl.pty.screen();
    assert!(
        before(
            &screen,
            "a new file; 2 lines, 18 bytes",
            "write_file(new.txt)"
        ),
        "{screen}"
    );
    assert!(
        before(&screen, "line one", "write_file(new.txt)"),
        "{screen}"
    );
    repl.pty.send("y\r");
    repl.expect(&question("bash(echo previewed)"));
    let screen = repl.pty.screen();
    let dir = format!("(in {})", sandbox.dir.display());
    assert!(
        before(&screen, "$ echo previewed", "bash(echo previewed)"),
        "{screen}"
    );
    assert!(before(&screen, &dir, "bash(echo previewed)"), "{screen}");
    repl.pty.send("y\r");
    repl.expect("all done");
}

/// A reply of several calls shows each result under a line naming its call (they all run
/// before any result is shown, so the last call line is not theirs).
#[test]
fn results_of_several_calls_name_their_call() {
    let sandbox = Sandbox::new("repl_batch_results");
    sandbox.write("a.txt", "from a\n");
    sandbox.write("b.txt", "from b\n");
    let calls = [
        ("c1", "read_file", json!({"file_path": "a.txt"})),
        ("c2", "read_file", json!({"file_path": "b.txt"})),
    ];
    let script = vec![Reply::Sse(sse::tool_calls(&calls)), answer("read both")];
    let mut repl = start(&sandbox, script);
    repl.turn("read both files", "read both");
    let screen = repl.pty.screen();
    let (a, b) = (
        screen.find("  read_file(a.txt):"),
        screen.find("  read_file(b.txt):"),
    );
    let (a, b) = (a.expect("a's header"), b.expect("b's header"));
    let between = &screen[a..b];
    assert!(
        between.contains("from a") && !between.contains("from b"),
        "{screen}"
    );
    assert!(screen[b..].contains("from b"), "{screen}");
}

/// A long line in a result's preview is cut at a word, and says so.
#[test]
fn previews_are_cut_at_a_word() {
    let sandbox = Sandbox::new("repl_preview_cut");
    let long = "word ".repeat(60);
    sandbox.write("long.txt", &format!("{long}\n"));
    let call = [("c1", "read_file", json!({"file_path": "long.txt"}))];
    let script = vec![Reply::Sse(sse::tool_calls(&call)), answer("read it")];
    let mut repl = start(&sandbox, script);
    repl.turn("read the long file", "read it");
    let screen = repl.pty.screen();
    let line = (screen.lines())
        .find(|line| line.contains("word word"))
        .expect("the preview line");
    assert!(line.trim_end().ends_with("word …"), "{line:?}");
}

/// A command the model hides behind a carriage return and a terminal escape cannot redraw the
/// question: the control characters are shown as `?`, and what it would run is in plain sight.
#[test]
fn control_characters_cannot_disguise_the_question() {
    let sandbox = Sandbox::new("repl_spoofed_question");
    let disguised = "cat notes.txt\r\x1b[2Kecho harmless";
    let mut repl = start(&sandbox, vec![bash("c1", disguised), answer("asked")]);
    repl.enter("look");
    repl.expect("[y] allow once");
    let raw = String::from_utf8_lossy(&repl.pty.raw()).into_owned();
    assert!(
        !raw.contains("\r\x1b[2Kecho"),
        "the model's escape reached the terminal"
    );
    let asked = "Allow bash(cat notes.txt??[2Kecho harmless)?";
    assert!(raw.contains(asked), "{}", repl.pty.screen());
    assert!(
        raw.contains("> bash(cat notes.txt??[2Kecho harmless)"),
        "the call line"
    );
    repl.pty.send("n\r");
    repl.expect("asked");
}
