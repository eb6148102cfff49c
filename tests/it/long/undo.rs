//! Checkpoints and `/undo` in the interactive mode: edits, created files and bash calls walked
//! back one by one, `/diff`, and an undo stack that survives `/save`, quit and `-r`.

use super::{Repl, answer};
use crate::run::Sandbox;
use crate::server::Reply;
use crate::sse;
use serde_json::{Value, json};

fn call(id: &str, name: &str, args: Value) -> Reply {
    Reply::Sse(sse::tool_calls(&[(id, name, args)]))
}

fn edit(id: &str, path: &str, old: &str, new: &str) -> Reply {
    let args = json!({"file_path": path, "old_string": old, "new_string": new});
    call(id, "edit_file", args)
}

#[test]
fn undo_walks_back_edits_creations_and_bash() {
    let sandbox = Sandbox::new("long_undo");
    sandbox.write("notes.txt", "alpha\nbeta\n");
    let script = vec![
        edit("call_1", "notes.txt", "beta", "BETA"),
        answer("edited it"),
        call(
            "call_2",
            "write_file",
            json!({"file_path": "new.txt", "content": "fresh\n"}),
        ),
        answer("created it"),
        call(
            "call_3",
            "bash",
            json!({"command": "echo shell > shell.txt"}),
        ),
        answer("ran it"),
    ];
    let mut repl = Repl::start(&sandbox, &[], script);
    repl.allowed_turn("edit notes", "edit_file", "edited it");
    repl.allowed_turn("create new", "write_file", "created it");
    repl.allowed_turn("run shell", "bash", "ran it");
    assert_eq!(sandbox.read("notes.txt"), "alpha\nBETA\n");
    repl.turn("/diff", "+BETA");
    let diff = repl.pty.screen();
    let diff = diff.rsplit_once("> /diff").expect("the command").1;
    for line in ["-beta", "+++ new.txt", "+fresh"] {
        assert!(diff.contains(line), "{line:?} not in:\n{diff}");
    }
    let bash = "The last change came from bash (`echo shell > shell.txt`); \
                /undo cannot reverse shell side effects.";
    repl.turn("/undo", bash);
    repl.turn("/undo", "Removed new.txt, which this session created (");
    assert!(!sandbox.path("new.txt").exists());
    repl.turn("/undo", "Restored notes.txt (");
    assert_eq!(sandbox.read("notes.txt"), "alpha\nbeta\n");
    repl.turn("/undo", "Nothing to undo.");
    repl.turn(
        "/diff",
        "No files changed by write_file or edit_file this session",
    );
    assert!(sandbox.path("shell.txt").exists(), "bash effects stay");
}

/// `/diff` right after an approved bash command changed a file does not say "No files
/// changed": bash's changes are not tracked, and it says so, with the command it ran and how
/// to see what it did; a file an edit recorded shows bash's later change in its diff.
#[test]
fn diff_says_bash_changes_are_not_tracked_and_names_the_command() {
    let sandbox = Sandbox::new("long_diff_bash");
    sandbox.write("calc.py", "x = 1\n");
    sandbox.write("notes.txt", "alpha\n");
    let script = vec![
        call(
            "call_1",
            "bash",
            json!({"command": "echo changed >> calc.py"}),
        ),
        answer("appended"),
        edit("call_2", "notes.txt", "alpha", "ALPHA"),
        answer("edited"),
    ];
    let mut repl = Repl::start(&sandbox, &[], script);
    repl.allowed_turn("change calc", "bash", "appended");
    assert_eq!(sandbox.read("calc.py"), "x = 1\nchanged\n");
    let how = "In a git repository, `git status` and `git diff` show every change.";
    repl.turn("/diff", how);
    let screen = repl.pty.screen();
    let shown = screen.rsplit_once("> /diff").expect("the command").1;
    for line in [
        "No files changed by write_file or edit_file this session.",
        "What bash changed is not tracked, so /diff cannot show it; this session ran:",
        "  $ echo changed >> calc.py",
    ] {
        assert!(shown.contains(line), "{line:?} not in:\n{shown}");
    }
    assert!(!shown.contains("No files changed this session."), "{shown}");
    repl.allowed_turn("edit notes", "edit_file", "edited");
    repl.turn("/diff", how);
    let screen = repl.pty.screen();
    let shown = screen.rsplit_once("> /diff").expect("the command").1;
    assert!(
        shown.contains("+ALPHA") && shown.contains("$ echo changed"),
        "{shown}"
    );
}

#[test]
fn undo_works_after_save_quit_and_resume() {
    let sandbox = Sandbox::new("long_undo_restart");
    let original = "one\r\ntwo\r\n\u{feff}three";
    sandbox.write("notes.txt", original);
    let script = vec![edit("call_1", "notes.txt", "two", "TWO"), answer("edited")];
    let mut first = Repl::start(&sandbox, &[], script);
    first.allowed_turn("edit notes", "edit_file", "edited");
    assert_ne!(sandbox.read("notes.txt"), original);
    first.turn("/save work", "Saved as work: resume with corecoder -r work");
    first.quit();

    let mut second = Repl::start(&sandbox, &["-r", "work"], vec![]);
    second.turn("/undo", "Restored notes.txt");
    assert_eq!(sandbox.read("notes.txt"), original);
    second.turn("/undo", "Nothing to undo.");
}

/// After `/undo` the next request tells the model what was put back: its edit no longer stands.
#[test]
fn undo_is_told_to_the_model() {
    let sandbox = Sandbox::new("long_undo_told");
    sandbox.write("notes.txt", "alpha\nbeta\n");
    let script = vec![
        edit("call_1", "notes.txt", "beta", "BETA"),
        answer("edited it"),
        answer("understood"),
    ];
    let mut repl = Repl::start(&sandbox, &[], script);
    repl.allowed_turn("edit notes", "edit_file", "edited it");
    repl.turn("/undo", "Restored notes.txt (");
    repl.turn("what now?", "understood");
    let messages = repl.requests(3)[2].messages();
    let n = messages.len();
    let note = messages[n - 2]["content"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("[note from the session] The user ran /undo: Restored notes.txt"),
        "{messages:#?}"
    );
    assert_eq!(messages[n - 1]["content"], "what now?");
}
