//! The two pipes of one MCP server, byte by byte: the reader thread's loop (stdout lines
//! routed to their callers, stderr's tail kept for the reason a server died) and the bounded
//! write to its non-blocking stdin.
//!
//! `mcp_wire.rs` (its parent) owns the process, the thread and the `Wire` both sides share, and
//! routes each line; this file is the I/O under them, and imports nothing of the parent. Of a
//! line it reads no more than the router needs (the id, the method, an error): a reply's
//! `result` goes to its caller as the line it came in, and `mcp_protocol.rs` or `mcp.rs` reads
//! it. It knows no MCP method.

use serde::Deserialize;
use serde_json::Value;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::process::{ChildStderr, ChildStdin, ChildStdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The longest stdout line kept; longer ones are not JSON we can use and are dropped.
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// How often a waiting caller looks at its cancel flag.
pub(crate) const CANCEL_POLL: Duration = Duration::from_millis(50);

/// The reader thread's loop: each stdout line goes to `on_line`; stderr is read (so a chatty
/// server never blocks on a full pipe) and only its tail kept. `poll(2)` rather than blocking
/// reads, so that `stop` ends the loop even when a stray process keeps the pipes open. Returns
/// why stdout ended, or `None` when `stop` ended it.
pub(crate) fn read_loop(
    mut stdout: ChildStdout,
    mut stderr: ChildStderr,
    stop: &AtomicBool,
    on_line: &mut dyn FnMut(Vec<u8>),
) -> Option<String> {
    let (mut line, mut stderr_tail, mut chunk) = (Vec::new(), Vec::new(), [0u8; 8192]);
    let pollfd = |fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let mut fds = [pollfd(stdout.as_raw_fd()), pollfd(stderr.as_raw_fd())];
    loop {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        // A negative fd (stderr closed) is skipped by poll.
        if unsafe { libc::poll(fds.as_mut_ptr(), 2, 100) } <= 0 {
            continue;
        }
        if fds[1].revents != 0 {
            match stderr.read(&mut chunk) {
                Ok(n) if n > 0 => stderr_tail.extend_from_slice(&chunk[..n]),
                _ => fds[1].fd = -1,
            }
            stderr_tail.drain(..stderr_tail.len().saturating_sub(2000));
        }
        if fds[0].revents != 0 {
            let Ok(n @ 1..) = stdout.read(&mut chunk) else {
                return Some(exit_reason(&stderr_tail));
            };
            for &byte in &chunk[..n] {
                match byte {
                    b'\n' => on_line(std::mem::take(&mut line)),
                    // A line past the cap is dropped as it comes, never held whole: it restarts
                    // as a NUL byte, which no JSON begins with, so its end is skipped too (its
                    // caller then gets the call's timeout).
                    _ if line.len() >= MAX_LINE_BYTES => line = vec![0],
                    _ => line.push(byte),
                }
            }
        }
    }
}

fn exit_reason(stderr_tail: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr_tail);
    match text.lines().rev().find(|line| !line.trim().is_empty()) {
        Some(line) => format!("the server exited; its last error output: {}", line.trim()),
        None => "the server exited".to_string(),
    }
}

/// What the reader looks at in a line; `result` is skipped unparsed (its caller reads it), so
/// a huge answer is never built as a tree here.
#[derive(Deserialize)]
pub(crate) struct Envelope {
    pub(crate) id: Option<Value>,
    pub(crate) method: Option<Value>,
    pub(crate) error: Option<Value>,
}

/// What a reply line means for its caller: the line itself, or the server's error in words.
pub(crate) fn reply_of(error: Option<Value>, line: Vec<u8>) -> Result<Vec<u8>, String> {
    let Some(error) = error else {
        return Ok(line);
    };
    let text = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message");
    let code = error.get("code").unwrap_or(&Value::Null);
    Err(format!(
        "the MCP server answered with an error: {text} (code {code})"
    ))
}

/// The `result` of a reply line as a tree (`Null` when it has none).
pub(crate) fn result_of(line: &[u8]) -> Result<Value, String> {
    #[derive(Deserialize)]
    struct Answer {
        #[serde(default)]
        result: Value,
    }
    let answer: Answer =
        serde_json::from_slice(line).map_err(|e| format!("a reply that is not JSON-RPC ({e})"))?;
    Ok(answer.result)
}

/// Why a write stopped before its last byte.
pub(crate) enum Stall {
    Deadline,
    Cancelled,
    Failed(std::io::Error),
}

/// Write all of `bytes` to the non-blocking `pipe`, waiting for room with `poll(2)`. Returns
/// how many bytes went, and why it stopped short, if it did.
pub(crate) fn write_by(
    pipe: &mut ChildStdin,
    bytes: &[u8],
    deadline: Instant,
    cancel: &AtomicBool,
) -> (usize, Option<Stall>) {
    let mut written = 0;
    while written < bytes.len() {
        match pipe.write(&bytes[written..]) {
            Ok(n) => written += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(Instant::now());
                if cancel.load(Ordering::Relaxed) {
                    return (written, Some(Stall::Cancelled));
                }
                if left.is_zero() {
                    return (written, Some(Stall::Deadline));
                }
                let mut room = libc::pollfd {
                    fd: pipe.as_raw_fd(),
                    events: libc::POLLOUT,
                    revents: 0,
                };
                let ms = left.min(CANCEL_POLL).as_millis().max(1) as i32;
                unsafe { libc::poll(&mut room, 1, ms) };
            }
            Err(e) => return (written, Some(Stall::Failed(e))),
        }
    }
    (written, None)
}

/// Make our end of the server's stdin non-blocking (the flag is on our open file only).
pub(crate) fn non_blocking(fd: i32) {
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}
