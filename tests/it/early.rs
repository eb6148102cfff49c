//! Read-only calls that start while the model is still streaming the rest of its reply.

use crate::run::{Sandbox, run};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::json;
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// The start of a reply: a finished `read_file` call, then the first fragment of a second call.
fn first_call_then_second_begins(path: &str) -> String {
    let args = json!({"file_path": path}).to_string();
    sse::role()
        + &sse::call_start(0, "call_read", "read_file")
        + &sse::call_args(0, &args)
        + &sse::call_start(1, "call_glob", "glob")
}

/// The rest of that reply: the second call's arguments and the end.
fn rest_of_reply() -> String {
    sse::call_args(1, r#"{"pattern": "*.txt"}"#) + &sse::finish("tool_calls") + &sse::done()
}

/// Poll `pipe` (the test's own read-write end of the FIFO) until it holds no bytes: the moment
/// the tool read what was pre-filled. None if that did not happen within `give_up`.
fn wait_until_drained(pipe: &File, give_up: Duration) -> Option<Instant> {
    let deadline = Instant::now() + give_up;
    while Instant::now() < deadline {
        let mut queued: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer we pass, on an fd we own.
        let ok = unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut queued) } == 0;
        if ok && queued == 0 {
            return Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

/// The `read_file` call reads a FIFO the test filled beforehand (through its own read-write
/// descriptor, so the pipe exists with no reader waiting): the moment the pipe is empty is when
/// the tool ran. The reply streams for about 2 s after the call is complete; the tool must run
/// long before that.
#[test]
fn a_finished_read_only_call_runs_before_the_stream_ends() {
    let sandbox = Sandbox::new("early_start");
    // The rest of the reply trickles in over about two seconds after the first call is whole.
    let reply = |path: &str| {
        let mut tail = vec![sse::call_args(1, r#"{"pattern": "*.txt"}"#)];
        tail.extend((0..20).map(|_| ": keep-alive\n\n".to_string()));
        tail.push(sse::finish("tool_calls") + &sse::done());
        let head = first_call_then_second_begins(path);
        Reply::SseSlowTail {
            head,
            tail,
            pause_ms: 100,
        }
    };
    let next = Reply::Sse(sse::text("read it"));
    let requests = read_before_the_stream_ends(&sandbox, &["-p", "read the pipe"], reply, next);
    let results = requests[1].tool_results();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0].0, "call_read");
    assert!(results[0].1.contains("from the pipe"), "{results:?}");
}

/// Run `args` against `reply(path of a FIFO)` then `next`: the tool that reads the pre-filled
/// FIFO must have read it at least 1.5 s before the next request came. The requests, for more
/// checks (`responses.rs` runs the same through the Responses dialect).
pub fn read_before_the_stream_ends(
    sandbox: &Sandbox,
    args: &[&str],
    reply: impl FnOnce(&str) -> Reply,
    next: Reply,
) -> Vec<Recorded> {
    let fifo = sandbox.path("pipe.txt");
    let name = CString::new(fifo.to_string_lossy().as_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path; mkfifo touches nothing else.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0, "mkfifo");
    let mut pipe = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .expect("open the FIFO read-write");
    pipe.write_all(b"from the pipe\n")
        .expect("pre-fill the FIFO");
    let server = Server::start(vec![reply(&fifo.to_string_lossy()), next]);
    let opened = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| wait_until_drained(&pipe, Duration::from_secs(30)));
        let out = run(args, &server, sandbox);
        assert_eq!(out.code, 0, "{out:?}");
        watcher.join().expect("watcher")
    });
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let opened = opened.expect("the tool read the pipe");
    let stream_ended = requests[1].at;
    assert!(
        opened + Duration::from_millis(1500) < stream_ended,
        "the read started {:?} before the next request",
        stream_ended.duration_since(opened)
    );
    requests
}

/// The stream drops after the first call was already started; the retried stream brings the
/// same calls again, and each gets exactly one result.
#[test]
fn a_retried_stream_does_not_duplicate_results() {
    let sandbox = Sandbox::new("early_retry");
    sandbox.write("notes.txt", "some notes\n");
    let head = first_call_then_second_begins("notes.txt");
    let script = vec![
        Reply::SseThenDrop(head.clone()),
        Reply::Sse(head + &rest_of_reply()),
        Reply::Sse(sse::text("done")),
    ];
    let server = Server::start(script);
    let out = run(&["-p", "read the notes"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let results = requests[2].tool_results();
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["call_read", "call_glob"], "{results:?}");
    assert!(results[0].1.contains("some notes"), "{results:?}");
    assert!(results[1].1.contains("notes.txt"), "{results:?}");
}
