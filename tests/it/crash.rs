//! Crash safety: SIGKILL the binary at random moments while it writes files (and its session
//! log, checkpoints), then check that no file is half-written and that the session resumes.
//!
//! Each run is a `-p --yes` session of many rounds of `write_file` / `edit_file` calls over a
//! few 16 KB files; every file has a known list of versions, and after the kill each file must
//! be absent or equal one of them. Every JSON file under `~/.corecoder` must parse, and
//! `corecoder -r ID` must send a valid history. `CORECODER_SOAK=1` runs 100 kills (seeded by
//! `CORECODER_SOAK_SEED`); the default suite runs 4.

use crate::run::{Sandbox, finish, run, spawn_with};
use crate::server::{Reply, Server};
use crate::soak::Rng;
use crate::sse;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

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
    let kills = if soak { 100 } else { 4 };
    let seed: u64 = std::env::var("CORECODER_SOAK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let mut rng = Rng::new(seed);
    let mut leftovers = 0;
    for kill in 0..kills {
        // Up to 1.5 s: from before the first request to well into the rounds.
        let delay = Duration::from_millis(rng.below(1500) as u64);
        leftovers += kill_and_check(&format!("crash_{kill}"), delay);
    }
    eprintln!("crash: {kills} SIGKILLs (seed {seed}), {leftovers} temp files left behind");
}

/// One run killed after `delay`; returns how many temporary files it left.
fn kill_and_check(name: &str, delay: Duration) -> usize {
    let sandbox = Sandbox::new(name);
    let server = Server::answering_summaries(script(), "summary of the writing");
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let mut child = spawn_with(&["-p", "write them", "--yes"], &env, &sandbox);
    std::thread::sleep(delay);
    let running = matches!(child.try_wait(), Ok(None));
    assert!(
        running,
        "{name}: the run ended before the kill at {delay:?}"
    );
    let _ = child.kill();
    let _ = finish(child);
    let mut leftovers = 0;
    for entry in std::fs::read_dir(&sandbox.dir).expect("list work dir") {
        let path = entry.expect("entry").path();
        let file_name = path.file_name().unwrap_or_default().to_string_lossy();
        if file_name.ends_with(".tmp") {
            leftovers += 1;
            continue;
        }
        let file: usize = file_name
            .trim_start_matches('f')
            .trim_end_matches(".txt")
            .parse()
            .unwrap_or_else(|_| panic!("{name}: unexpected file {file_name}"));
        let text = std::fs::read_to_string(&path).expect("read a written file");
        let whole = (0..ROUNDS).any(|v| text == version(file, v));
        assert!(
            whole,
            "{name} ({delay:?}): {file_name} is no version of itself"
        );
    }
    check_home(name, &sandbox.home.join(".corecoder"));
    resume(name, &sandbox);
    leftovers
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

/// Resume the killed session (if it got as far as creating one): the request must be valid.
fn resume(name: &str, sandbox: &Sandbox) {
    let sessions = sandbox.home.join(".corecoder/sessions");
    let Some(id) = std::fs::read_dir(&sessions).ok().and_then(|entries| {
        let path = entries.filter_map(Result::ok).next()?.path();
        Some(path.file_stem()?.to_string_lossy().into_owned())
    }) else {
        return;
    };
    let server = Server::answering_summaries(vec![Reply::Sse(sse::text("resumed"))], "summary");
    let out = run(&["-r", &id, "-p", "go on"], &server, sandbox);
    assert_eq!(out.code, 0, "{name}: resume {id}: {out:?}");
    let requests = server.requests();
    assert!(!requests.is_empty(), "{name}: {out:?}");
    for request in &requests {
        request.assert_valid_history();
    }
}
