//! Tools stay bounded and interruptible (issue 16, part 6), each tried through the binary: a
//! read on a hung mount (`fuse::HungMount`) gives up at Ctrl+C and at the deadline, huge
//! paths and patterns are neither echoed whole nor compiled, and session names cannot be
//! paths or links. The hung-mount tests need root and `/dev/fuse`; elsewhere they print why
//! and pass without running.

use crate::driver::Repl;
use crate::fuse::HungMount;
use crate::run::{Sandbox, finish, run, spawn_with};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// A 10 MB argument, as a prompt-injected model might send.
const HUGE: usize = 10_000_000;

fn mount_or_skip(sandbox: &Sandbox, test: &str) -> Option<HungMount> {
    match HungMount::mount(&sandbox.path("mnt")) {
        Ok(mount) => Some(mount),
        Err(why) => {
            eprintln!("{test}: skipped: {why}");
            None
        }
    }
}

fn call(id: &str, name: &str, args: Value) -> Reply {
    Reply::Sse(sse::tool_calls(&[(id, name, args)]))
}

/// The first Ctrl+C frees read_file, grep and glob stuck on a hung mount (a file whose read,
/// a directory whose listing never returns): the prompt is back at once, and the model reads
/// that each call gave up.
#[test]
fn ctrl_c_frees_a_read_stuck_on_a_hung_mount() {
    let sandbox = Sandbox::new("bounds_ctrl_c");
    let calls = [
        ("read_file", json!({"file_path": "mnt/hung.txt"})),
        ("grep", json!({"pattern": "x", "path": "mnt/hung.txt"})),
        ("grep", json!({"pattern": "x", "path": "mnt"})),
        ("glob", json!({"pattern": "*", "path": "mnt"})),
    ];
    let mut script: Vec<Reply> = (calls.iter().enumerate())
        .map(|(n, (name, args))| call(&format!("call_{n}"), name, args.clone()))
        .collect();
    script.push(Reply::Sse(sse::text("after")));
    let mut repl = Repl::start(&sandbox, &[], script);
    // Declared after the REPL, so it is dropped first: its reads are answered before the
    // REPL's process is killed and waited for.
    let Some(mount) = mount_or_skip(&sandbox, "ctrl_c_frees_a_read_stuck_on_a_hung_mount") else {
        return;
    };
    for (n, (name, _)) in calls.iter().enumerate() {
        repl.enter(&format!("call {n}"));
        let stuck = mount.wait_for_stuck(Duration::from_secs(10));
        assert!(stuck, "{name}: {}", repl.pty.screen());
        std::thread::sleep(Duration::from_millis(300));
        let pressed = Instant::now();
        repl.mark = repl.pty.screen().len();
        repl.pty.send("\x03");
        repl.idle();
        let took = pressed.elapsed();
        eprintln!("{name} {n}: the prompt was back {took:?} after Ctrl+C");
        assert!(
            took < Duration::from_secs(5),
            "{name} {n}: back after {took:?}"
        );
    }
    repl.turn("and now", "after");
    let requests = repl.requests(calls.len() + 1);
    let last = &requests[calls.len()];
    let results = last.tool_results();
    assert_eq!(results.len(), calls.len(), "{results:?}");
    for (id, text) in &results {
        assert!(text.contains("gave up"), "{id}: {text}");
        assert!(text.contains("interrupted (Ctrl+C)"), "{id}: {text}");
    }
    last.assert_valid_history();
}

/// Without a Ctrl+C, a read on a hung mount gives up at read_file's deadline (20 s) and the
/// session goes on.
#[test]
fn a_read_stuck_on_a_hung_mount_gives_up_at_the_deadline() {
    let sandbox = Sandbox::new("bounds_deadline");
    let server = Server::start(vec![
        call(
            "call_read",
            "read_file",
            json!({"file_path": "mnt/hung.txt"}),
        ),
        Reply::Sse(sse::text("done")),
    ]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let child = spawn_with(&["-p", "go"], &env, &sandbox);
    let Some(mount) = mount_or_skip(&sandbox, "a_read_stuck_on_a_hung_mount_gives_up") else {
        drop(finish(child));
        return;
    };
    assert!(
        mount.wait_for_stuck(Duration::from_secs(10)),
        "no read reached the mount"
    );
    let arrived = server.wait_for_requests(2, Duration::from_secs(45));
    let requests = server.requests();
    // Answer the held read only now, so the binary can exit (a hung read holds its exit too).
    drop(mount);
    let output = finish(child);
    assert!(arrived, "the read never gave up: {output:?}");
    let waited = requests[1].at - requests[0].at;
    eprintln!("read_file gave up on the hung mount after {waited:?}");
    assert!(waited >= Duration::from_secs(19), "{waited:?}");
    assert!(waited < Duration::from_secs(40), "{waited:?}");
    let result = requests[1].last_tool_result();
    assert!(result.contains("had not returned after 20 s"), "{result}");
    assert_eq!(output.code, 0, "{output:?}");
}

/// The size of a request as sent.
fn size(request: &Recorded) -> usize {
    match request.header("content-length") {
        Some(length) => length.parse().unwrap_or(0),
        None => request.body.to_string().len(),
    }
}

/// A 10 MB path or pattern comes back as a short error: the next request carries the call's
/// own arguments once, not twice. (Before: a 10 MB path made it 21 MB.)
#[test]
fn huge_paths_and_patterns_are_not_echoed_whole() {
    let sandbox = Sandbox::new("bounds_echo");
    let huge = "p".repeat(HUGE);
    let cases = [
        ("read_file", json!({"file_path": huge})),
        ("grep", json!({"pattern": "x", "path": huge})),
        ("grep", json!({"pattern": huge})),
        ("glob", json!({"pattern": huge})),
    ];
    for (n, (name, args)) in cases.into_iter().enumerate() {
        let script = vec![call("call_huge", name, args), Reply::Sse(sse::text("done"))];
        let server = Server::start(script);
        let output = run(&["-p", "go"], &server, &sandbox);
        assert_eq!(output.code, 0, "{name} {n}: {output:?}");
        let requests = server.requests();
        let next = size(&requests[1]);
        eprintln!("{name} {n}: the request after a 10 MB argument is {next} bytes");
        let result = requests[1].last_tool_result();
        let start = &result[..200.min(result.len())];
        assert!(result.starts_with("Error"), "{name} {n}: {start}");
        let length = result.len();
        assert!(length < 1000, "{name} {n}: a {length} byte result");
        assert!(next < HUGE + 100_000, "{name} {n}: {next} bytes");
    }
}

/// A 10 MB pattern is refused before it is parsed: the peak memory of the whole run stays
/// far below the 1 GB its parse took. The child's own peak RSS comes from `wait4`.
#[test]
fn a_huge_pattern_is_refused_without_compiling_it() {
    let sandbox = Sandbox::new("bounds_pattern");
    let huge = "p".repeat(HUGE);
    let script = vec![
        call("call_grep", "grep", json!({"pattern": huge})),
        Reply::Sse(sse::text("done")),
    ];
    let server = Server::start(script);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let mut child = spawn_with(&["-p", "go"], &env, &sandbox);
    let pipes = (child.stdout.take(), child.stderr.take());
    let usage = std::thread::scope(|scope| {
        // Drained while it runs, so a full pipe cannot stall it.
        scope.spawn(|| {
            pipes
                .0
                .map(|mut out| std::io::copy(&mut out, &mut std::io::sink()))
        });
        scope.spawn(|| {
            pipes
                .1
                .map(|mut err| std::io::copy(&mut err, &mut std::io::sink()))
        });
        let (pid, mut status) = (child.id() as libc::pid_t, 0);
        // SAFETY: an all-zero `rusage` is valid; `wait4` reaps our own child and fills it.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
        usage
    });
    // Already reaped by `wait4`; this only tells `Child` so.
    let _ = child.wait();
    let peak_mb = usage.ru_maxrss / 1024;
    eprintln!("a 10 MB grep pattern: peak RSS {peak_mb} MB");
    let result = server.requests()[1].last_tool_result();
    assert!(
        result.contains("grep takes up to 8192"),
        "{}",
        &result[..200.min(result.len())]
    );
    assert!(peak_mb < 300, "peak RSS {peak_mb} MB");
}

/// `-r` and `/save` take a session id, never a path: `../../x` and `a/b` are refused, not
/// cut to `x` and `b`.
#[test]
fn session_names_that_are_paths_are_refused() {
    let sandbox = Sandbox::new("bounds_session_paths");
    let sessions = sandbox.home.join(".corecoder/sessions");
    std::fs::create_dir_all(&sessions).expect("sessions dir");
    // A real session named `x`: `-r ../../x` must not quietly resume it.
    std::fs::write(
        sessions.join("x.jsonl"),
        "{\"role\":\"user\",\"content\":\"old\"}\n",
    )
    .expect("x");
    for name in ["../../x", "a/x", "/x"] {
        let server = Server::start(vec![Reply::Sse(sse::text("should not be asked"))]);
        let output = run(&["-r", name, "-p", "hi"], &server, &sandbox);
        assert_eq!(output.code, 2, "{name}: {output:?}");
        assert!(output.stderr.contains("is a path"), "{name}: {output:?}");
        assert!(server.requests().is_empty(), "{name}: a request was sent");
    }
    let mut repl = Repl::start(&sandbox, &[], vec![]);
    repl.turn("/save a/b", "Not saved");
    assert!(
        repl.pty.screen().contains("is a path"),
        "{}",
        repl.pty.screen()
    );
    assert!(!sessions.join("b.jsonl").exists());
}

/// `-r NAME` where NAME.jsonl is a symlink: refused, and the file it points at is untouched.
#[test]
fn a_session_file_that_is_a_symlink_is_not_followed() {
    let sandbox = Sandbox::new("bounds_session_link");
    let sessions = sandbox.home.join(".corecoder/sessions");
    std::fs::create_dir_all(&sessions).expect("sessions dir");
    let target = sandbox.home.join(".bashrc");
    let line = "{\"role\":\"user\",\"content\":\"planted\"}\n";
    std::fs::write(&target, line).expect("target");
    std::os::unix::fs::symlink(&target, sessions.join("planted.jsonl")).expect("symlink");
    let server = Server::start(vec![Reply::Sse(sse::text("should not be asked"))]);
    let output = run(&["-r", "planted", "-p", "hi"], &server, &sandbox);
    assert_eq!(output.code, 2, "{output:?}");
    assert!(server.requests().is_empty(), "a request was sent");
    assert!(output.stderr.contains("symbolic link"), "{output:?}");
    assert_eq!(std::fs::read_to_string(&target).expect("target"), line);
}
