//! The soak test: many randomised sessions against a faulty provider, through the real binary.
//!
//! Runs only with `CORECODER_SOAK=1` (it takes minutes); `CORECODER_SOAK_SESSIONS` sets how
//! many (default 1000), `CORECODER_SOAK_SEED` the first seed. Each session is a `-p --yes` run
//! whose script mixes good replies (tool calls with odd indices, text) with faults (error
//! statuses, drops, stalls, garbage, error events, split writes, runs of failures that exhaust
//! the retries). Every session ends in one of: completed (exit 0), failed cleanly (exit 1 with
//! a message), hung (killed at the deadline), panicked; every request is checked for a valid
//! history. Hung, panicked and invalid must all be 0.

use crate::run::{Sandbox, spawn_with};
use crate::server::{Reply, Server, history_problem};
use crate::sse;
use serde_json::json;
use std::io::Read;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Longer than the worst script: 4 retries backing off 1+2+4+8 s, plus stalls.
const DEADLINE: Duration = Duration::from_secs(60);
/// Sessions mostly wait (backoff, stalls), so many run at once even on two cores.
const WORKERS: usize = 24;

/// A small xorshift64 generator: reproducible from its seed, no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[derive(Default, Debug)]
struct Tally {
    completed: usize,
    failed_cleanly: usize,
    hung: usize,
    panicked: usize,
    other_exit: usize,
    requests: usize,
    invalid_history: usize,
    faults: usize,
}

#[test]
fn soak_randomised_faulty_sessions() {
    if std::env::var("CORECODER_SOAK").as_deref() != Ok("1") {
        eprintln!("soak test skipped: set CORECODER_SOAK=1 to run it (takes minutes)");
        return;
    }
    let number = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let sessions = number("CORECODER_SOAK_SESSIONS", 1000) as usize;
    let seed = number("CORECODER_SOAK_SEED", 1);
    let next = AtomicUsize::new(0);
    let tally = Mutex::new(Tally::default());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| {
                loop {
                    let n = next.fetch_add(1, Ordering::SeqCst);
                    if n >= sessions {
                        return;
                    }
                    session(seed + n as u64, &tally);
                }
            });
        }
    });
    let tally = tally.into_inner().unwrap_or_else(|p| p.into_inner());
    eprintln!(
        "soak: {sessions} sessions (seeds {seed}..{}) in {:.0?}: {tally:?}",
        seed + sessions as u64,
        started.elapsed()
    );
    assert_eq!(tally.hung, 0, "{tally:?}");
    assert_eq!(tally.panicked, 0, "{tally:?}");
    assert_eq!(tally.invalid_history, 0, "{tally:?}");
    assert_eq!(tally.other_exit, 0, "{tally:?}");
}

/// One randomised session: build its script, run it, classify how it ended.
fn session(seed: u64, tally: &Mutex<Tally>) {
    let mut rng = Rng::new(seed);
    let sandbox = Sandbox::new(&format!("soak_{seed}"));
    sandbox.write("notes.txt", "alpha\nbeta\ngamma\n");
    let (script, faults) = script(&mut rng);
    let server = Server::start(script);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
        ("CORECODER_IDLE_TIMEOUT", "1"),
    ];
    let child = spawn_with(&["-p", "soak", "--yes"], &env, &sandbox);
    let (code, stderr) = wait_with_deadline(child);
    let requests = server.requests();
    let invalid = requests
        .iter()
        .filter(|r| history_problem(&r.messages()).is_err())
        .count();
    let mut tally = tally.lock().unwrap_or_else(|p| p.into_inner());
    tally.requests += requests.len();
    tally.invalid_history += invalid;
    tally.faults += faults;
    match code {
        _ if stderr.contains("panicked") => tally.panicked += 1,
        None => tally.hung += 1,
        Some(0) => tally.completed += 1,
        Some(1) if !stderr.trim().is_empty() => tally.failed_cleanly += 1,
        Some(other) => {
            eprintln!("seed {seed}: exit {other}\n{stderr}");
            tally.other_exit += 1;
        }
    }
}

/// 1 to 4 rounds, each a few faults then a good reply; the last round answers in text.
fn script(rng: &mut Rng) -> (Vec<Reply>, usize) {
    let mut script = Vec::new();
    let mut faults = 0;
    let rounds = 1 + rng.below(4);
    for round in 0..rounds {
        // Mostly 0-2 faults; sometimes 5 in a row, which spends every retry.
        let count = match rng.below(20) {
            0 => 5,
            n => n % 3,
        };
        for _ in 0..count {
            script.push(fault(rng));
        }
        faults += count;
        let good = match round + 1 == rounds {
            true => sse::text(&format!("finished after {round} rounds")),
            false => good_calls(rng, round),
        };
        script.push(deliver(rng, good));
    }
    (script, faults)
}

/// One fault the client must survive: retry it, or fail cleanly when it repeats.
fn fault(rng: &mut Rng) -> Reply {
    let partial = sse::role() + &sse::content("partial ") + &sse::call_start(0, "lost", "bash");
    let cut = rng.below(partial.len());
    let error = json!({"error": {"message": "overloaded", "type": "server_error"}});
    match rng.below(8) {
        0 => Reply::error([429, 500, 502, 503, 529][rng.below(5)], "busy"),
        1 => Reply::SseThenDrop(partial[..cut].to_string()),
        2 => Reply::SseThenDrop(sse::role() + &sse::content("done") + &sse::finish("stop")),
        3 => Reply::Stall { ms: 1500 },
        4 => Reply::SseThenStall {
            body: partial,
            ms: 1500,
        },
        5 => Reply::Sse(sse::role() + &format!("data: {error}\n\n")),
        6 => Reply::Sse("data: not json at all\n\n".to_string()),
        _ => Reply::Status {
            code: 200,
            headers: vec![],
            body: "<html>a proxy's error page</html>".to_string(),
        },
    }
}

/// A good reply sent in a random way: whole, split at a random byte, or trickled.
fn deliver(rng: &mut Rng, body: String) -> Reply {
    match rng.below(4) {
        0 => Reply::SseSplitAt {
            at: rng.below(body.len()),
            body,
            pause_ms: 2,
        },
        1 => Reply::SseSlowly {
            chunk: 1 + rng.below(64),
            body,
            pause_ms: 0,
        },
        _ => Reply::Sse(body),
    }
}

/// One to three tool calls, with indices that are in order, shuffled, or all zero.
fn good_calls(rng: &mut Rng, round: usize) -> String {
    let count = 1 + rng.below(3);
    let calls: Vec<(String, &str, String)> = (0..count)
        .map(|n| {
            let id = format!("call_{round}_{n}");
            let (name, args) = match rng.below(5) {
                // Arguments differ between calls, so the loop guard never steps in.
                0 => (
                    "read_file",
                    json!({"file_path": "notes.txt", "offset": 1 + n, "limit": 1 + round}),
                ),
                1 => ("glob", json!({"pattern": format!("*{round}{n}*.txt")})),
                2 => ("grep", json!({"pattern": format!("beta|{round}{n}")})),
                3 => (
                    "write_file",
                    json!({"file_path": format!("out{round}_{n}.txt"), "content": "x\n"}),
                ),
                _ => ("read_file", json!({"file_path": format!("missing{n}.txt")})),
            };
            (id, name, args.to_string())
        })
        .collect();
    let shuffled = rng.below(3);
    let mut body = sse::role();
    let mut order: Vec<usize> = (0..count).collect();
    if shuffled == 1 {
        order.reverse();
    }
    for n in order {
        let (id, name, args) = &calls[n];
        let index = if shuffled == 2 { 0 } else { n };
        let call = json!({"index": index, "id": id, "type": "function",
                          "function": {"name": name, "arguments": args}});
        body += &sse::chunk(json!({"tool_calls": [call]}));
    }
    body + &sse::finish("tool_calls") + &sse::usage(10, 5) + &sse::done()
}

/// The exit code, or None if the run outlived `DEADLINE` (then it is killed), and its stderr.
fn wait_with_deadline(mut child: std::process::Child) -> (Option<i32>, String) {
    let mut stderr = child.stderr.take().expect("piped stderr");
    let mut stdout = child.stdout.take().expect("piped stdout");
    std::thread::scope(|scope| {
        let out = scope.spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let err = scope.spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let deadline = Instant::now() + DEADLINE;
        let code = loop {
            if let Ok(Some(status)) = child.try_wait() {
                break Some(status.code().unwrap_or(-1));
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = out.join();
        (code, err.join().unwrap_or_default())
    })
}
