//! A reader that goes away (`corecoder -p … | head -1`): the binary stops the run and ends
//! quietly with exit code 141 (as a program killed by SIGPIPE), never a panic, and the demo
//! still removes its temp project.

use crate::run::{Sandbox, spawn_with};
use crate::server::{Reply, Server};
use crate::sse;
use std::io::Read;
use std::time::{Duration, Instant};

/// Which of the binary's outputs the test closes at once.
enum Closed {
    Stdout,
    Stderr,
}

/// Start the binary, close one of its outputs at once, read the other to its end.
fn run_closing(
    args: &[&str],
    env: &[(&str, &str)],
    sandbox: &Sandbox,
    closed: Closed,
) -> (i32, String) {
    let mut child = spawn_with(args, env, sandbox);
    let mut open: Box<dyn Read> = match closed {
        Closed::Stdout => {
            drop(child.stdout.take());
            Box::new(child.stderr.take().expect("piped stderr"))
        }
        Closed::Stderr => {
            drop(child.stderr.take());
            Box::new(child.stdout.take().expect("piped stdout"))
        }
    };
    let mut text = String::new();
    let _ = open.read_to_string(&mut text);
    (wait_code(&mut child), text)
}

fn wait_code(child: &mut std::process::Child) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return status.code().unwrap_or(-1);
        }
        assert!(Instant::now() < deadline, "the run did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A long streamed answer to a closed stdout: exit 141, no panic, and the run stops (the
/// second request of the script is never sent).
#[test]
fn a_closed_stdout_ends_the_run_quietly() {
    for format in ["text", "stream-json"] {
        let sandbox = Sandbox::new(&format!("closed_stdout_{format}"));
        let long: String = (0..2000).map(|n| format!("line {n}\n")).collect();
        let script = vec![
            Reply::SseSlowTail {
                head: sse::role(),
                tail: vec![
                    sse::content(&long),
                    sse::content(&long),
                    sse::finish("stop") + &sse::done(),
                ],
                pause_ms: 300,
            },
            Reply::Sse(sse::text("never asked")),
        ];
        let server = Server::start(script);
        let url = server.url();
        let env = [
            ("CORECODER_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", url.as_str()),
        ];
        let args = ["-p", "go", "--output-format", format];
        let (code, stderr) = run_closing(&args, &env, &sandbox, Closed::Stdout);
        assert!(!stderr.contains("panicked"), "{format}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{format}: {stderr}");
        if format == "stream-json" {
            assert_eq!(code, 141, "{format}: {stderr}");
        } else {
            // Piped text prints the answer once at the end: the write that fails is the last.
            assert!(code == 141 || code == 0, "{format}: exit {code}: {stderr}");
        }
        assert_eq!(server.requests().len(), 1, "{format}");
    }
}

/// `--demo` with its stdout closed: no panic, and its temp project is removed.
#[test]
fn the_demo_with_a_closed_stdout_cleans_up() {
    let sandbox = Sandbox::new("closed_stdout_demo");
    let (code, stderr) = run_closing(&["--demo"], &[], &sandbox, Closed::Stdout);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(code == 141 || code == 0, "exit {code}: {stderr}");
    let project = (stderr.lines())
        .find_map(|line| line.split(" drives the real agent in ").nth(1))
        .expect("the demo names its project");
    assert!(
        !std::path::Path::new(project.trim()).exists(),
        "{project} left behind"
    );
}

/// A closed stderr (tool lines, notices) is no reason to panic either; the answer still
/// reaches stdout.
#[test]
fn a_closed_stderr_is_not_a_panic() {
    let sandbox = Sandbox::new("closed_stderr");
    sandbox.write("notes.txt", "notes\n");
    let call = sse::tool_calls(&[(
        "c1",
        "read_file",
        serde_json::json!({"file_path": "notes.txt"}),
    )]);
    let server = Server::start(vec![Reply::Sse(call), Reply::Sse(sse::text("read"))]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let (code, stdout) = run_closing(&["-p", "go"], &env, &sandbox, Closed::Stderr);
    assert_ne!(code, 101, "a panic: {stdout}");
    assert!(code == 141 || code == 0, "exit {code}");
}
