//! Long-lived state through the binary: session logs and resuming them, checkpoints and
//! `/undo`, what a session costs, and keeping the history inside the context window.
//!
//! This file holds what the feature files share: a `-p` runner, the session files under
//! `~/.corecoder`, and `Repl`, the interactive mode on a pseudo-terminal. Each test gets its
//! own sandbox, so `~/.corecoder` starts empty. Nothing here asserts anything itself.

mod cost;
mod sessions;
mod undo;
mod window;

use crate::pty::Pty;
use crate::run::{Output, Sandbox, run};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(5);

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

/// One running REPL and the server it talks to (the REPL is killed first on drop).
struct Repl {
    pty: Pty,
    server: Server,
    /// Screen length when the last line was entered, to tell its prompt from the one before.
    mark: usize,
}

impl Repl {
    /// Start the REPL with `args` in `sandbox` against `script`; returns at the first prompt.
    fn start(sandbox: &Sandbox, args: &[&str], script: Vec<Reply>) -> Repl {
        let server = Server::start(script);
        let url = server.url();
        let env = [("CORECODER_API_KEY", "sk-test"), ("OPENAI_BASE_URL", &url)];
        let pty = Pty::spawn(args, &env, sandbox);
        let mut repl = Repl {
            pty,
            server,
            mark: 0,
        };
        repl.expect("corecoder 0.1.0");
        repl.idle();
        repl
    }

    fn expect(&mut self, needle: &str) {
        if let Err(screen) = self.pty.expect(needle, WAIT) {
            panic!(
                "{screen}\n({} requests arrived)",
                self.server.requests().len()
            );
        }
    }

    fn enter(&mut self, line: &str) {
        self.mark = self.pty.enter(line);
    }

    /// Wait for a prompt drawn after the last `enter`.
    fn idle(&mut self) {
        let ready = self.pty.prompt_after(self.mark, WAIT);
        assert!(ready, "no prompt came back:\n{}", self.pty.screen());
    }

    /// Type `line`, wait for `shown` and then for the prompt.
    fn turn(&mut self, line: &str, shown: &str) {
        self.enter(line);
        self.expect(shown);
        self.idle();
    }

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
