//! Escaping `--sandbox` the way a prompt-injected model would, through the binary: each test
//! tries an attack and shows it fail (or, for the one gap we document, succeed as documented).
//!
//! Layout (from `safety::with_outside`): HOME is the sandbox root, the working directory is
//! `HOME/work`, TMPDIR is `HOME/tmp`, and `HOME/outside` is outside every writable root. The
//! tests run as whoever runs `cargo test` (root on the build machine: Landlock binds root too).
//! They skip, saying so, where the kernel has no Landlock.

use crate::run::run_with;
use crate::safety::{bash_once, calls_in_turn, landlock_available, with_outside};
use crate::server::{Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const WORKSPACE: [&str; 2] = ["--sandbox", "workspace-write"];

fn bash(command: &str) -> (&'static str, Value) {
    ("bash", json!({"command": command}))
}

fn write(path: &str) -> (&'static str, Value) {
    (
        "write_file",
        json!({"file_path": path, "content": "export PWNED=1\n"}),
    )
}

/// A file `f` in `dir` with mode 0644, for the metadata tests to try to change.
fn file_with_mode_644(dir: &str) -> std::path::PathBuf {
    let target = Path::new(dir).join("f");
    std::fs::write(&target, "x").expect("write");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    target
}

/// `-p go --yes --sandbox workspace-write` against `script`, TMPDIR `tmp`: what it printed and
/// the requests the server saw.
fn run_in_workspace(
    sandbox: &crate::run::Sandbox,
    tmp: &str,
    script: Vec<Reply>,
) -> (crate::run::Output, Vec<crate::server::Recorded>) {
    let server = Server::start(script);
    let url = server.url();
    let env = [
        ("OPENAI_API_KEY", "sk-test"),
        ("TMPDIR", tmp),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let output = run_with(
        &["-p", "go", "--yes", "--sandbox", "workspace-write"],
        &env,
        sandbox,
    );
    (output, server.requests())
}

/// `cd /`, `cd ~`, `cd ..` and `cd /abs` move bash, never the sandbox: every write after them
/// is refused, and a write back in the working directory still works.
#[test]
fn cd_does_not_move_the_writable_roots() {
    if !landlock_available("escape::cd_does_not_move_the_writable_roots") {
        return;
    }
    let (sandbox, tmp, outside) = with_outside("escape_cd");
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    let work = sandbox.dir.display().to_string();
    let calls = [
        bash(&format!("cd {outside}")),
        bash("touch by-abs-cd"),
        bash("cd /"),
        bash(&format!("touch {outside}/by-root-cd")),
        bash("cd ~"),
        bash("touch by-home-cd"),
        bash(&format!("cd {work} && cd ..")),
        bash("touch by-dotdot-cd; mkdir by-dotdot-dir"),
        bash(&format!("cd {work} && touch back-inside")),
    ];
    let results = calls_in_turn(&sandbox, &WORKSPACE, &env, &calls);
    for at in [1, 3, 5, 7] {
        assert!(results[at].contains("Permission denied"), "{results:?}");
    }
    let home = &sandbox.home;
    for escaped in ["outside/by-abs-cd", "outside/by-root-cd", "by-home-cd"] {
        assert!(!home.join(escaped).exists(), "{escaped}: {results:?}");
    }
    assert!(!home.join("by-dotdot-cd").exists(), "{results:?}");
    assert!(!home.join("by-dotdot-dir").exists(), "{results:?}");
    assert!(sandbox.path("back-inside").exists(), "{results:?}");
}

/// `write_file` under `--yes` obeys the same roots as bash: `~/.bashrc`, `../x`, an absolute
/// path, a symlink out of the workspace and a write after `cd /` are refused; the working and
/// temp directories are not. `edit_file` outside is refused and leaves the file alone.
#[test]
fn write_and_edit_file_obey_the_roots_under_yes() {
    if !landlock_available("escape::write_and_edit_file_obey_the_roots_under_yes") {
        return;
    }
    let (sandbox, tmp, outside) = with_outside("escape_write");
    std::os::unix::fs::symlink(&outside, sandbox.path("link")).expect("symlink");
    std::fs::write(Path::new(&outside).join("kept.txt"), "original\n").expect("write");
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    let after_cd_root = format!("{}-after-cd-root.txt", sandbox.home.display());
    let calls = [
        write("~/.bashrc"),
        write("../escape.txt"),
        write(&format!("{outside}/abs.txt")),
        write("link/through-link.txt"),
        write("sub/../../dotdot.txt"),
        (
            "edit_file",
            json!({"file_path": format!("{outside}/kept.txt"),
                   "old_string": "original", "new_string": "changed"}),
        ),
        write("sub/inside.txt"),
        write(&format!("{tmp}/in-tmp.txt")),
        bash("cd /"),
        // Relative to `/` now, and landing in the real temp dir (not TMPDIR): outside.
        write(&after_cd_root[1..]),
    ];
    let results = calls_in_turn(&sandbox, &WORKSPACE, &env, &calls);
    for at in [0, 1, 2, 3, 4, 5, 9] {
        assert!(
            results[at].contains("refused by --sandbox workspace-write"),
            "{at}: {results:?}"
        );
    }
    let home = &sandbox.home;
    for escaped in [".bashrc", "escape.txt", "dotdot.txt", "outside/abs.txt"] {
        assert!(!home.join(escaped).exists(), "{escaped}: {results:?}");
    }
    assert!(
        !home.join("outside/through-link.txt").exists(),
        "{results:?}"
    );
    assert!(!Path::new(&after_cd_root).exists(), "{results:?}");
    let kept = std::fs::read_to_string(home.join("outside/kept.txt")).expect("kept");
    assert_eq!(kept, "original\n");
    assert!(sandbox.path("sub/inside.txt").exists(), "{results:?}");
    assert!(Path::new(&tmp).join("in-tmp.txt").exists(), "{results:?}");
}

/// `--add-dir DIR` is the one way to widen the roots: bash and write_file may then write there.
#[test]
fn add_dir_widens_the_roots_for_bash_and_write_file() {
    if !landlock_available("escape::add_dir_widens_the_roots_for_bash_and_write_file") {
        return;
    }
    let (sandbox, tmp, outside) = with_outside("escape_add_dir");
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    let flags = ["--sandbox", "workspace-write", "--add-dir", "../outside"];
    let calls = [
        bash(&format!("touch {outside}/by-bash")),
        write(&format!("{outside}/by-tool.txt")),
    ];
    let results = calls_in_turn(&sandbox, &flags, &env, &calls);
    assert!(Path::new(&outside).join("by-bash").exists(), "{results:?}");
    assert!(
        Path::new(&outside).join("by-tool.txt").exists(),
        "{results:?}"
    );
    let missing = [
        "--sandbox",
        "workspace-write",
        "--add-dir",
        "nowhere",
        "-p",
        "x",
    ];
    let missing = run_with(&missing, &env, &sandbox);
    assert_eq!(missing.code, 2, "{missing:?}");
    assert!(missing.stderr.contains("--add-dir"), "{missing:?}");
}

/// In read-only mode `chmod`, `chown`, `touch` (utimensat) and `setxattr` fail everywhere, so
/// `chmod -R 000 ~` cannot happen: Landlock cannot see them, the seccomp filter does.
#[test]
fn read_only_refuses_metadata_changes() {
    if !landlock_available("escape::read_only_refuses_metadata_changes") {
        return;
    }
    let (sandbox, tmp, outside) = with_outside("escape_chmod_ro");
    let target = file_with_mode_644(&outside);
    let before = std::fs::metadata(&target).expect("meta");
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    let f = target.display();
    let command = format!(
        "chmod 000 {f}; chmod -R 000 {outside}; chown 65534 {f}; touch -d 2001-01-01 {f}; \
         python3 -c 'import os; os.utime(\"{f}\", (1, 1))' 2>&1 | tail -1; \
         python3 -c 'import os; os.setxattr(\"{f}\", \"user.x\", b\"1\")' 2>&1 | tail -1; \
         python3 -c 'import ctypes as c; l = c.CDLL(None, use_errno=True); \
           l.syscall(425, 1, None); print(\"io_uring_setup errno\", c.get_errno())'; \
         echo end"
    );
    let result = bash_once(&sandbox, &["--sandbox", "read-only"], &env, &command);
    assert!(result.contains("Operation not permitted"), "{result}");
    assert!(result.contains("end"), "{result}");
    if result.contains("io_uring_setup errno") {
        assert!(
            result.contains("io_uring_setup errno 1\n"),
            "EPERM expected: {result}"
        );
    }
    let after = std::fs::metadata(&target).expect("meta");
    assert_eq!(after.permissions().mode() & 0o777, 0o644, "{result}");
    use std::os::unix::fs::MetadataExt;
    assert_eq!((after.uid(), after.mtime()), (before.uid(), before.mtime()));
    let xattr = std::process::Command::new("getfattr").arg(&target).output();
    if let Ok(listed) = xattr {
        assert!(!String::from_utf8_lossy(&listed.stdout).contains("user.x"));
    }
}

/// Read-only mode has no writable root at all: `write_file` and `edit_file` are refused even
/// in the working directory, under `--yes`, and the file stays as it was.
#[test]
fn read_only_refuses_write_and_edit_file_everywhere() {
    if !landlock_available("escape::read_only_refuses_write_and_edit_file_everywhere") {
        return;
    }
    let (sandbox, tmp, _) = with_outside("escape_write_ro");
    sandbox.write("kept.txt", "original\n");
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    let edit = json!({"file_path": "kept.txt", "old_string": "original", "new_string": "x"});
    let calls = [
        write("new.txt"),
        ("edit_file", edit),
        write(&format!("{tmp}/t.txt")),
    ];
    let results = calls_in_turn(&sandbox, &["--sandbox", "read-only"], &env, &calls);
    for result in &results {
        assert!(
            result.contains("refused by --sandbox read-only"),
            "{results:?}"
        );
    }
    assert!(!sandbox.path("new.txt").exists(), "{results:?}");
    assert!(!Path::new(&tmp).join("t.txt").exists(), "{results:?}");
    assert_eq!(sandbox.read("kept.txt"), "original\n");
}

/// The documented gap: in workspace-write mode a seccomp filter cannot tell a path inside the
/// roots from one outside, so `chmod` outside still succeeds. This test keeps docs/safety.md,
/// the banner and SECURITY.md honest: if it ever fails, the gap is closed and they must change.
#[test]
fn workspace_write_does_not_stop_chmod_outside_as_documented() {
    if !landlock_available("escape::workspace_write_does_not_stop_chmod_outside_as_documented") {
        return;
    }
    let (sandbox, tmp, outside) = with_outside("escape_chmod_ww");
    let target = file_with_mode_644(&outside);
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    let command = format!(
        "chmod 600 {} && chmod +x inside.sh; echo end",
        target.display()
    );
    sandbox.write("inside.sh", "#!/bin/sh\n");
    let result = bash_once(&sandbox, &WORKSPACE, &env, &command);
    assert!(result.contains("end"), "{result}");
    let mode = std::fs::metadata(&target)
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{result}");
    let inside = std::fs::metadata(sandbox.path("inside.sh")).expect("meta");
    assert_eq!(inside.permissions().mode() & 0o100, 0o100, "{result}");
}

/// The race against `write_file`'s check: a process that outlived its bash call (`setsid`)
/// keeps swapping `d` between a real directory and a symlink out of the workspace while the
/// model writes `d/pwned-N` a hundred times. The check may pass while `d` is real and the
/// write happen while it is a symlink; the write runs under Landlock too, so it still cannot
/// land outside. (Whether a given write is refused, fails or lands inside varies; that
/// nothing lands outside does not.)
#[test]
fn a_symlink_swapped_in_after_the_check_cannot_lead_a_write_outside() {
    if !landlock_available(
        "escape::a_symlink_swapped_in_after_the_check_cannot_lead_a_write_outside",
    ) {
        return;
    }
    let (sandbox, tmp, outside) = with_outside("escape_race");
    let swapper = format!(
        "import os, time\n\
         os.mkdir('real'); os.symlink('{outside}', 'link')\n\
         end = time.time() + 20\n\
         while not os.path.exists('stop') and time.time() < end:\n    \
             for a, b in (('real', 'd'), ('d', 'real'), ('link', 'd'), ('d', 'link')):\n        \
                 try: os.rename(a, b)\n        \
                 except OSError: pass\n"
    );
    sandbox.write("swap.py", &swapper);
    let start = "setsid python3 swap.py > /dev/null 2>&1 < /dev/null & sleep 0.3; echo started";
    let writes: Vec<(String, String, Value)> = (0..100)
        .map(|i| {
            let args = json!({"file_path": format!("d/pwned-{i}"), "content": "x"});
            (format!("w{i}"), "write_file".to_string(), args)
        })
        .collect();
    let batch: Vec<(&str, &str, Value)> = (writes.iter())
        .map(|(id, name, args)| (id.as_str(), name.as_str(), args.clone()))
        .collect();
    let script = vec![
        Reply::Sse(sse::tool_calls(&[(
            "call_0",
            "bash",
            json!({"command": start}),
        )])),
        Reply::Sse(sse::tool_calls(&batch)),
        Reply::Sse(sse::text("done")),
    ];
    let (output, _) = run_in_workspace(&sandbox, &tmp, script);
    sandbox.write("stop", "");
    assert_eq!(output.code, 0, "{output:?}");
    // The swapper did run (else the test proves nothing): its symlink is there, as `link` or `d`.
    let swapped = ["link", "d"]
        .iter()
        .any(|name| sandbox.path(name).is_symlink());
    assert!(swapped, "the swapper never started: {output:?}");
    let landed: Vec<String> = (std::fs::read_dir(&outside).expect("outside").flatten())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(landed.is_empty(), "written outside: {landed:?}");
}

/// The gap is said where the user looks: the interactive banner in workspace-write mode.
#[test]
fn the_banner_states_the_workspace_write_gap() {
    if !landlock_available("escape::the_banner_states_the_workspace_write_gap") {
        return;
    }
    let sandbox = crate::run::Sandbox::new("escape_banner");
    let repl = crate::driver::Repl::start(&sandbox, &WORKSPACE, Vec::new());
    let screen = repl.pty.screen();
    assert!(screen.contains("sandbox workspace-write"), "{screen}");
    assert!(screen.contains("can still chmod, chown"), "{screen}");
}

/// A sub-agent gets the same roots, not new ones from where it happens to be: its bash after
/// `cd /` and its `write_file` outside are refused like the parent's.
#[test]
fn a_sub_agent_is_held_by_the_same_roots() {
    if !landlock_available("escape::a_sub_agent_is_held_by_the_same_roots") {
        return;
    }
    let (sandbox, tmp, _) = with_outside("escape_sub_agent");
    let task = json!({"task": "look around"});
    let (bash_args, write_args) = (
        bash("cd / && touch $OLDPWD/../escaped-bash").1,
        write("~/.bashrc").1,
    );
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("call_agent", "agent", task)])),
        Reply::Sse(sse::tool_calls(&[("sub_1", "bash", bash_args)])),
        Reply::Sse(sse::tool_calls(&[("sub_2", "write_file", write_args)])),
        Reply::Sse(sse::text("sub-agent report")),
        Reply::Sse(sse::text("done")),
    ];
    let (output, requests) = run_in_workspace(&sandbox, &tmp, script);
    assert_eq!(output.code, 0, "{output:?}");
    assert_eq!(requests.len(), 5, "{output:?}");
    let results: Vec<String> = (requests[3].tool_results().into_iter())
        .map(|(_, text)| text)
        .collect();
    assert!(results[0].contains("Permission denied"), "{results:?}");
    assert!(
        results[1].contains("refused by --sandbox workspace-write"),
        "{results:?}"
    );
    assert!(!sandbox.home.join("escaped-bash").exists(), "{results:?}");
    assert!(!sandbox.home.join(".bashrc").exists(), "{results:?}");
}
