//! The soak test: many randomised sessions against a faulty provider, through the real binary.
//!
//! The 1000-session run takes minutes, so it is `#[ignore]`d: `cargo test --test it soak --
//! --ignored` runs it (`CORECODER_SOAK_SESSIONS` sets how many, `CORECODER_SOAK_SEED` the
//! first seed); the default suite runs a short one. Each session is a `-p --yes` run whose
//! script mixes good replies (tool calls with odd indices, text) with faults (error statuses,
//! drops, stalls, garbage, error events, a reply with one chunk that is not JSON in the middle
//! of its arguments, 200s that are no event stream, split writes, runs of failures that
//! exhaust the retries). How each session ends is predicted from its script: the answer its
//! last round gives on stdout with exit 0, or exit 1 with the "gave up" error line when one
//! round's faults spend every retry (every retried fault costs one attempt), or with the
//! server's own words at the first 200 that is no event stream; and how many requests it
//! makes. A session that ends otherwise, hangs (killed at the deadline) or panics is counted,
//! and so is every request with an invalid history, every repair the binary reports and every
//! tool call kept with corrupted arguments; all must be 0.

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
    /// Ended, but not as its script predicts (another answer, exit code, error line or number
    /// of requests).
    unexpected: usize,
    requests: usize,
    invalid_history: usize,
    /// Repairs the binary reported: none is explained here (no Ctrl+C, no crash).
    repairs: usize,
    /// Tool calls sent back with arguments that are not a whole JSON object, or that a reply
    /// with a lost piece made (it names `lost.txt`), or that file written: a call run or kept
    /// around a gap. Must be 0.
    corrupted_arguments: usize,
    faults: usize,
}

/// How a session's script says it must end.
#[derive(Debug, Clone, PartialEq)]
enum Expected {
    /// Exit 0 with this answer on stdout.
    Answer(String),
    /// Exit 1, the last stderr line `corecoder: …` ending with this: one round's faults spent
    /// every retry, or a fault that is not retried came.
    Fails(&'static str),
}

/// How the client ends a session after a fault it does not retry.
const GAVE_UP: &str = "(gave up after 4 retries)";
const NOT_A_STREAM: &str = "not an event stream: check the base URL";
const ERROR_IN_A_200: &str = "the server answered with an error: overloaded";
/// The file a reply that lost a piece would write, if the client assembled it around the gap.
const LOST_FILE: &str = "lost.txt";

/// Attempts per request: the first and `MAX_RETRIES` (4) retries, as in `src/client/llm.rs`.
const ATTEMPTS: usize = 5;

/// 11 sessions, and the first later one whose faults spend every retry (so both ends are seen).
#[test]
fn soak_short_run_of_faulty_sessions() {
    let first = number("CORECODER_SOAK_SEED", 1);
    let mut seeds: Vec<u64> = (first..first + 11).collect();
    let gives_up = Expected::Fails(GAVE_UP);
    let gives_up = (first + 11..).find(|seed| script(&mut Rng::new(*seed)).2 == gives_up);
    seeds.extend(gives_up);
    let tally = soak(&seeds);
    assert!(tally.completed > 0 && tally.failed_cleanly > 0, "{tally:?}");
}

#[test]
#[ignore = "takes minutes: cargo test --test it soak -- --ignored"]
fn soak_randomised_faulty_sessions() {
    let first = number("CORECODER_SOAK_SEED", 1);
    let sessions = number("CORECODER_SOAK_SESSIONS", 1000);
    soak(&(first..first + sessions).collect::<Vec<u64>>());
}

fn number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn soak(seeds: &[u64]) -> Tally {
    let next = AtomicUsize::new(0);
    let tally = Mutex::new(Tally::default());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..WORKERS.min(seeds.len()) {
            scope.spawn(|| {
                while let Some(seed) = seeds.get(next.fetch_add(1, Ordering::SeqCst)) {
                    session(*seed, &tally);
                }
            });
        }
    });
    let tally = tally.into_inner().unwrap_or_else(|p| p.into_inner());
    eprintln!(
        "soak: {} sessions (seeds {}..={}) in {:.0?}: {tally:?}",
        seeds.len(),
        seeds.first().unwrap_or(&0),
        seeds.last().unwrap_or(&0),
        started.elapsed()
    );
    assert_eq!(tally.hung, 0, "{tally:?}");
    assert_eq!(tally.panicked, 0, "{tally:?}");
    assert_eq!(tally.invalid_history, 0, "{tally:?}");
    assert_eq!(tally.repairs, 0, "{tally:?}");
    assert_eq!(tally.corrupted_arguments, 0, "{tally:?}");
    assert_eq!(tally.unexpected, 0, "{tally:?}");
    assert_eq!(
        tally.completed + tally.failed_cleanly,
        seeds.len(),
        "{tally:?}"
    );
    tally
}

/// One randomised session: build its script, run it, check it ended as the script predicts.
fn session(seed: u64, tally: &Mutex<Tally>) {
    let mut rng = Rng::new(seed);
    let sandbox = Sandbox::new(&format!("soak_{seed}"));
    sandbox.write("notes.txt", "alpha\nbeta\ngamma\n");
    let (script, faults, expected, predicted_requests) = script(&mut rng);
    let server = Server::start(script);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
        ("CORECODER_IDLE_TIMEOUT", "1"),
    ];
    let child = spawn_with(&["-p", "soak", "--yes"], &env, &sandbox);
    let (code, stdout, stderr) = wait_with_deadline(child);
    let requests = server.requests();
    let invalid = requests
        .iter()
        .filter(|r| history_problem(&r.messages()).is_err())
        .count();
    let mut tally = tally.lock().unwrap_or_else(|p| p.into_inner());
    tally.requests += requests.len();
    tally.invalid_history += invalid;
    tally.repairs += stderr.matches("history repaired").count();
    tally.corrupted_arguments += corrupted_calls(&requests);
    tally.corrupted_arguments += usize::from(sandbox.path(LOST_FILE).exists());
    tally.faults += faults;
    let last_line = stderr.trim_end().lines().last().unwrap_or("");
    match (code, &expected) {
        _ if stderr.contains("panicked") => tally.panicked += 1,
        (None, _) => tally.hung += 1,
        _ if requests.len() != predicted_requests => {
            let sent = requests.len();
            eprintln!("seed {seed}: {sent} requests, {predicted_requests} predicted\n{stderr}");
            tally.unexpected += 1;
        }
        (Some(0), Expected::Answer(answer)) if stdout.trim() == answer => tally.completed += 1,
        (Some(1), Expected::Fails(end))
            if last_line.starts_with("corecoder: ") && last_line.ends_with(end) =>
        {
            tally.failed_cleanly += 1
        }
        (Some(other), _) => {
            eprintln!("seed {seed}: exit {other}, expected {expected:?}\n{stdout}\n{stderr}");
            tally.unexpected += 1;
        }
    }
}

/// 1 to 4 rounds, each a few faults then a good reply; the last round answers in text. Also
/// returns the number of faults, how the session must end and how many requests it makes.
fn script(rng: &mut Rng) -> (Vec<Reply>, usize, Expected, usize) {
    let mut script = Vec::new();
    let mut faults = 0;
    let (mut expected, mut requests) = (None, 0);
    let rounds = 1 + rng.below(4);
    for round in 0..rounds {
        // Mostly 0-2 faults; sometimes 5 in a row, which spends every retry.
        let count = match rng.below(20) {
            0 => 5,
            n => n % 3,
        };
        // Every fault costs an attempt, a stream cut after its finish_reason too (the broken
        // connection voids it); five in one round spend every retry. A 200 that is no event
        // stream (a page, a JSON error) is not retried: it ends the session. A reply with a
        // chunk that is not JSON is retried whole, like a broken stream.
        for attempt in 0..count {
            let fault = fault(rng);
            let fatal = match &fault {
                Reply::Status {
                    code: 200, body, ..
                } if body.starts_with('{') => Some(ERROR_IN_A_200),
                Reply::Status { code: 200, .. } => Some(NOT_A_STREAM),
                _ => None,
            };
            script.push(fault);
            if expected.is_some() {
                continue;
            }
            match (fatal, attempt + 1 == ATTEMPTS) {
                (Some(end), _) => expected = Some(Expected::Fails(end)),
                (None, true) => expected = Some(Expected::Fails(GAVE_UP)),
                (None, false) => continue,
            }
            requests = script.len();
        }
        faults += count;
        let answer = format!("finished after {round} rounds");
        let good = match round + 1 == rounds {
            true => sse::text(&answer),
            false => good_calls(rng, round),
        };
        script.push(deliver(rng, good));
        if round + 1 == rounds && expected.is_none() {
            (expected, requests) = (Some(Expected::Answer(answer)), script.len());
        }
    }
    let expected = expected.expect("the last round answers");
    (script, faults, expected, requests)
}

/// One fault the client must survive: retry it, or fail cleanly when it repeats.
fn fault(rng: &mut Rng) -> Reply {
    let partial = sse::role() + &sse::content("partial ") + &sse::call_start(0, "lost", "bash");
    let cut = rng.below(partial.len());
    let error = json!({"error": {"message": "overloaded", "type": "server_error"}});
    match rng.below(10) {
        0 => Reply::error([429, 500, 502, 503, 529][rng.below(5)], "busy"),
        8 => Reply::Sse(lost_piece()),
        9 => Reply::Status {
            code: 200,
            headers: vec![],
            body: error.to_string(),
        },
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

/// A whole `write_file` reply but for one chunk in the middle of its arguments, which is not
/// JSON: without that piece the arguments still parse, and would write `lost.txt` short.
fn lost_piece() -> String {
    let start = format!("{{\"file_path\":\"{LOST_FILE}\",\"content\":\"a");
    let broken = r#"data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"MIDDLE\x"}}]}}]}"#;
    sse::role()
        + &sse::call_start(0, "call_lost", "write_file")
        + &sse::call_args(0, &start)
        + broken
        + "\n\n"
        + &sse::call_args(0, "b\"}")
        + &sse::finish("tool_calls")
        + &sse::done()
}

/// Tool calls in what the client sent that it must never have kept: arguments that are not a
/// whole JSON object, or the call of a reply that lost a piece.
fn corrupted_calls(requests: &[crate::server::Recorded]) -> usize {
    let calls: Vec<serde_json::Value> = (requests.iter())
        .flat_map(|r| r.messages())
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .collect();
    let whole = |args: &str| serde_json::from_str::<serde_json::Map<_, _>>(args).is_ok();
    (calls.iter())
        .map(|call| call["function"]["arguments"].as_str().unwrap_or(""))
        .filter(|args| !whole(args) || args.contains(LOST_FILE))
        .count()
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

/// The exit code, or None if the run outlived `DEADLINE` (then it is killed), and its output.
fn wait_with_deadline(mut child: std::process::Child) -> (Option<i32>, String, String) {
    let stderr = child.stderr.take().expect("piped stderr");
    let stdout = child.stdout.take().expect("piped stdout");
    let read = |mut pipe: Box<dyn Read + Send>| {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    };
    std::thread::scope(|scope| {
        let out = scope.spawn(move || read(Box::new(stdout)));
        let err = scope.spawn(move || read(Box::new(stderr)));
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
        let stdout = out.join().unwrap_or_default();
        (code, stdout, err.join().unwrap_or_default())
    })
}
