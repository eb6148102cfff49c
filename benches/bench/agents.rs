//! Benches that drive the real binary (and CoreCoder's) against the instant server: start-up,
//! per-round agent overhead and peak memory of a long `-p --yes` session, and parallel tool
//! calls. (Calls started while the reply is still streaming are timed in `streaming.rs`.)
//!
//! Every run gets its own server, a sandbox directory and a throwaway `HOME` (so sessions and
//! permissions land there). It measures wall time of whole processes; it does not profile.

use crate::measure::{median_of, mib, ms, peak_rss, ratio, run_quiet};
use crate::server::{Reply, Server};
use crate::sse_body;
use crate::{Peers, Row};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const RUNS: usize = 5;
/// CoreCoder stops at 50 rounds, so its session is shorter; overhead is per round either way.
const OUR_ROUNDS: usize = 100;
const PEER_ROUNDS: usize = 40;

pub fn startup(peers: &Peers) -> Row {
    let ours = median_of(21, || {
        run_quiet(Command::new(crate::OURS).arg("--version")).0
    });
    let mut row = Row::new(
        "start-up (`--version`, whole process)",
        ms(ours),
        "≤ 5 ms, ≥ 100×",
    );
    match &peers.corecoder {
        Some(python) => {
            let theirs = median_of(RUNS, || run_quiet(Command::new(python).arg("--version")).0);
            row.peer(format!("CoreCoder: {}", ms(theirs)), ratio(theirs, ours));
            row.verdict(ours <= Duration::from_millis(5) && theirs >= ours * 100);
        }
        None => row.verdict(ours <= Duration::from_millis(5)),
    }
    row
}

/// A `-p --yes` session of `rounds` glob calls in a small sandbox: median agent time per round
/// beyond the server's own time, and the peak RSS (`measure::peak_rss`). A verdict needs every
/// session to have asked the server once per round and once for the answer.
pub fn session(peers: &Peers) -> Vec<Row> {
    let sandbox = sandbox("session");
    for n in 0..20 {
        let _ = std::fs::write(sandbox.join(format!("file{n}.txt")), "some text\n");
    }
    let ours = per_round(&sandbox, Command::new(crate::OURS), OUR_ROUNDS);
    let mut overhead = Row::new(
        "agent overhead per round (`-p --yes`, one `glob` per round)",
        format!(
            "{} ({OUR_ROUNDS} rounds){}",
            ms(ours.per_round),
            ours.shortfall()
        ),
        "≤ 1 ms beyond the server",
    );
    overhead.verdict(ours.all_rounds && ours.per_round <= Duration::from_millis(1));
    let mut memory = Row::new(
        "peak RSS of that session (the agent process's own high-water mark)",
        mib(ours.peak_rss),
        "≤ 8 MiB",
    );
    memory.verdict(ours.all_rounds && ours.peak_rss <= 8 * 1024 * 1024);
    if let Some(python) = &peers.corecoder {
        let theirs = per_round(&sandbox, Command::new(python), PEER_ROUNDS);
        let shortfall = theirs.shortfall();
        let label = format!(
            "CoreCoder: {} ({PEER_ROUNDS} rounds){shortfall}",
            ms(theirs.per_round)
        );
        overhead.peer(label, ratio(theirs.per_round, ours.per_round));
        let ratio = format!(
            "{:.1}×",
            theirs.peak_rss as f64 / ours.peak_rss.max(1) as f64
        );
        memory.peer(
            format!("CoreCoder: {}{shortfall}", mib(theirs.peak_rss)),
            ratio,
        );
    }
    vec![overhead, memory]
}

/// What `per_round` measured of one program.
struct Rounds {
    per_round: Duration,
    peak_rss: u64,
    /// Every session sent one request per round plus one for the answer.
    all_rounds: bool,
}

impl Rounds {
    /// Said beside a figure that does not stand for the whole session.
    fn shortfall(&self) -> &'static str {
        match self.all_rounds {
            true => "",
            false => " (**not every round ran**)",
        }
    }
}

/// Time per round beyond the server and peak RSS for `program`, from sessions of 0 and
/// `rounds`; each session's requests are counted.
fn per_round(sandbox: &Path, program: Command, rounds: usize) -> Rounds {
    let glob_rounds = || -> Vec<Reply> {
        (0..rounds)
            .map(|n| json!({"pattern": format!("**/*.t{n}")}))
            .map(|args| instant(sse_body::tool_calls(&[("glob", args)])))
            .collect()
    };
    let mut all_rounds = true;
    let mut session = |script: Vec<Reply>| {
        let expected = script.len() + 1;
        let server = Server::start(script);
        let mut command = agent_command(&program, sandbox, &server);
        let (took, ok) = run_quiet(&mut command);
        if !ok || server.served() != expected {
            eprintln!(
                "note: a session by {:?} exited {}, after {} of {expected} requests",
                program.get_program(),
                if ok { "0" } else { "non-zero" },
                server.served()
            );
            all_rounds = false;
        }
        took.saturating_sub(server.busy())
    };
    let empty = median_of(RUNS, || session(Vec::new()));
    let full = median_of(RUNS, || session(glob_rounds()));
    let per_round = full.saturating_sub(empty) / rounds as u32;
    let mut peaks: Vec<u64> = (0..3)
        .filter_map(|_| {
            let server = Server::start(glob_rounds());
            let peak = peak_rss(&mut agent_command(&program, sandbox, &server));
            all_rounds &= server.served() == rounds + 1;
            peak
        })
        .collect();
    peaks.sort();
    let peak_rss = peaks.get(peaks.len() / 2).copied().unwrap_or(0);
    Rounds {
        per_round,
        peak_rss,
        all_rounds,
    }
}

/// The agent told to run one task with every tool allowed, against `server`, inside `sandbox`.
pub fn agent_command(program: &Command, sandbox: &Path, server: &Server) -> Command {
    let mut command = Command::new(program.get_program());
    command
        .args(["-p", "look around", "--yes"])
        .current_dir(sandbox)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sandbox.join("home"))
        .env("OPENAI_BASE_URL", &server.base_url)
        .env("OPENAI_API_KEY", "bench")
        .env("CORECODER_MODEL", "bench-model");
    if program.get_program() == crate::OURS {
        command.args(["--max-rounds", "1000"]);
    }
    command
}

/// Three `sleep 1` bash calls in one reply, against the same three in three rounds. Each call
/// appends its number to `marks.txt` after its sleep: a run counts only if all three did.
pub fn parallel_tools() -> Row {
    let sandbox = sandbox("parallel");
    // Each command differs, or the loop guard would refuse the third identical call.
    let sleep = |n: usize| {
        (
            "bash",
            json!({"command": format!("sleep 1 && echo {n} >> marks.txt")}),
        )
    };
    let one_reply = || {
        vec![instant(sse_body::tool_calls(&[
            sleep(0),
            sleep(1),
            sleep(2),
        ]))]
    };
    let three_rounds = || {
        (0..3)
            .map(|n| instant(sse_body::tool_calls(&[sleep(n)])))
            .collect()
    };
    let marks = sandbox.join("marks.txt");
    let mut every_sleep_ran = true;
    let mut time = |script: Vec<Reply>| {
        let _ = std::fs::remove_file(&marks);
        let server = Server::start(script);
        let mut command = agent_command(&Command::new(crate::OURS), &sandbox, &server);
        let took = run_quiet(&mut command).0;
        let mut written: Vec<String> = std::fs::read_to_string(&marks)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        written.sort();
        if written != ["0", "1", "2"] {
            eprintln!("note: the sleeps that finished: {written:?}, not 0, 1 and 2");
            every_sleep_ran = false;
        }
        took
    };
    let parallel = median_of(RUNS, || time(one_reply()));
    let sequential = median_of(RUNS, || time(three_rounds()));
    let mut row = Row::new(
        "3 × `sleep 1` bash calls in one reply (whole run)",
        ms(parallel),
        "≈ max(tools), not the sum",
    );
    row.peer(
        format!("sequential: {}", ms(sequential)),
        ratio(sequential, parallel),
    );
    row.verdict(every_sleep_ran && parallel < Duration::from_millis(1500));
    row
}

pub fn instant(body: String) -> Reply {
    vec![(Duration::ZERO, body)]
}

/// A fresh directory under `target/` with an empty `home/` in it.
pub fn sandbox(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("target/bench-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::create_dir_all(dir.join("home"));
    dir
}
