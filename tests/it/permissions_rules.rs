//! Permission rules in Claude Code's settings files, through the binary: precedence across
//! files, exact and prefix bash rules, compound lines, path rules for Read, Edit and Write (and
//! what grep and glob then return), deny under `--yes`, untrusted project settings, and
//! `/permissions` in the REPL.
//!
//! The settings are modelled on the rule examples of Claude Code's permissions documentation
//! (`Bash(npm run test:*)`, `Read(./.env)`, `Edit(/src/**)`, …), rewritten for commands the
//! test machine has. Each attack is tried for real and its marker file must not appear.

use crate::driver::Repl;
use crate::run::{Output, Sandbox, run};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};

/// One reply holding every call of `calls` (`(name, arguments)`), then "done".
fn script(calls: &[(&str, Value)]) -> Server {
    let ids: Vec<String> = (0..calls.len()).map(|n| format!("call_{n}")).collect();
    let calls: Vec<(&str, &str, Value)> = (ids.iter().zip(calls))
        .map(|(id, (name, args))| (id.as_str(), *name, args.clone()))
        .collect();
    Server::start(vec![
        Reply::Sse(sse::tool_calls(&calls)),
        Reply::Sse(sse::text("done")),
    ])
}

fn bash(command: &str) -> (&'static str, Value) {
    ("bash", json!({ "command": command }))
}

/// The tool results the model read, in call order.
fn results(server: &Server) -> Vec<String> {
    let requests: Vec<Recorded> = server.requests();
    let last = requests.last().expect("a request");
    last.tool_results()
        .into_iter()
        .map(|(_, text)| text)
        .collect()
}

fn settings(sandbox: &Sandbox, path: &str, value: Value) {
    let file = sandbox.home.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, value.to_string()).unwrap();
}

fn project_settings(sandbox: &Sandbox, relative: &str, value: Value) {
    sandbox.write(relative, &value.to_string());
}

fn assert_ran(out: &Output) {
    assert_eq!(out.code, 0, "{out:?}");
}

/// Deny in one file beats allow in another; ask beats allow; an allow runs under `-p` without
/// `--yes`; what no rule names is refused there, and runs under `--yes`; an ask rule still
/// keeps `--yes` from running its call.
#[test]
fn deny_beats_ask_beats_allow_across_files() {
    let sandbox = Sandbox::new("rules_precedence");
    settings(
        &sandbox,
        ".claude/settings.json",
        json!({"permissions": {"allow": ["Bash(touch:*)"]}}),
    );
    settings(
        &sandbox,
        ".corecoder/settings.json",
        json!({"permissions": {"deny": ["Bash(touch denied.txt)"]}}),
    );
    project_settings(
        &sandbox,
        ".claude/settings.json",
        json!({"permissions": {"ask": ["Bash(touch asked.txt)"]}}),
    );
    project_settings(
        &sandbox,
        ".claude/settings.local.json",
        json!({"permissions": {"allow": ["Bash(touch denied.txt)", "Bash(touch asked.txt)"]}}),
    );
    let calls = [
        bash("touch allowed.txt"),
        bash("touch asked.txt"),
        bash("touch denied.txt"),
        bash("mkdir unnamed"),
    ];
    let server = script(&calls);
    assert_ran(&run(&["-p", "go", "--trust-project"], &server, &sandbox));
    let seen = results(&server);
    assert!(sandbox.path("allowed.txt").exists(), "{seen:?}");
    assert!(
        seen[1].contains("a permission rule says to ask"),
        "{seen:?}"
    );
    assert!(seen[2].contains("Bash(touch denied.txt)") && seen[2].contains("deny"));
    assert!(seen[3].contains("no one can approve"), "{seen:?}");
    let server = script(&calls);
    assert_ran(&run(&["-p", "go", "--yes"], &server, &sandbox));
    let seen = results(&server);
    assert!(
        seen[1].starts_with("Denied"),
        "an ask is not a yes: {seen:?}"
    );
    assert!(
        seen[2].starts_with("Refused"),
        "deny holds under --yes: {seen:?}"
    );
    assert!(
        sandbox.path("unnamed").is_dir(),
        "--yes runs the rest: {seen:?}"
    );
    for never in ["asked.txt", "denied.txt"] {
        assert!(!sandbox.path(never).exists(), "{never} was made: {seen:?}");
    }
}

/// `Bash(printf ok)` is exact, `Bash(echo hi:*)` a prefix on a word boundary; an allow covers a
/// line only when every command in it is allowed, subshells and `$(…)` included, and none
/// writes a file by redirection.
#[test]
fn prefix_and_exact_rules_and_compound_lines() {
    let sandbox = Sandbox::new("rules_compound");
    settings(
        &sandbox,
        ".claude/settings.json",
        json!({"permissions": {"allow": ["Bash(echo hi:*)", "Bash(printf ok)"]}}),
    );
    let calls = [
        bash("echo hi there"),
        bash("printf ok"),
        bash("echo hix"),
        bash("printf ok2"),
        bash("echo hi && touch pwned1"),
        bash("echo hi; (touch pwned2)"),
        bash("echo hi $(touch pwned3)"),
        bash("echo hi `touch pwned4`"),
        bash("echo hi > pwned5"),
        bash("echo hi | tee pwned6"),
        bash("echo hi\ntouch pwned7"),
    ];
    let server = script(&calls);
    assert_ran(&run(&["-p", "go"], &server, &sandbox));
    let seen = results(&server);
    assert_eq!(seen[0].trim(), "hi there", "{seen:?}");
    assert_eq!(seen[1].trim(), "ok", "{seen:?}");
    for (n, result) in seen.iter().enumerate().skip(2) {
        assert!(result.starts_with("Refused"), "call {n} ran: {seen:?}");
    }
    for n in 1..=7 {
        assert!(
            !sandbox.path(&format!("pwned{n}")).exists(),
            "pwned{n}: {seen:?}"
        );
    }
}

/// `Read(./.env)` keeps the secret from the model under `--yes`: read_file is refused (by any
/// spelling of the path), grep finds nothing in it, glob does not list it, and a denied
/// `Bash(cat:*)` is refused past `env` and `bash -c`. A symlink to it is it.
#[test]
fn a_denied_read_hides_the_file_from_every_reading_tool() {
    let sandbox = Sandbox::new("rules_read_deny");
    sandbox.write(".env", "SECRET=hunter2\n");
    sandbox.write("deep/.env", "SECRET=hunter2\n");
    sandbox.write("notes.txt", "no secret hunter here\n");
    // A link planted earlier (by a session's bash, say) is the file it points to.
    std::os::unix::fs::symlink(".env", sandbox.path("innocent.txt")).unwrap();
    settings(
        &sandbox,
        ".corecoder/settings.json",
        json!({"permissions": {"deny": ["Read(./.env)", "Bash(cat:*)"]}}),
    );
    let calls = [
        ("read_file", json!({"file_path": ".env"})),
        ("read_file", json!({"file_path": "deep/../.env"})),
        ("read_file", json!({"file_path": sandbox.path("deep/.env")})),
        ("grep", json!({"pattern": "hunter"})),
        ("grep", json!({"pattern": "hunter", "path": ".env"})),
        ("glob", json!({"pattern": "**/.env*"})),
        ("glob", json!({"pattern": "**/*"})),
        bash("cat .env"),
        bash("env cat .env"),
        bash("bash -c 'cat .env'"),
        ("read_file", json!({"file_path": "notes.txt"})),
        ("read_file", json!({"file_path": "innocent.txt"})),
    ];
    let server = script(&calls);
    assert_ran(&run(&["-p", "go", "--yes"], &server, &sandbox));
    let seen = results(&server);
    for (n, result) in seen.iter().enumerate() {
        assert!(
            !result.contains("hunter2"),
            "call {n} leaked the secret: {seen:?}"
        );
    }
    for n in [0, 1, 2, 4, 7, 8, 9, 11] {
        assert!(seen[n].starts_with("Refused"), "call {n}: {seen:?}");
    }
    assert!(
        seen[3].contains("notes.txt"),
        "grep still searches the rest: {seen:?}"
    );
    assert!(
        !seen[6].contains(".env") && seen[6].contains("notes.txt"),
        "{seen:?}"
    );
    assert!(seen[10].contains("no secret hunter"), "{seen:?}");
}

/// `Edit(/src/**)` (relative to the settings file's project) allows edits and writes there and
/// nowhere else, `..` included; a deny on a subfolder still wins.
#[test]
fn path_rules_for_edit_and_write() {
    let sandbox = Sandbox::new("rules_edit");
    sandbox.write("src/a.txt", "alpha\n");
    project_settings(
        &sandbox,
        ".corecoder/settings.json",
        json!({"permissions": {"allow": ["Edit(/src/**)"], "deny": ["Write(/src/generated/**)"]}}),
    );
    let write = |path: &str| ("write_file", json!({"file_path": path, "content": "x\n"}));
    let calls = [
        (
            "edit_file",
            json!({"file_path": "src/a.txt", "old_string": "alpha", "new_string": "beta"}),
        ),
        write("src/new.txt"),
        write("outside.txt"),
        write("src/../escape.txt"),
        write("src/generated/gen.txt"),
    ];
    let server = script(&calls);
    assert_ran(&run(&["-p", "go", "--trust-project"], &server, &sandbox));
    let seen = results(&server);
    assert_eq!(sandbox.read("src/a.txt"), "beta\n", "{seen:?}");
    assert!(sandbox.path("src/new.txt").exists(), "{seen:?}");
    for never in ["outside.txt", "escape.txt", "src/generated/gen.txt"] {
        assert!(!sandbox.path(never).exists(), "{never}: {seen:?}");
    }
    assert!(seen[4].contains("deny"), "{seen:?}");
}

/// A project's settings allow nothing and run no hook until the project is trusted; a note
/// says they were skipped. Once trusted, a settings file the session itself rewrites (the
/// model granting itself `Bash`) is untrusted again in the next session.
#[test]
fn untrusted_project_settings_are_ignored_with_a_note() {
    let sandbox = Sandbox::new("rules_untrusted");
    let hook =
        json!({"SessionStart": [{"hooks": [{"type": "command", "command": "touch hook-ran"}]}]});
    project_settings(
        &sandbox,
        ".claude/settings.json",
        json!({"permissions": {"allow": ["Bash(touch:*)"]}, "hooks": hook}),
    );
    let server = script(&[bash("touch pwned")]);
    let out = run(&["-p", "go"], &server, &sandbox);
    assert_ran(&out);
    assert!(!sandbox.path("pwned").exists() && !sandbox.path("hook-ran").exists());
    let note = out
        .stderr
        .lines()
        .find(|l| l.contains("Skipped this project's"));
    assert!(
        note.is_some_and(|n| n.contains(".claude/settings.json")),
        "{out:?}"
    );

    let server = script(&[bash("touch trusted.txt")]);
    assert_ran(&run(&["-p", "go", "--trust-project"], &server, &sandbox));
    assert!(sandbox.path("trusted.txt").exists() && sandbox.path("hook-ran").exists());
    let grant = json!({"permissions": {"allow": ["Bash"]}}).to_string();
    let server = script(&[bash(&format!(
        "printf '%s' '{grant}' > .claude/settings.json"
    ))]);
    assert_ran(&run(&["-p", "go", "--yes"], &server, &sandbox));
    let server = script(&[bash("mkdir pwned-dir")]);
    let out = run(&["-p", "go"], &server, &sandbox);
    assert!(
        !sandbox.path("pwned-dir").exists(),
        "a self-granted rule held: {out:?}"
    );
}

/// `/permissions` lists each rule with its file and the "always" tools; `rm N` takes one out
/// of its file, and the next call is asked about again.
#[test]
fn slash_permissions_lists_and_removes() {
    let sandbox = Sandbox::new("rules_slash");
    settings(
        &sandbox,
        ".claude/settings.json",
        json!({"permissions": {"allow": ["Bash(touch:*)"], "deny": ["Read(./.env)"]}}),
    );
    settings(
        &sandbox,
        ".corecoder/permissions.json",
        json!({"always": ["agent"]}),
    );
    let script = vec![
        Reply::Sse(sse::tool_calls(&[(
            "c1",
            "bash",
            json!({"command": "touch x"}),
        )])),
        Reply::Sse(sse::text("first")),
    ];
    let mut repl = Repl::start(&sandbox, &[], script);
    repl.enter("/permissions");
    repl.expect("Remove one with /permissions rm N.");
    let screen = repl.pty.screen();
    let file = sandbox
        .home
        .join(".claude/settings.json")
        .display()
        .to_string();
    assert!(screen.contains("1. deny  Read(./.env)"), "{screen}");
    assert!(
        screen.contains("2. allow Bash(touch:*)") && screen.contains(&file),
        "{screen}"
    );
    assert!(screen.contains("3. allow agent (\"always\")"), "{screen}");
    repl.enter("/permissions rm 2");
    repl.expect("Removed: allow Bash(touch:*)");
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(sandbox.home.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(saved["permissions"]["allow"], json!([]));
    repl.enter("make x");
    repl.expect(
        "Allow bash(touch x)? [y] allow once  [a] always allow \"touch …\" in this project",
    );
    repl.pty.send("n\r");
    repl.expect("first");
    assert!(!sandbox.path("x").exists());
}

/// A sub-agent is held by the same rules: the model cannot read a denied file by handing the
/// read to a sub-agent (under `--yes`, where the sub-agent may run anything else).
#[test]
fn a_sub_agent_is_held_by_the_same_rules() {
    let sandbox = Sandbox::new("rules_sub_agent");
    sandbox.write(".env", "SECRET=hunter2\n");
    settings(
        &sandbox,
        ".claude/settings.json",
        json!({"permissions": {"deny": ["Read(./.env)", "Bash(cat:*)"]}}),
    );
    let server = Server::start(vec![
        Reply::Sse(sse::tool_calls(&[(
            "a",
            "agent",
            json!({"task": "read it"}),
        )])),
        Reply::Sse(sse::tool_calls(&[
            ("s1", "read_file", json!({"file_path": ".env"})),
            ("s2", "grep", json!({"pattern": "hunter"})),
            ("s3", "bash", json!({"command": "cat .env"})),
        ])),
        Reply::Sse(sse::text("sub-agent report")),
        Reply::Sse(sse::text("done")),
    ]);
    assert_ran(&run(&["-p", "go", "--yes"], &server, &sandbox));
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "{requests:?}");
    let seen: Vec<String> = (requests[2].tool_results().into_iter())
        .map(|(_, text)| text)
        .collect();
    assert!(seen.iter().all(|r| !r.contains("hunter2")), "{seen:?}");
    assert!(
        seen[0].starts_with("Refused") && seen[2].starts_with("Refused"),
        "{seen:?}"
    );
}

/// In the REPL: an ask rule asks (every time: `a` allows that call only) even though bash is
/// allowed "always"; a write's question shows
/// the path, that it overwrites, its size and first lines; "always" there allows edits in the
/// project from then on, and the next write is not asked about.
#[test]
fn the_repl_asks_for_ask_rules_and_always_allows_the_projects_files() {
    let sandbox = Sandbox::new("rules_repl");
    sandbox.write("old.txt", "before\n");
    settings(
        &sandbox,
        ".corecoder/permissions.json",
        json!({"always": ["bash"]}),
    );
    settings(
        &sandbox,
        ".claude/settings.json",
        json!({"permissions": {"ask": ["Bash(touch asked:*)"]}}),
    );
    let write = |path: &str| json!({"file_path": path, "content": "first line\nsecond line\n"});
    let script = vec![
        Reply::Sse(sse::tool_calls(&[(
            "c1",
            "bash",
            json!({"command": "touch free"}),
        )])),
        Reply::Sse(sse::tool_calls(&[(
            "c2",
            "bash",
            json!({"command": "touch asked"}),
        )])),
        Reply::Sse(sse::tool_calls(&[("c3", "write_file", write("old.txt"))])),
        Reply::Sse(sse::tool_calls(&[("c4", "write_file", write("other.txt"))])),
        Reply::Sse(sse::text("all done")),
    ];
    let mut repl = Repl::start(&sandbox, &[], script);
    repl.enter("go");
    repl.expect(
        "Allow bash(touch asked -- a permission rule asks: Bash(touch asked:*); asked every \
         time)? [y] allow once  [a] allow, and ask again next time",
    );
    assert!(sandbox.path("free").exists(), "{}", repl.pty.screen());
    repl.pty.send("y\r");
    repl.expect(
        "Allow write_file(old.txt)? [y] allow once  [a] always allow edits in this project",
    );
    let screen = repl.pty.screen();
    let asked = screen.rfind("Allow write_file(old.txt)").unwrap();
    let shown = &screen[..asked];
    assert!(
        shown.contains("old.txt: replaces a file of 7 bytes; 2 lines, 23 bytes"),
        "{screen}"
    );
    assert!(
        shown.contains("first line") && shown.contains("second line"),
        "{screen}"
    );
    repl.pty.send("a\r");
    repl.expect("all done");
    assert!(sandbox.path("asked").exists() && sandbox.path("other.txt").exists());
    assert!(!repl.pty.screen().contains("Allow write_file(other.txt)"));
    let saved =
        std::fs::read_to_string(sandbox.home.join(".corecoder/project-rules.json")).unwrap();
    let project = sandbox.dir.canonicalize().unwrap();
    assert!(
        saved.contains(&format!("Edit(/{}/**)", project.display())),
        "{saved}"
    );
}
