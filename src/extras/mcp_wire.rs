//! The wire to one MCP server process: JSON-RPC lines out on stdin, a reader thread routing
//! replies from stdout to their callers by id.
//!
//! `mcp.rs` decides which servers run and what their tools are; this file only starts a
//! process, sends messages, waits for the reply with a given id, and stops the process (close
//! stdin, wait, then kill its group) when the `Link` is dropped. It knows no MCP method but
//! answering the server's `ping`. It imports nothing from `mcp.rs`: how to start a server
//! (`ServerConfig`) is defined here, and `mcp.rs` and `mcp_config.rs` take it from here.

use crate::tools::support::process::kill_group;
use crossbeam_channel::{RecvTimeoutError, Sender};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How long a server may take to exit on its own once its stdin is closed.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// Why a server is down after we stopped it ourselves.
pub const STOPPED: &str = "stopped by corecoder";
/// The longest stdout line kept; longer ones are not JSON we can use and are dropped.
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// How to start one server: an entry of the config files (`mcp_config.rs` reads them).
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// One running server process: the wire to it, the process and the thread reading it.
pub struct Link {
    pub wire: Arc<Wire>,
    child: Child,
    reader: Option<JoinHandle<()>>,
}

/// What callers and the reader thread share.
pub struct Wire {
    stdin: Mutex<Option<ChildStdin>>,
    next_id: AtomicU64,
    /// Callers waiting for a reply, by request id; `Err` once stdout closed, saying why.
    waiting: Mutex<Result<HashMap<u64, Sender<Reply>>, String>>,
    /// Set by `Link::drop`, so the reader stops even if a stray grandchild keeps stdout open.
    stop: AtomicBool,
}

type Reply = Result<Value, String>;

impl Link {
    pub fn spawn(config: &ServerConfig) -> Result<Link, String> {
        let mut server = Command::new(&config.command);
        // The secret proxy variables kept for our own requests stay ours (`secrets.rs`);
        // an `env` entry in the config may still give one.
        crate::extras::secrets::keep_from_child(&mut server);
        let mut child = server
            .args(&config.args)
            .envs(config.env.iter().cloned())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so stopping it also stops what it started (npx → node).
            .process_group(0)
            .spawn()
            .map_err(|e| format!("could not start `{}`: {e}", config.command))?;
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let waiting = Mutex::new(Ok(HashMap::new()));
        let (next_id, stop) = (AtomicU64::new(1), AtomicBool::new(false));
        let wire = Arc::new(Wire {
            stdin: Mutex::new(stdin),
            next_id,
            waiting,
            stop,
        });
        let reader_wire = Arc::clone(&wire);
        let reader = match (stdout, stderr) {
            (Some(out), Some(err)) => {
                Some(thread::spawn(move || read_loop(&reader_wire, out, err)))
            }
            _ => None,
        };
        Ok(Link {
            wire,
            child,
            reader,
        })
    }
}

impl Drop for Link {
    /// Close stdin (the stdio transport's way to ask for an exit), wait, then kill the group.
    fn drop(&mut self) {
        drop(lock(&self.wire.stdin).take());
        let deadline = Instant::now() + EXIT_GRACE;
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        // Even after a clean exit, what it started may still run in its group. (A group id is
        // not reused while a member lives; an empty group just gives ESRCH.)
        kill_group(self.child.id() as i32);
        let _ = self.child.wait();
        self.wire.stop.store(true, Ordering::Relaxed);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        self.wire.close(STOPPED.to_string());
    }
}

impl Wire {
    /// Send one request and wait for its reply, which the reader thread routes here by id.
    pub fn request(&self, method: &str, params: Value, timeout: Duration) -> Reply {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply_to, reply) = crossbeam_channel::bounded(1);
        // Registered under the lock `close` takes, so no caller ever waits on a dead server.
        lock(&self.waiting)
            .as_mut()
            .map_err(|reason| reason.clone())?
            .insert(id, reply_to);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let outcome = self
            .send(&message)
            .and_then(|()| match reply.recv_timeout(timeout) {
                Ok(answer) => answer,
                Err(RecvTimeoutError::Timeout) => {
                    self.cancel(id, method);
                    let seconds = timeout.as_secs_f32();
                    Err(format!(
                        "the MCP server gave no answer to {method} within {seconds} s"
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    Err(self.closed_reason().unwrap_or_default())
                }
            });
        if let Ok(waiting) = lock(&self.waiting).as_mut() {
            waiting.remove(&id);
        }
        outcome
    }

    /// Tell the server to give up on a request we no longer wait for (the spec: not `initialize`).
    fn cancel(&self, id: u64, method: &str) {
        if method != "initialize" {
            let params = json!({"requestId": id, "reason": "timed out"});
            let _ = self.send(
                &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}),
            );
        }
    }

    /// Write one message as one line. Callers on several pool workers take turns on the lock.
    pub fn send(&self, message: &Value) -> Result<(), String> {
        let mut stdin = lock(&self.stdin);
        let pipe = stdin.as_mut().ok_or("the MCP server's stdin is closed")?;
        // Compact JSON escapes every newline, so the message is exactly one line.
        let written = pipe
            .write_all(format!("{message}\n").as_bytes())
            .and_then(|()| pipe.flush());
        written.map_err(|e| format!("could not write to the MCP server: {e}"))
    }

    /// The server is gone: every caller still waiting gets `reason` at once. The first reason stays.
    fn close(&self, reason: String) {
        let mut waiting = lock(&self.waiting);
        if let Ok(callers) = waiting.as_mut() {
            for (_, caller) in callers.drain() {
                let _ = caller.send(Err(reason.clone()));
            }
            *waiting = Err(reason);
        }
    }

    pub fn closed_reason(&self) -> Option<String> {
        lock(&self.waiting).as_ref().err().cloned()
    }
}

/// The reader thread: stdout lines go to `handle_line`; stderr is read (so a chatty server never
/// blocks on a full pipe) and only its tail kept. `poll(2)` rather than blocking reads, so that
/// `stop` ends the thread even when a stray process keeps the pipes open.
fn read_loop(wire: &Wire, mut stdout: ChildStdout, mut stderr: ChildStderr) {
    let (mut line, mut stderr_tail, mut chunk) = (Vec::new(), Vec::new(), [0u8; 8192]);
    let pollfd = |fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let mut fds = [pollfd(stdout.as_raw_fd()), pollfd(stderr.as_raw_fd())];
    let reason = loop {
        if wire.stop.load(Ordering::Relaxed) {
            break STOPPED.to_string();
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
                break exit_reason(&stderr_tail);
            };
            for &byte in &chunk[..n] {
                match byte {
                    b'\n' => handle_line(wire, &std::mem::take(&mut line)),
                    // A line past the cap is dropped as it comes, never held whole: it restarts
                    // as a NUL byte, which no JSON begins with, so its end is skipped too (its
                    // caller then gets the call's timeout).
                    _ if line.len() >= MAX_LINE_BYTES => line = vec![0],
                    _ => line.push(byte),
                }
            }
        }
    };
    wire.close(reason);
}

fn exit_reason(stderr_tail: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr_tail);
    match text.lines().rev().find(|line| !line.trim().is_empty()) {
        Some(line) => format!("the server exited; its last error output: {}", line.trim()),
        None => "the server exited".to_string(),
    }
}

/// One stdout line: a reply goes to its caller, a request from the server gets an answer;
/// notifications and non-JSON lines (servers that log to stdout) are skipped.
fn handle_line(wire: &Wire, line: &[u8]) {
    let Ok(message) = serde_json::from_slice::<Value>(line) else {
        return;
    };
    let (Some(id), method) = (message.get("id"), message.get("method")) else {
        return;
    };
    // We offer no client capabilities, so the only request we serve is `ping`.
    let answer = match method.map(|m| m.as_str()) {
        Some(Some("ping")) => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
        Some(_) => json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "corecoder offers no such method"}}),
        None => return deliver_reply(wire, id, &message),
    };
    let _ = wire.send(&answer);
}

fn deliver_reply(wire: &Wire, id: &Value, message: &Value) {
    let reply = match message.get("error") {
        Some(error) => {
            let text = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("no message");
            let code = error.get("code").unwrap_or(&Value::Null);
            Err(format!(
                "the MCP server answered with an error: {text} (code {code})"
            ))
        }
        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
    };
    let caller = match (lock(&wire.waiting).as_mut(), id.as_u64()) {
        (Ok(waiting), Some(id)) => waiting.remove(&id),
        _ => None,
    };
    if let Some(caller) = caller {
        let _ = caller.send(reply);
    }
}

/// A poisoned lock only means another thread panicked holding it; the data is still whole.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
