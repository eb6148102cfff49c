//! What a sandboxed session plants is never followed later: `/undo` does not write or remove
//! through a symbolic link the session put where its file (or a folder on the way) was, and
//! the `.git/config` and `.git/hooks` it wrote do not run in the next, unsandboxed session.
//!
//! Each test lets a sandboxed session (a scripted model) plant the attack through the real
//! binary, then does what the user would do next (`/undo` in the REPL; `git status` and
//! `git commit` in a later `-p --yes` run), and shows the target untouched and the marker the
//! planted command would write absent. They skip, saying so, where the kernel has no Landlock.

use crate::driver::{Repl, WAIT};
use crate::run::{Sandbox, run_with};
use crate::safety::{calls_in_turn, landlock_available, with_outside};
use crate::server::{Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

const WORKSPACE: [&str; 2] = ["--sandbox", "workspace-write"];

fn call(id: &str, name: &str, args: Value) -> Reply {
    Reply::Sse(sse::tool_calls(&[(id, name, args)]))
}

fn answer(text: &str) -> Reply {
    Reply::Sse(sse::text(text))
}

fn bash(id: &str, command: &str) -> Reply {
    call(id, "bash", json!({ "command": command }))
}

fn edit(id: &str, path: &str, old: &str, new: &str) -> Reply {
    let args = json!({"file_path": path, "old_string": old, "new_string": new});
    call(id, "edit_file", args)
}

/// A sandboxed REPL (workspace-write, TMPDIR `tmp`) that runs each of `steps` (a line, the
/// tool it calls, what the model answers) after a "y".
fn sandboxed_repl(
    sandbox: &Sandbox,
    tmp: &str,
    script: Vec<Reply>,
    steps: &[(&str, &str, &str)],
) -> Repl {
    let server = Server::start(script);
    let mut repl = Repl::start_with_env(sandbox, &WORKSPACE, server, &[("TMPDIR", tmp)]);
    for (line, tool, done) in steps {
        repl.enter(line);
        repl.expect(&format!("Allow {tool}("));
        repl.pty.send("y\r");
        repl.expect(done);
        repl.idle();
    }
    repl
}

/// The session edits `notes.txt`, then its bash swaps the file for a link to the user's
/// `~/.bashrc`: `/undo` refuses that file by name and `.bashrc` keeps its bytes.
#[test]
fn undo_does_not_write_through_a_planted_link() {
    if !landlock_available("planted::undo_does_not_write_through_a_planted_link") {
        return;
    }
    let (sandbox, tmp, _) = with_outside("planted_undo_link");
    let bashrc = sandbox.home.join(".bashrc");
    std::fs::write(&bashrc, "# the user's own\n").expect("bashrc");
    sandbox.write("notes.txt", "alpha\n");
    let plant = format!("rm notes.txt && ln -s {} notes.txt", bashrc.display());
    let script = vec![
        edit("call_1", "notes.txt", "alpha", "ALPHA"),
        answer("edited"),
        bash("call_2", &plant),
        answer("planted"),
    ];
    let steps = [
        ("edit", "edit_file", "edited"),
        ("plant", "bash", "planted"),
    ];
    let mut repl = sandboxed_repl(&sandbox, &tmp, script, &steps);
    repl.turn("/undo", "cannot reverse shell side effects");
    repl.turn("/undo", "notes.txt is now a symbolic link; not restored");
    let bashrc_now = std::fs::read_to_string(&bashrc).expect("bashrc");
    assert_eq!(bashrc_now, "# the user's own\n", "{}", repl.pty.screen());
    repl.turn("/undo", "Nothing to undo.");
}

/// The same with a folder on the way swapped for a link (to a stand-in for `~/.ssh`): the edit
/// is not restored there, the file the session created is not removed there, and an older
/// change to another file is still restored.
#[test]
fn undo_does_not_follow_a_planted_folder_link() {
    if !landlock_available("planted::undo_does_not_follow_a_planted_folder_link") {
        return;
    }
    let (sandbox, tmp, _) = with_outside("planted_undo_dir");
    let secret = sandbox.home.join("dotssh");
    std::fs::create_dir_all(&secret).expect("dotssh");
    std::fs::write(secret.join("config"), "Host *\n").expect("ssh config");
    std::fs::write(secret.join("new.txt"), "the user's\n").expect("new.txt");
    sandbox.write("other.txt", "one\n");
    sandbox.write("sub/config", "two\n");
    let link = secret.display();
    // Short enough for the question's first view (a longer one waits for `v`).
    let plant = format!("d={link}; mv sub s.old; ln -s $d sub; rm -r made; ln -s $d made");
    let script = vec![
        edit("call_1", "other.txt", "one", "ONE"),
        answer("edited other"),
        edit("call_2", "sub/config", "two", "TWO"),
        answer("edited config"),
        call(
            "call_3",
            "write_file",
            json!({"file_path": "made/new.txt", "content": "x\n"}),
        ),
        answer("created"),
        bash("call_4", &plant),
        answer("planted"),
    ];
    let steps = [
        ("other", "edit_file", "edited other"),
        ("config", "edit_file", "edited config"),
        ("create", "write_file", "created"),
        ("plant", "bash", "planted"),
    ];
    let mut repl = sandboxed_repl(&sandbox, &tmp, script, &steps);
    repl.turn("/undo", "cannot reverse shell side effects");
    repl.turn("/undo", "made is now a symbolic link; not removed");
    repl.turn("/undo", "sub is now a symbolic link; not restored");
    repl.turn("/undo", "Restored other.txt");
    let screen = repl.pty.screen();
    assert_eq!(
        std::fs::read_to_string(secret.join("config")).unwrap(),
        "Host *\n",
        "{screen}"
    );
    assert_eq!(
        std::fs::read_to_string(secret.join("new.txt")).unwrap(),
        "the user's\n",
        "{screen}"
    );
    assert_eq!(sandbox.read("other.txt"), "one\n");
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .output()
        .expect("git");
    assert!(status.status.success(), "git {args:?}: {status:?}");
}

/// A sandboxed session plants `core.fsmonitor` and a `pre-commit` hook (its `write_file` to
/// the hooks folder is refused; its bash gets through, and is told). The next session, with no
/// sandbox and `--yes`, runs `git status` and `git commit`: neither planted command runs, and
/// the model is told why and how the user can trust them. An allow rule does not change that.
#[test]
fn planted_git_config_and_hooks_do_not_run_in_the_next_session() {
    if !landlock_available("planted::planted_git_config_and_hooks_do_not_run_in_the_next_session") {
        return;
    }
    let (sandbox, tmp, outside) = with_outside("planted_git");
    git(&sandbox.dir, &["init", "-q"]);
    sandbox.write("a.txt", "a\n");
    let (fsmonitor, hook) = (
        format!("{outside}/fsmonitor-ran"),
        format!("{outside}/hook-ran"),
    );
    let hook_text = format!("#!/bin/sh\ntouch {hook}\n");
    let plant = format!(
        "git config core.fsmonitor 'touch {fsmonitor}; false' && \
         printf '#!/bin/sh\\ntouch {hook}\\n' > .git/hooks/pre-commit && \
         chmod +x .git/hooks/pre-commit && echo planted"
    );
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    let first = [
        (
            "write_file",
            json!({"file_path": ".git/hooks/post-commit", "content": hook_text}),
        ),
        ("bash", json!({"command": plant})),
    ];
    let results = calls_in_turn(&sandbox, &WORKSPACE, &env, &first);
    assert!(results[0].contains(".git/hooks/post-commit"), "{results:?}");
    assert!(results[0].contains("refused"), "{results:?}");
    assert!(results[1].contains("planted"), "{results:?}");
    assert!(
        results[1].contains("changed .git/config or .git/hooks"),
        "the model is told: {results:?}"
    );
    assert!(!sandbox.path(".git/hooks/post-commit").exists());

    let commit = "git add -A && git -c user.name=t -c user.email=t@t commit -q -m x; echo done";
    let second = [
        ("bash", json!({"command": "git status"})),
        ("bash", json!({"command": commit})),
        (
            "bash",
            // A script that runs git without naming it on the command line.
            json!({"command": "sh status.sh"}),
        ),
    ];
    sandbox.write(
        "status.sh",
        "g=gi; ${g}t status; ${g}t commit -q --allow-empty -m y\n",
    );
    let results = calls_in_turn(&sandbox, &[], &env, &second);
    for at in [0, 1] {
        assert!(results[at].contains("/trust"), "{at}: {results:?}");
    }
    assert!(results[2].contains("not a git repository"), "{results:?}");
    assert!(
        !Path::new(&fsmonitor).exists(),
        "fsmonitor ran: {results:?}"
    );
    assert!(!Path::new(&hook).exists(), "the hook ran: {results:?}");

    // `-p` with the user's own `Bash(git status:*)` rule: still not run.
    let rules = json!({"permissions": {"allow": ["Bash(git status:*)"]}});
    std::fs::create_dir_all(sandbox.home.join(".claude")).expect("claude");
    std::fs::write(
        sandbox.home.join(".claude/settings.json"),
        rules.to_string(),
    )
    .expect("rules");
    let server = Server::start(vec![
        call("call_1", "bash", json!({"command": "git status"})),
        answer("done"),
    ]);
    let url = server.url();
    let out = run_with(
        &["-p", "go"],
        &[("OPENAI_API_KEY", "sk-test"), ("OPENAI_BASE_URL", &url)],
        &sandbox,
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains(".git"), "the user is told: {out:?}");
    let told = server.requests()[1].last_tool_result();
    assert!(told.contains("/trust"), "{told}");
    assert!(!Path::new(&fsmonitor).exists(), "fsmonitor ran: {told}");
}

/// In the REPL the next session asks about the planted git files, showing what changed as a
/// diff; after "n" git stays off, after `/trust` it runs (the user saw what it runs).
#[test]
fn the_repl_asks_about_planted_git_files() {
    if !landlock_available("planted::the_repl_asks_about_planted_git_files") {
        return;
    }
    let (sandbox, tmp, outside) = with_outside("planted_git_repl");
    git(&sandbox.dir, &["init", "-q"]);
    let marker = format!("{outside}/fsmonitor-ran");
    let plant = format!("git config core.fsmonitor 'touch {marker}; false'");
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    calls_in_turn(
        &sandbox,
        &WORKSPACE,
        &env,
        &[("bash", json!({"command": plant}))],
    );

    let script = vec![
        bash("call_1", "git status"),
        answer("looked"),
        bash("call_2", "git status"),
        answer("looked again"),
    ];
    let server = Server::start(script);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let mut pty = crate::pty::Pty::spawn(&["--yes"], &env, &sandbox);
    pty.expect("Trust this folder?", WAIT)
        .expect("the question");
    let screen = pty.screen();
    assert!(
        screen.contains(".git (changed since you trusted it)"),
        "{screen}"
    );
    assert!(screen.contains("+\tfsmonitor = \"touch"), "{screen}");
    pty.send("n\r");
    pty.expect("Git is off for bash", WAIT).expect("the note");
    pty.enter("status");
    pty.expect("looked", WAIT).expect("the answer");
    assert!(!Path::new(&marker).exists(), "{}", pty.screen());
    let told = server.requests()[1].last_tool_result();
    assert!(told.contains("/trust"), "{told}");
    // `/trust` shows them again and trusts them as shown: git runs from them again.
    pty.enter("/trust");
    pty.expect("fsmonitor", WAIT).expect("shown again");
    pty.expect("Trusted:", WAIT).expect("trusted");
    pty.enter("status again");
    pty.expect("looked again", WAIT).expect("the answer");
    assert!(
        Path::new(&marker).exists(),
        "trusted, it runs: {}",
        pty.screen()
    );
}
