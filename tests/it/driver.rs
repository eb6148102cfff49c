//! The interactive mode under test: one running corecoder on a pseudo-terminal and the
//! scripted server it talks to. The REPL, long-session, interrupt and MCP tests all drive it
//! through this; each adds its own steps in an `impl Repl` block of its own file.

use crate::pty::Pty;
use crate::run::Sandbox;
use crate::server::{Recorded, Reply, Server};
use std::time::Duration;

/// How long any one step may take before the test fails with the screen so far.
pub const WAIT: Duration = Duration::from_secs(10);

/// One running REPL and the server it talks to (the REPL is killed first on drop).
pub struct Repl {
    pub pty: Pty,
    pub server: Server,
    /// Screen length when the last line was entered, to tell its prompt from the one before.
    pub mark: usize,
}

impl Repl {
    /// Start `corecoder ARGS` in `sandbox` against `script`; returns at the first prompt.
    pub fn start(sandbox: &Sandbox, args: &[&str], script: Vec<Reply>) -> Repl {
        Repl::start_with(sandbox, args, Server::start(script))
    }

    /// The same against a server made some other way.
    pub fn start_with(sandbox: &Sandbox, args: &[&str], server: Server) -> Repl {
        Repl::start_with_env(sandbox, args, server, &[])
    }

    /// The same with more variables (`NO_COLOR=` lets colour through the pty's `NO_COLOR=1`).
    pub fn start_with_env(
        sandbox: &Sandbox,
        args: &[&str],
        server: Server,
        more: &[(&str, &str)],
    ) -> Repl {
        let url = server.url();
        let mut env = vec![("CORECODER_API_KEY", "sk-test"), ("OPENAI_BASE_URL", &url)];
        env.extend_from_slice(more);
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

    /// Wait for `needle` on screen; on failure show the screen and how many requests came.
    pub fn expect(&mut self, needle: &str) {
        if let Err(screen) = self.pty.expect(needle, WAIT) {
            let sent = self.server.requests().len();
            panic!("{screen}\n({sent} requests arrived)");
        }
    }

    /// Type `line` and Enter.
    pub fn enter(&mut self, line: &str) {
        self.mark = self.pty.enter(line);
    }

    /// Wait for a prompt waiting for input, drawn after the last `enter`.
    pub fn idle(&mut self) {
        let ready = self.pty.prompt_after(self.mark, WAIT);
        assert!(ready, "no prompt came back:\n{}", self.pty.screen());
    }

    /// Type `line`, wait for `shown` and then for the prompt.
    pub fn turn(&mut self, line: &str, shown: &str) {
        self.enter(line);
        self.expect(shown);
        self.idle();
    }

    /// Exactly `count` requests, once they have arrived.
    pub fn requests(&self, count: usize) -> Vec<Recorded> {
        self.server.wait_for_requests(count, WAIT);
        let requests = self.server.requests();
        assert_eq!(requests.len(), count, "{}", self.pty.screen());
        requests
    }
}
