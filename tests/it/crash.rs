//! Crash safety: SIGKILL the binary while it writes files (and its session log, checkpoints),
//! then check that no file is half-written and that the session resumes.
//!
//! Each run is a `-p --yes` session of many rounds of `write_file` / `edit_file` calls over a
//! few 16 KB files; every file has a known list of versions. A watcher polls the files while
//! the run goes on (every content it sees must be a whole version) and kills at a chosen
//! point: a temp file present (a write between create and rename), a file just changed (at a
//! rename, or inside a write that is not atomic), the session log just grown (an append), or a
//! random moment within a round (timed by an unkilled calibration run). After the kill each file must
//! be absent or one of its versions, every JSON file under `~/.corecoder` must parse, the
//! killed run's requests must be valid with nothing repaired, and `corecoder -r ID` must send
//! a valid history. `CORECODER_SOAK=1` runs 100 kills (seeded by `CORECODER_SOAK_SEED`); the
//! default suite runs 8, two at each kind of point.

use crate::run::{Output, Sandbox, finish, run, spawn_with};
use crate::server::{Reply, Server};
use crate::soak::Rng;
use crate::sse;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant, SystemTime};
const FILES: usize = 4;
const ROUNDS: usize = 40;

/// The content of `file` at `version`: a first line naming the version, then 16 KB of filler
/// (so a write takes long enough to be interrupted).
fn version(file: usize, version: usize) -> String {
    let filler = format!("file {file} filler line\n").repeat(700);
    format!("version {version}\n{filler}")
}

/// Round 0 writes every file; later rounds edit the first line of each, or rewrite it whole.
fn script() -> Vec<Reply> {
    let mut script = Vec::new();
    for round in 0..ROUNDS {
        let calls: Vec<(String, &str, Value)> = (0..FILES)
            .map(|file| {
                let id = format!("call_{round}_{file}");
                let path = format!("f{file}.txt");
                match (round, round % 3) {
                    (0, _) | (_, 2) => (
                        id,
                        "write_file",
                        json!({"file_path": path, "content": version(file, round)}),
                    ),
                    _ => (
                        id,
                        "edit_file",
                        json!({"file_path": path, "old_string": format!("version {}\n", round - 1),
                               "new_string": format!("version {round}\n")}),
                    ),
                }
            })
            .collect();
        let calls: Vec<(&str, &str, Value)> = calls
            .iter()
            .map(|(id, name, args)| (id.as_str(), *name, args.clone()))
            .collect();
        script.push(Reply::Sse(sse::tool_calls(&calls)));
    }
    script.push(Reply::Sse(sse::text("all written")));
    script
}

#[test]
fn sigkill_while_writing_leaves_whole_files_and_a_resumable_session() {
    let soak = std::env::var("CORECODER_SOAK").as_deref() == Ok("1");
    let kills = if soak { 100 } else { 8 };
    let seed: u64 = std::env::var("CORECODER_SOAK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let mut rng = Rng::new(seed);
    let (length, seen) = calibrate();
    let round = length / ROUNDS as u32;
    let (mut leftovers, mut repaired) = (0, 0);
    for kill in 0..kills {
        // Each kind of point in turn: the n-th such event, n drawn from what the calibration
        // run saw (less a margin: the watcher may miss short events), so the kills spread over
        // the run; or a random moment within a round (its length measured by the calibration)
        // after the n-th file change, as run lengths vary by half on a busy machine.
        let file_change = rng.below(seen.file_changes * 9 / 10);
        let point = match kill % 4 {
            0 => KillAt::TempFile(rng.below(seen.temp_files * 2 / 3)),
            1 => KillAt::FileChanged(file_change),
            2 => KillAt::LogGrew(rng.below(seen.log_growths * 2 / 3)),
            _ => KillAt::Moment(file_change, round.mul_f64(rng.below(1000) as f64 / 1000.0)),
        };
        let (left, repairs) = kill_and_check(&format!("crash_{kill}"), point);
        (leftovers, repaired) = (leftovers + left, repaired + repairs);
    }
    eprintln!(
        "crash: {kills} SIGKILLs (seed {seed}) in a run of {length:?} ({seen:?}), \
         {leftovers} temp files left behind, {repaired} tool messages repaired on resume"
    );
}

/// Where a run is killed: at the n-th event of a kind, or a delay after the n-th file change.
#[derive(Debug, Clone, Copy)]
enum KillAt {
    TempFile(usize),
    FileChanged(usize),
    LogGrew(usize),
    Moment(usize, Duration),
}

/// What the watcher saw of a run, counted.
#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    temp_files: usize,
    file_changes: usize,
    log_growths: usize,
}

fn start(sandbox: &Sandbox, server: &Server) -> Child {
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    spawn_with(&["-p", "write them", "--yes"], &env, sandbox)
}

/// One run to its end, watched: how long it takes and how many events of each kind it has.
fn calibrate() -> (Duration, Seen) {
    let sandbox = Sandbox::new("crash_calibration");
    let server = Server::answering_summaries(script(), "summary of the writing");
    let started = Instant::now();
    let mut child = start(&sandbox, &server);
    let seen = watch("calibration", &sandbox, &mut child, &mut |_| false);
    let out = finish(child);
    let length = started.elapsed();
    assert_eq!((out.code, out.stdout.trim()), (0, "all written"), "{out:?}");
    check_requests("calibration", &server, &out, ROUNDS + 1);
    assert!(seen.temp_files > 0 && seen.file_changes > 0 && seen.log_growths > 0);
    (length, seen)
}

/// One run killed at `point`; returns how many temporary files it left, and how many tool
/// messages its resume repaired.
fn kill_and_check(name: &str, point: KillAt) -> (usize, usize) {
    let sandbox = Sandbox::new(name);
    let server = Server::answering_summaries(script(), "summary of the writing");
    let mut child = start(&sandbox, &server);
    let mut changed_at = None;
    let mut reached = |seen: &Seen| match point {
        KillAt::TempFile(n) => seen.temp_files > n,
        KillAt::FileChanged(n) => seen.file_changes > n,
        KillAt::LogGrew(n) => seen.log_growths > n,
        KillAt::Moment(n, delay) => {
            if seen.file_changes > n && changed_at.is_none() {
                changed_at = Some(Instant::now());
            }
            changed_at.is_some_and(|at| at.elapsed() >= delay)
        }
    };
    watch(name, &sandbox, &mut child, &mut reached);
    let running = matches!(child.try_wait(), Ok(None));
    assert!(
        running,
        "{name}: the run ended before the kill at {point:?}"
    );
    let _ = child.kill();
    let out = finish(child);
    let mut leftovers = 0;
    for entry in std::fs::read_dir(&sandbox.dir).expect("list work dir") {
        let path = entry.expect("entry").path();
        let file_name = path.file_name().unwrap_or_default().to_string_lossy();
        if file_name.ends_with(".tmp") {
            leftovers += 1;
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read a written file");
        assert!(
            is_a_version(&file_name, &text),
            "{name} ({point:?}): {file_name} is no version of itself"
        );
    }
    // Every request the killed run sent was valid, with nothing repaired (it was not resumed).
    check_requests(name, &server, &out, 0);
    check_home(name, &sandbox.home.join(".corecoder"));
    (leftovers, resume(name, &sandbox))
}

/// Poll the work directory and the session log until `reached` says so or the run ends. Every
/// content of a file seen on the way must be one of its versions.
fn watch(
    name: &str,
    sandbox: &Sandbox,
    child: &mut Child,
    reached: &mut dyn FnMut(&Seen) -> bool,
) -> Seen {
    let mut seen = Seen::default();
    let mut temps = HashSet::new();
    let mut stamps: Vec<Option<(u64, SystemTime)>> = vec![None; FILES];
    let mut log_len = 0;
    let sessions = sandbox.home.join(".corecoder/sessions");
    while !reached(&seen) && matches!(child.try_wait(), Ok(None)) {
        for entry in std::fs::read_dir(&sandbox.dir)
            .into_iter()
            .flatten()
            .flatten()
        {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            if file_name.ends_with(".tmp") && temps.insert(file_name) {
                seen.temp_files += 1;
            }
        }
        for (file, stamp) in stamps.iter_mut().enumerate() {
            let path = sandbox.dir.join(format!("f{file}.txt"));
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            let now = meta.modified().ok().map(|at| (meta.len(), at));
            if now == *stamp {
                continue;
            }
            *stamp = now;
            seen.file_changes += 1;
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let file_name = format!("f{file}.txt");
            assert!(
                is_a_version(&file_name, &text),
                "{name}: {file_name} seen half-written ({} bytes) while the run went on",
                text.len()
            );
        }
        let log = std::fs::read_dir(&sessions)
            .into_iter()
            .flatten()
            .flatten()
            .next();
        let len = log.and_then(|e| e.metadata().ok()).map_or(0, |m| m.len());
        if len > log_len {
            (log_len, seen.log_growths) = (len, seen.log_growths + 1);
        }
    }
    seen
}

/// `f<N>.txt` holding one of the versions of file N.
fn is_a_version(file_name: &str, text: &str) -> bool {
    let file: usize = file_name
        .trim_start_matches('f')
        .trim_end_matches(".txt")
        .parse()
        .unwrap_or_else(|_| panic!("unexpected file {file_name}"));
    (0..ROUNDS).any(|v| text == version(file, v))
}

/// Each request the server saw is a valid history, there were `expected` of them (0: any
/// number), and the run reported no repair: nothing it did left a call unanswered.
fn check_requests(name: &str, server: &Server, out: &Output, expected: usize) {
    let requests = server.requests();
    if expected > 0 {
        assert_eq!(requests.len(), expected, "{name}: {out:?}");
    }
    for request in &requests {
        request.assert_valid_history();
    }
    assert!(!out.stderr.contains("history repaired"), "{name}: {out:?}");
}

/// Every JSON file under `dir` parses; every JSON Lines file has at most a cut last line.
fn check_home(name: &str, dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            check_home(name, &path);
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => {
                let parsed = serde_json::from_str::<Value>(&text);
                assert!(parsed.is_ok(), "{name}: {} is cut", path.display());
            }
            Some("jsonl") => {
                let lines: Vec<&str> = text.lines().collect();
                let broken = lines
                    .iter()
                    .filter(|l| serde_json::from_str::<Value>(l).is_err())
                    .count();
                let last_ok = lines
                    .last()
                    .is_none_or(|l| serde_json::from_str::<Value>(l).is_ok());
                assert!(
                    broken == 0 || broken == 1 && !last_ok && !text.ends_with('\n'),
                    "{name}: {} has a broken line inside",
                    path.display()
                );
            }
            _ => {}
        }
    }
}

/// Resume the killed session (if it got as far as creating one): the request must be valid,
/// and a repair, if any, no bigger than the crash explains. Returns the messages repaired.
fn resume(name: &str, sandbox: &Sandbox) -> usize {
    let sessions = sandbox.home.join(".corecoder/sessions");
    let Some(id) = std::fs::read_dir(&sessions).ok().and_then(|entries| {
        let path = entries.filter_map(Result::ok).next()?.path();
        Some(path.file_stem()?.to_string_lossy().into_owned())
    }) else {
        return 0;
    };
    let server = Server::answering_summaries(vec![Reply::Sse(sse::text("resumed"))], "summary");
    // The kill may cut a round: its calls are answered `[interrupted]` (bounded below).
    server.expect_repairs();
    let out = run(&["-r", &id, "-p", "go on"], &server, sandbox);
    assert_eq!(
        (out.code, out.stdout.trim()),
        (0, "resumed"),
        "{name}: resume {id}: {out:?}"
    );
    let requests = server.requests();
    assert!(!requests.is_empty(), "{name}: {out:?}");
    for request in &requests {
        request.assert_valid_history();
    }
    // The crash explains a repair only of the call group it cut: at most one round's calls.
    let repaired: usize = (out.stderr.lines())
        .filter_map(|l| l.strip_prefix("history repaired on resume: "))
        .filter_map(|l| l.split(' ').next()?.parse::<usize>().ok())
        .sum();
    assert!(repaired <= FILES, "{name}: {out:?}");
    assert_eq!(
        out.stderr.matches("history repaired").count(),
        (repaired > 0) as usize
    );
    repaired
}
