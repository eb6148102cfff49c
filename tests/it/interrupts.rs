//! Ctrl+C at random points of interactive turns, through a real terminal: while the answer
//! streams, while the agent waits for the model between tool rounds, while a tool runs, at the
//! consent question, and during `/compact`'s summary request. After each, another message is
//! sent: its request must carry a valid history and that message last; at the end the session
//! file must resume (`corecoder -r ID`). Each phase blocks (a stalled stream, `sleep`, a
//! question), so the random delay moves the key within the phase, never out of it; and each is
//! confirmed reached before the key (the partial text shown, the stalled request carrying the
//! tool result, the `sleep` process running, the question shown, the summary request sent).
//! Every request of a cycle must be valid, and no repair may be reported.
//! The default suite sends 10; `CORECODER_SOAK=1` sends 200 (`CORECODER_SOAK_SEED` seeds).

use crate::driver::{Repl, WAIT};
use crate::run::{Sandbox, run};
use crate::server::{Reply, Server};
use crate::soak::Rng;
use crate::sse;
use serde_json::json;
use std::time::{Duration, Instant};

/// Longer than any test waits: a stalled reply is always cut by the Ctrl+C.
const STALL_MS: u64 = 60_000;

#[derive(Clone, Copy, Debug)]
enum Phase {
    Streaming,
    BetweenRounds,
    ToolRunning,
    Consent,
    Compaction,
}

const PHASES: [Phase; 5] = [
    Phase::Streaming,
    Phase::BetweenRounds,
    Phase::ToolRunning,
    Phase::Consent,
    Phase::Compaction,
];

#[test]
fn ctrl_c_at_random_points_keeps_history_valid() {
    let soak = std::env::var("CORECODER_SOAK").as_deref() == Ok("1");
    let (sessions, per_session) = if soak { (10, 20) } else { (1, 10) };
    let seed: u64 = std::env::var("CORECODER_SOAK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let (mut sent, mut landed) = (0, [0; 5]);
    for n in 0..sessions {
        let mut rng = Rng::new(seed + n);
        let (count, phases) = session(&format!("interrupts_{n}"), &mut rng, per_session);
        sent += count;
        landed
            .iter_mut()
            .zip(phases)
            .for_each(|(sum, add)| *sum += add);
    }
    let by_phase: Vec<String> = PHASES
        .iter()
        .map(|p| format!("{p:?} {}", landed[*p as usize]))
        .collect();
    eprintln!(
        "interrupts: {sent} Ctrl+C in {sessions} sessions (seed {seed}), all followed by a \
         valid request; inside their phase: {}",
        by_phase.join(", ")
    );
}

/// Phases in random order, `count` of them; returns how many Ctrl+C were sent, and how many
/// of those landed inside their phase, by phase.
fn session(name: &str, rng: &mut Rng, count: usize) -> (usize, [usize; 5]) {
    let mut landed = [0; 5];
    let sandbox = Sandbox::new(name);
    sandbox.write("notes.txt", "some notes\n");
    // Round robin from a random start: every phase is hit; the delays inside are random.
    let start = rng.below(5);
    let phases: Vec<Phase> = (0..count).map(|n| PHASES[(start + n) % 5]).collect();
    let script = phases.iter().enumerate().flat_map(|(n, p)| replies(n, *p));
    let server = Server::stalling_summaries(script.collect(), STALL_MS);
    server.expect_repairs();
    let mut repl = Repl::start_with(&sandbox, &[], server);
    for (n, phase) in phases.iter().enumerate() {
        let delay = Duration::from_millis(rng.below(300) as u64);
        let before = repl.server.requests().len();
        if repl.interrupt(n, *phase, delay) {
            landed[*phase as usize] += 1;
        }
        repl.enter(&format!("next {n}"));
        repl.expect(&format!("after {n}"));
        repl.idle();
        // Every request of the cycle, the interrupted ones too, and no repair was needed:
        // each Ctrl+C path answers the calls it stops.
        let requests = repl.server.requests();
        requests[before..]
            .iter()
            .for_each(|r| r.assert_valid_history());
        let screen = repl.pty.screen();
        assert!(!screen.contains("history repaired"), "{phase:?}: {screen}");
        let last = requests.last().expect("a request");
        let messages = last.messages();
        let user = messages.last().expect("a message");
        assert_eq!(
            user["content"],
            format!("next {n}"),
            "{phase:?}: {messages:#?}"
        );
    }
    resume(name, &sandbox);
    (count, landed)
}

/// What the server answers for cycle `n`: the interrupted part, then the next message's answer.
fn replies(n: usize, phase: Phase) -> Vec<Reply> {
    let after = Reply::Sse(sse::text(&format!("after {n}")));
    let call = |name: &str, args: serde_json::Value| {
        Reply::Sse(sse::tool_calls(&[(&format!("call_{n}"), name, args)]))
    };
    let stall = Reply::SseThenStall {
        body: sse::role() + &sse::content(&format!("partial {n} ")),
        ms: STALL_MS,
    };
    match phase {
        Phase::Streaming => vec![stall, after],
        Phase::BetweenRounds => vec![
            call(
                "read_file",
                json!({"file_path": "notes.txt", "offset": 1 + n}),
            ),
            Reply::Stall { ms: STALL_MS },
            after,
        ],
        Phase::ToolRunning => {
            // A different command each time, or the loop guard stops repeating it.
            let command = format!("sleep 30.{n}");
            vec![call("bash", json!({ "command": command })), after]
        }
        Phase::Consent => {
            let write = json!({"file_path": format!("w{n}.txt"), "content": "x"});
            let denied = Reply::Sse(sse::text(&format!("denied {n}")));
            vec![call("write_file", write), denied, after]
        }
        // The summary request stalls off the script; a short history may need none.
        Phase::Compaction => vec![after],
    }
}

impl Repl {
    /// Drive cycle `n` into `phase`, wait `delay` inside it, press Ctrl+C, wait for the prompt.
    /// False if the phase never blocked (a `/compact` with nothing to summarise): the key then
    /// reached the prompt instead.
    fn interrupt(&mut self, n: usize, phase: Phase, delay: Duration) -> bool {
        let before = self.server.requests().len();
        let mut in_phase = true;
        match phase {
            Phase::Streaming => {
                self.enter(&format!("stream {n}"));
                self.expect(&format!("partial {n}"));
            }
            Phase::BetweenRounds => {
                self.enter(&format!("read {n}"));
                self.wait_requests(before + 2);
                // The stalled request is the one after the tool round: it carries the result.
                let messages = self.server.requests()[before + 1].messages();
                let last = messages.last().expect("a message");
                assert_eq!(last["tool_call_id"], format!("call_{n}"), "{messages:#?}");
            }
            Phase::ToolRunning => {
                self.enter(&format!("sleep {n}"));
                self.expect(&format!("Allow bash(sleep 30.{n})?"));
                self.pty.send("y\r");
                self.expect("deny: y");
                let started = Instant::now();
                while !sleep_is_running(&format!("30.{n}")) {
                    assert!(started.elapsed() < WAIT, "sleep 30.{n} never started");
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            Phase::Consent => {
                self.enter(&format!("write {n}"));
                self.expect(&format!("Allow write_file(w{n}.txt)?"));
            }
            Phase::Compaction => {
                self.enter("/compact");
                // Waits for the summary request if there is one, then presses Ctrl+C anyway.
                let asked = self
                    .server
                    .wait_for_requests(before + 1, Duration::from_secs(1));
                if !asked {
                    self.idle();
                }
                in_phase = asked;
            }
        }
        std::thread::sleep(delay);
        let pressed = Instant::now();
        // The prompt to wait for is the one drawn after the key.
        self.mark = self.pty.screen().len();
        self.pty.send("\x03");
        if let Phase::Consent = phase {
            self.expect(&format!("denied {n}"));
        }
        self.idle();
        let took = pressed.elapsed();
        assert!(
            took < Duration::from_secs(5),
            "{phase:?}: back after {took:?}"
        );
        in_phase
    }

    fn wait_requests(&self, count: usize) {
        let arrived = self.server.wait_for_requests(count, WAIT);
        assert!(
            arrived,
            "{count} requests never came:\n{}",
            self.pty.screen()
        );
    }
}

/// A `sleep SECONDS` process exists (run by `bash`, directly or under `bash -c`).
fn sleep_is_running(seconds: &str) -> bool {
    let processes = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    processes.into_iter().any(|entry| {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        args.len() >= 2 && args[0].ends_with(b"sleep") && args[1] == seconds.as_bytes()
    })
}

/// The session file after all those interrupts resumes, and its history is valid.
fn resume(name: &str, sandbox: &Sandbox) {
    let sessions = sandbox.home.join(".corecoder/sessions");
    let entry = std::fs::read_dir(&sessions)
        .expect("sessions directory")
        .filter_map(Result::ok)
        .next()
        .expect("a session file");
    let id = entry
        .path()
        .file_stem()
        .expect("stem")
        .to_string_lossy()
        .into_owned();
    let server = Server::answering_summaries(vec![Reply::Sse(sse::text("resumed"))], "summary");
    // The log holds the calls those Ctrl+Cs answered `[interrupted]`.
    server.expect_repairs();
    let out = run(&["-r", &id, "-p", "still fine?"], &server, sandbox);
    assert_eq!(
        (out.code, out.stdout.trim()),
        (0, "resumed"),
        "{name}: {out:?}"
    );
    assert!(!out.stderr.contains("history repaired"), "{name}: {out:?}");
    for request in server.requests() {
        request.assert_valid_history();
    }
}
