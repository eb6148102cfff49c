//! Long-lived state through the binary: session logs and resuming them, checkpoints and
//! `/undo`, what a session costs, and keeping the history inside the context window.
//!
//! This file holds what the feature files share: a `-p` runner, the session files under
//! `~/.corecoder`, and steps of their own for `Repl`, the interactive mode on a pseudo-terminal. Each test gets its
//! own sandbox, so `~/.corecoder` starts empty. Nothing here asserts anything itself.

mod cost;
mod sessions;
mod undo;
mod window;

use crate::driver::{Repl, WAIT};
use crate::run::{Output, Sandbox, run};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::json;
use std::path::PathBuf;

/// Run `args` in `sandbox` against `script`; return what it printed and what it sent.
fn check(sandbox: &Sandbox, args: &[&str], script: Vec<Reply>) -> (Output, Vec<Recorded>) {
    let server = Server::start(script);
    let output = run(args, &server, sandbox);
    (output, server.requests())
}

fn answer(text: &str) -> Reply {
    Reply::Sse(sse::text(text))
}

fn read_call(id: &str, path: &str) -> Reply {
    let args = json!({ "file_path": path });
    Reply::Sse(sse::tool_calls(&[(id, "read_file", args)]))
}

fn sessions_dir(sandbox: &Sandbox) -> PathBuf {
    sandbox.home.join(".corecoder/sessions")
}

/// The session files, oldest first by name (ids start with the UTC time).
fn session_files(sandbox: &Sandbox) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(sessions_dir(sandbox)).expect("sessions directory");
    let mut files: Vec<PathBuf> = entries.map(|e| e.expect("entry").path()).collect();
    files.sort();
    files
}

fn only_session_id(sandbox: &Sandbox) -> String {
    let files = session_files(sandbox);
    assert_eq!(files.len(), 1, "{files:?}");
    let stem = files[0].file_stem().expect("file name");
    stem.to_string_lossy().into_owned()
}

fn sent(requests: &[Recorded]) -> String {
    let bodies: Vec<String> = requests.iter().map(|r| r.body.to_string()).collect();
    bodies.join("\n")
}

impl Repl {
    /// A task whose one tool call asks for consent: answer yes, wait for `done`.
    fn allowed_turn(&mut self, line: &str, tool: &str, done: &str) {
        self.enter(line);
        self.expect(&format!("Allow {tool}("));
        self.pty.send("y\r");
        self.expect(done);
        self.idle();
    }

    fn quit(&mut self) {
        self.enter("quit");
        assert_eq!(self.pty.wait_exit(WAIT), Some(0), "{}", self.pty.screen());
    }
}
