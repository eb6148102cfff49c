//! Consent shows what will run: a "y" allows exactly what was on screen.
//!
//! Each test has the scripted model (or a cloned repository's hooks file) put something past
//! what the short preview shows: a command's fifth or thirtieth line, its tail past 120
//! columns or after 70,000 spaces or 500 blank lines, a write's 300-column line, an edit's
//! change past the diff's fourteenth line, a hook after 70,000 spaces or 40 lines down. The
//! user answers "y" (once "a") on a real terminal. Either the hidden part was on screen before
//! the question, or the answer is refused until `v` has shown it all; it never runs unseen. Bidi overrides and invisible format characters are shown escaped,
//! never sent to the terminal. What the views look like is `tools/support/shown.rs`'s tests.

use crate::driver::{Repl, WAIT};
use crate::pty::Pty;
use crate::run::Sandbox;
use crate::server::{Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The end of every REPL consent question, asked again or not.
const ASKED: &str = "[n] deny: ";
/// The end of every trust question.
const TRUSTED: &str = "[n] no, skip them this time";
/// What the session says when "y" comes before all of it was shown.
const REFUSED: &str = "not all of it was shown";

/// How a "y" was taken.
#[derive(Debug, PartialEq)]
enum Yes {
    /// It ran, and what it ran was on screen before the question.
    RanAsShown,
    /// Refused until `v` showed all of it; then it ran.
    RanAfterViewing,
}

/// Answer "y" to the question ending in `asked`, and check that `hidden` ran only once shown:
/// if `ran` turns true, `hidden` was on screen before the "y"; if the "y" was refused, `v`
/// shows `hidden`, the question comes again, and a second "y" runs it.
fn yes(repl: &mut Repl, asked: &str, hidden: &str, ran: &dyn Fn() -> bool) -> Yes {
    repl.expect(asked);
    let before = repl.pty.screen();
    repl.pty.send("y\r");
    let refused = |screen: &str| screen[before.len().min(screen.len())..].contains(REFUSED);
    let deadline = Instant::now() + WAIT;
    while !ran() && !refused(&repl.pty.screen()) {
        let screen = repl.pty.screen();
        assert!(Instant::now() < deadline, "no answer to \"y\":\n{screen}");
        std::thread::sleep(Duration::from_millis(20));
    }
    if ran() {
        assert!(
            before.contains(hidden),
            "\"y\" ran {hidden:?}, which was not on screen:\n{before}"
        );
        return Yes::RanAsShown;
    }
    repl.pty.send("v\r");
    repl.expect(hidden);
    repl.expect(asked);
    repl.pty.send("y\r");
    let deadline = Instant::now() + WAIT;
    while !ran() {
        let screen = repl.pty.screen();
        assert!(
            Instant::now() < deadline,
            "viewed, \"y\" did not run:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Yes::RanAfterViewing
}

/// The REPL with the model's one call `name(arguments)` and then "done"; asked at its prompt.
fn asked_about(sandbox: &Sandbox, name: &str, arguments: Value) -> Repl {
    let calls = [("c1", name, arguments)];
    let script = vec![
        Reply::Sse(sse::tool_calls(&calls)),
        Reply::Sse(sse::text("done")),
    ];
    let mut repl = Repl::start(sandbox, &[], script);
    repl.enter("go");
    repl
}

/// A bash command whose last line touches `marker`, after `lines` harmless ones.
fn script(lines: usize, marker: &str) -> Value {
    let mut command: Vec<String> = (1..=lines).map(|n| format!("echo step{n}")).collect();
    command.push(format!("touch {marker}"));
    json!({ "command": command.join("\n") })
}

#[test]
fn a_commands_fifth_line_runs_only_when_shown() {
    let sandbox = Sandbox::new("consent_bash_fifth");
    let mut repl = asked_about(&sandbox, "bash", script(4, "fifth-marker"));
    let ran = || sandbox.path("fifth-marker").exists();
    yes(&mut repl, ASKED, "touch fifth-marker", &ran);
    repl.expect("done");
}

#[test]
fn a_long_scripts_last_line_needs_viewing_before_yes_counts() {
    let sandbox = Sandbox::new("consent_bash_long");
    let mut repl = asked_about(&sandbox, "bash", script(30, "script-marker"));
    let ran = || sandbox.path("script-marker").exists();
    // "always" is a yes too: it waits for `v` as "y" does.
    repl.expect(ASKED);
    repl.pty.send("a\r");
    repl.expect(REFUSED);
    assert!(!ran(), "\"a\" ran a script not shown");
    let taken = yes(&mut repl, ASKED, "touch script-marker", &ran);
    assert_eq!(taken, Yes::RanAfterViewing);
    repl.assert_question_said("showing");
    repl.expect("done");
}

#[test]
fn a_commands_tail_past_120_columns_runs_only_when_shown() {
    let sandbox = Sandbox::new("consent_bash_tail");
    let command = format!("echo {}; touch tail-marker", "padding ".repeat(16));
    let mut repl = asked_about(&sandbox, "bash", json!({ "command": command }));
    let ran = || sandbox.path("tail-marker").exists();
    let taken = yes(&mut repl, ASKED, "tail-marker", &ran);
    assert_eq!(taken, Yes::RanAfterViewing, "a 150-column line is cut");
    repl.assert_question_said("cut short");
    repl.expect("done");
}

/// Blanks cannot push a command's tail off screen: 70,000 spaces on its line, or 500 blank
/// lines before it, are drawn as counts, so the short view is all of it and "y" runs it.
#[test]
fn blank_runs_in_a_command_are_counted_not_drawn() {
    let sandbox = Sandbox::new("consent_bash_blanks");
    let command = format!(
        "echo hi{}; touch spaced-marker{}touch lower-marker",
        " ".repeat(70_000),
        "\n".repeat(500)
    );
    let mut repl = asked_about(&sandbox, "bash", json!({ "command": command }));
    let ran = || sandbox.path("lower-marker").exists();
    let taken = yes(
        &mut repl,
        ASKED,
        "⟨499 blank lines⟩\n  touch lower-marker",
        &ran,
    );
    assert_eq!(taken, Yes::RanAsShown);
    repl.expect("done");
    let screen = repl.pty.screen();
    let spaced = "$ echo hi⟨70000 spaces⟩; touch spaced-marker";
    assert!(screen.contains(spaced), "{screen}");
}

#[test]
fn a_writes_300_column_line_is_seen_whole_before_yes_counts() {
    let sandbox = Sandbox::new("consent_write_wide");
    let content = format!("first\n{}write-tail\n", "x ".repeat(145));
    let call = json!({"file_path": "wide.txt", "content": content});
    let mut repl = asked_about(&sandbox, "write_file", call);
    let ran = || sandbox.path("wide.txt").exists();
    yes(&mut repl, ASKED, "write-tail", &ran);
    repl.expect("done");
    assert_eq!(sandbox.read("wide.txt"), content);
}

#[test]
fn an_edits_change_past_line_14_is_seen_before_yes_counts() {
    let sandbox = Sandbox::new("consent_edit_far");
    let old: Vec<String> = (1..=40).map(|n| format!("line {n}")).collect();
    sandbox.write("long.txt", &(old.join("\n") + "\n"));
    let mut new = old.clone();
    new[1] = "line 2 changed".into();
    new[29] = "line 30 edit-tail".into();
    let call = json!({
        "file_path": "long.txt",
        "old_string": old[..30].join("\n"),
        "new_string": new[..30].join("\n"),
    });
    let mut repl = asked_about(&sandbox, "edit_file", call);
    let ran = || sandbox.read("long.txt").contains("edit-tail");
    let taken = yes(&mut repl, ASKED, "+line 30 edit-tail", &ran);
    assert_eq!(taken, Yes::RanAfterViewing);
    repl.expect("done");
}

/// Bidi overrides, isolates and zero-width characters in a command reach the terminal as
/// escapes (`\u{202e}`), in the question and in the call line; none of them raw.
#[test]
fn bidi_overrides_in_a_command_are_shown_escaped() {
    let sandbox = Sandbox::new("consent_bidi");
    let command = "touch bidi-marker # \u{202e}txt.olleh\u{2066}x\u{2069}\u{200b}\u{feff}";
    let mut repl = asked_about(&sandbox, "bash", json!({ "command": command }));
    let ran = || sandbox.path("bidi-marker").exists();
    repl.expect("[y] allow once");
    let raw = String::from_utf8_lossy(&repl.pty.raw()).into_owned();
    for c in ['\u{202e}', '\u{2066}', '\u{2069}', '\u{200b}', '\u{feff}'] {
        assert!(!raw.contains(c), "{c:?} reached the terminal:\n{raw}");
    }
    let escaped = r"touch bidi-marker # \u{202e}txt.olleh\u{2066}x\u{2069}\u{200b}\u{feff}";
    assert!(raw.contains(escaped), "{}", repl.pty.screen());
    assert_eq!(yes(&mut repl, ASKED, escaped, &ran), Yes::RanAsShown);
    repl.expect("done");
}

impl Repl {
    /// The question, as first asked, said `what` about the part not shown, and how to see it.
    fn assert_question_said(&self, what: &str) {
        let screen = self.pty.screen();
        let asked = (screen.lines()).find(|line| line.contains("Allow ") && line.contains(ASKED));
        let asked = asked.expect("the question");
        assert!(
            asked.contains(what) && asked.contains("[v] view all"),
            "{asked:?}\n{screen}"
        );
    }
}

/// The interactive session started in `sandbox`, at its trust question.
fn trust_asked(sandbox: &Sandbox) -> Repl {
    let server = Server::start(vec![Reply::Sse(sse::text("ok"))]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("CORECODER_BASE_URL", &url),
    ];
    let pty = Pty::spawn(&[], &env, sandbox);
    Repl {
        pty,
        server,
        mark: 0,
    }
}

/// A cloned repository's hook hides after 70,000 spaces on its line (the old question showed
/// the first 64 KiB, all spaces, and no marker).
#[test]
fn a_hook_after_70000_spaces_runs_only_when_shown() {
    let sandbox = Sandbox::new("consent_trust_spaces");
    let hooks = format!(
        "{{\"SessionStart\": [{}{{\"command\": \"touch spaced-hook\"}}]}}",
        " ".repeat(70_000)
    );
    sandbox.write(".corecoder/hooks.json", &hooks);
    let mut repl = trust_asked(&sandbox);
    let ran = || sandbox.path("spaced-hook").exists();
    yes(&mut repl, TRUSTED, "touch spaced-hook", &ran);
    repl.expect("corecoder 0.1.0");
    assert!(repl.pty.screen().contains("⟨70000 spaces⟩"));
}

/// A hook 40 lines down a hooks file is past the question's first lines: "y" waits for `v`.
#[test]
fn a_hook_40_lines_down_needs_viewing_before_yes_counts() {
    let sandbox = Sandbox::new("consent_trust_lines");
    let mut hooks = vec!["{\"SessionStart\": [".to_string()];
    hooks.extend((0..40).map(|_| "  {\"command\": \"true\"},".to_string()));
    hooks.push("  {\"command\": \"touch deep-hook\"}\n]}".to_string());
    sandbox.write(".corecoder/hooks.json", &hooks.join("\n"));
    let mut repl = trust_asked(&sandbox);
    let ran = || sandbox.path("deep-hook").exists();
    let taken = yes(&mut repl, TRUSTED, "touch deep-hook", &ran);
    assert_eq!(taken, Yes::RanAfterViewing);
    repl.expect("corecoder 0.1.0");
}

/// The trust question shows a hooks file's bidi override escaped, never raw.
#[test]
fn the_trust_question_shows_bidi_overrides_escaped() {
    let sandbox = Sandbox::new("consent_trust_bidi");
    let command = "touch bidi-hook # \u{202e}txt.olleh";
    let hooks = json!({"SessionStart": [{"command": command}]});
    sandbox.write(".corecoder/hooks.json", &hooks.to_string());
    let mut repl = trust_asked(&sandbox);
    repl.expect(TRUSTED);
    let raw = String::from_utf8_lossy(&repl.pty.raw()).into_owned();
    assert!(!raw.contains('\u{202e}'), "U+202E reached the terminal");
    assert!(
        raw.contains(r"# \u{202e}txt.olleh"),
        "{}",
        repl.pty.screen()
    );
    repl.enter("n");
    repl.expect("corecoder 0.1.0");
    assert!(!sandbox.path("bidi-hook").exists(), "ran after a no");
}
