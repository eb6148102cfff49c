//! The wire to one MCP server process: JSON-RPC lines out on stdin, a reader thread routing
//! replies from stdout to their callers by id.
//!
//! `mcp.rs` decides which servers run and what their tools are; this file only starts a
//! process, sends messages, waits for the reply with a given id, and stops the process (close
//! stdin, wait, then kill its group) when the `Link` is dropped; what runs on the pipes (the
//! reader's loop, the bounded write) is `mcp_wire/pipes.rs`. It knows no MCP method. It imports
//! nothing from `mcp.rs`: how to start a server (`ServerConfig`) is defined here, and `mcp.rs`
//! and `mcp_config.rs` take it from here.
//!
//! Writes never block the caller past its deadline: stdin is non-blocking, and a write that
//! finds the pipe full waits for room with `poll(2)`, watching the deadline and Ctrl+C. A
//! server that does not take a message in time is broken (the rest of the line could never be
//! told from the next): it is killed and every caller told why, so no thread is left stuck.

mod pipes;

pub(crate) use crate::extras::mcp_wire::pipes::result_of;
use crate::extras::mcp_wire::pipes::{
    CANCEL_POLL, Envelope, Stall, non_blocking, read_loop, reply_of, write_by,
};
use crate::tools::support::process::kill_group;
use crossbeam_channel::{RecvTimeoutError, Sender};
use serde_json::{Value, json};
use std::collections::HashMap;
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
pub(crate) const STOPPED: &str = "stopped by corecoder";

/// How to start one server: an entry of the config files (`mcp_config.rs` reads them).
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// How long one call may take, its writes included (`"timeout"` in seconds; `None`: 60 s).
    pub timeout: Option<Duration>,
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
    /// The server's process group, killed when it will not take a message in time.
    group: i32,
}

/// A whole reply line as it came (`mcp_protocol.rs` reads its `result` as it needs), or why not.
type Reply = Result<Vec<u8>, String>;

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
        if let Some(stdin) = &stdin {
            non_blocking(stdin.as_raw_fd());
        }
        let waiting = Mutex::new(Ok(HashMap::new()));
        let (next_id, stop) = (AtomicU64::new(1), AtomicBool::new(false));
        let wire = Arc::new(Wire {
            stdin: Mutex::new(stdin),
            next_id,
            waiting,
            stop,
            group: child.id() as i32,
        });
        let reader_wire = Arc::clone(&wire);
        let reader = match (stdout, stderr) {
            (Some(out), Some(err)) => Some(thread::spawn(move || read_on(&reader_wire, out, err))),
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
    /// Send one request and wait for its reply, which the reader thread routes here by id. The
    /// write and the wait together end by `timeout`, or at once when `cancel` is set.
    pub fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: &AtomicBool,
    ) -> Reply {
        let deadline = Instant::now() + timeout;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply_to, reply) = crossbeam_channel::bounded(1);
        // Registered under the lock `close` takes, so no caller ever waits on a dead server.
        lock(&self.waiting)
            .as_mut()
            .map_err(|reason| reason.clone())?
            .insert(id, reply_to);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let outcome = self.send(&message, deadline, cancel).and_then(|()| {
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match reply.recv_timeout(left.min(CANCEL_POLL)) {
                    Ok(answer) => break answer,
                    Err(RecvTimeoutError::Timeout) if cancel.load(Ordering::Relaxed) => {
                        self.cancel(id, method);
                        break Err("interrupted (Ctrl+C)".to_string());
                    }
                    Err(RecvTimeoutError::Timeout) if left.is_zero() => {
                        self.cancel(id, method);
                        let seconds = timeout.as_secs_f32();
                        break Err(format!(
                            "the MCP server gave no answer to {method} within {seconds} s"
                        ));
                    }
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => {
                        break Err(self.closed_reason().unwrap_or_default());
                    }
                }
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
            let cancelled =
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params});
            let _ = self.send(&cancelled, Instant::now() + ANSWER_WRITE, &self.stop);
        }
    }

    /// Write one message as one line, by `deadline` and unless `cancel` is set. Callers on
    /// several pool workers take turns on the lock. A message left half-written breaks the
    /// server: it is killed, and every caller gets the reason.
    pub(crate) fn send(
        &self,
        message: &Value,
        deadline: Instant,
        cancel: &AtomicBool,
    ) -> Result<(), String> {
        let mut stdin = lock(&self.stdin);
        let pipe = stdin.as_mut().ok_or("the MCP server's stdin is closed")?;
        // Compact JSON escapes every newline, so the message is exactly one line.
        let line = format!("{message}\n");
        let (written, stalled) = write_by(pipe, line.as_bytes(), deadline, cancel);
        let why = match stalled {
            None => return Ok(()),
            Some(Stall::Cancelled) if written == 0 => return Err("interrupted (Ctrl+C)".into()),
            Some(Stall::Cancelled) => "interrupted (Ctrl+C) while writing to it".to_string(),
            Some(Stall::Deadline) => "the MCP server did not read its input in time (its stdin \
                 pipe stayed full), so it was stopped"
                .to_string(),
            // A closed pipe: the server is gone, and the reader says why once it sees the end.
            Some(Stall::Failed(e)) => {
                return Err(format!("could not write to the MCP server: {e}"));
            }
        };
        // Close first, so this reason is the one every caller gets, then kill. The pipe is
        // taken under the lock `Link::drop` takes too, so the group is killed only while the
        // process is not yet reaped (its id cannot have been reused).
        self.close(why.clone());
        *stdin = None;
        kill_group(self.group);
        Err(why)
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

    pub(crate) fn closed_reason(&self) -> Option<String> {
        lock(&self.waiting).as_ref().err().cloned()
    }
}

/// How long the reader waits to write its answer to a server's `ping`.
const ANSWER_WRITE: Duration = Duration::from_secs(5);

/// The reader thread: each stdout line routed (`handle_line`) until stdout ends or `Link::drop`
/// stops it; then every caller still waiting is told why.
fn read_on(wire: &Wire, stdout: ChildStdout, stderr: ChildStderr) {
    let ended = read_loop(stdout, stderr, &wire.stop, &mut |line| {
        handle_line(wire, line)
    });
    wire.close(ended.unwrap_or_else(|| STOPPED.to_string()));
}

/// One stdout line: a reply goes to its caller, a request from the server gets an answer;
/// notifications and non-JSON lines (servers that log to stdout) are skipped.
fn handle_line(wire: &Wire, line: Vec<u8>) {
    let Ok(Envelope {
        id: Some(id),
        method,
        error,
    }) = serde_json::from_slice::<Envelope>(&line)
    else {
        return;
    };
    // We offer no client capabilities, so the only request we serve is `ping`.
    let answer = match method.as_ref().map(|m| m.as_str()) {
        Some(Some("ping")) => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
        Some(_) => json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "corecoder offers no such method"}}),
        None => {
            let caller = match (lock(&wire.waiting).as_mut(), id.as_u64()) {
                (Ok(waiting), Some(id)) => waiting.remove(&id),
                _ => None,
            };
            if let Some(caller) = caller {
                let _ = caller.send(reply_of(error, line));
            }
            return;
        }
    };
    let _ = wire.send(&answer, Instant::now() + ANSWER_WRITE, &wire.stop);
}

/// A poisoned lock only means another thread panicked holding it; the data is still whole.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
