//! grep and glob over the large tree through the tools' own code path (`tools::run`, in
//! process), side by side with ripgrep, fd and CoreCoder's tools on the same tree.
//!
//! Peers run as processes (their start-up is a few ms of a run that takes hundreds); CoreCoder's
//! tools are timed inside Python, import excluded. Match counts are compared, and a verdict
//! needs ours equal to ripgrep's (and to fd's for glob), so a tool that ignores less (or more),
//! or stops early, cannot be fast and "met". It does not check the ordering of results.

use crate::measure::{median_of, ms, ratio, run_quiet, timed};
use crate::{Peers, Row};
use corecoder::client::llm::Llm;
use corecoder::core::config::Config;
use corecoder::core::consent::{Consent, Mode};
use corecoder::core::dispatch;
use corecoder::extras::Extras;
use corecoder::tools::ToolContext;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

const PATTERN: &str = r"needle_\d+\(";
const RUNS: usize = 5;

pub fn grep_and_glob(peers: &Peers) -> Vec<Row> {
    let root = crate::tree::ensure();
    let ctx = context(&root);
    let grep_args = serde_json::json!({"pattern": PATTERN}).to_string();
    let hits = listed(&dispatch::run("grep", &grep_args, &ctx).text);
    let ours = median_of(RUNS, || {
        timed(|| drop(dispatch::run("grep", &grep_args, &ctx)))
    });
    let mut grep = Row::new(
        &format!(
            "grep tool, `{PATTERN}` over the tree ({} hits)",
            shown(hits)
        ),
        ms(ours),
        "≤ 1.5× ripgrep",
    );
    if let Some(rg) = &peers.ripgrep {
        let (theirs, rg_hits) = peer_run(rg, &["-n", PATTERN, "."], &root);
        grep.peer(
            format!("ripgrep: {} ({rg_hits} hits)", ms(theirs)),
            ratio(theirs, ours),
        );
        grep.verdict(hits == Some(rg_hits) && ours.as_secs_f64() <= theirs.as_secs_f64() * 1.5);
    }
    if let Some(python) = &peers.python {
        let call = format!("GrepTool().execute(pattern=r'{PATTERN}', path='.')");
        if let Some(theirs) = python_tool(python, &root, "grep", "GrepTool", &call) {
            grep.peer(
                format!("CoreCoder grep: {} (stops at 5000 files)", ms(theirs)),
                ratio(theirs, ours),
            );
        }
    }
    let glob_args = serde_json::json!({"pattern": "**/*.rs"}).to_string();
    let files = listed(&dispatch::run("glob", &glob_args, &ctx).text);
    let ours = median_of(RUNS, || {
        timed(|| drop(dispatch::run("glob", &glob_args, &ctx)))
    });
    let mut glob = Row::new(
        &format!(
            "glob tool, `**/*.rs` over the tree ({} files)",
            shown(files)
        ),
        ms(ours),
        "≤ 1.5× ripgrep",
    );
    if let Some(rg) = &peers.ripgrep {
        let (theirs, count) = peer_run(rg, &["--files", "-g", "*.rs"], &root);
        glob.peer(
            format!("rg --files -g: {} ({count} files)", ms(theirs)),
            ratio(theirs, ours),
        );
        glob.verdict(files == Some(count) && ours.as_secs_f64() <= theirs.as_secs_f64() * 1.5);
    }
    if let Some(fd) = &peers.fd {
        let (theirs, count) = peer_run(fd, &["-t", "f", "-e", "rs"], &root);
        glob.peer(
            format!("fd: {} ({count} files)", ms(theirs)),
            ratio(theirs, ours),
        );
        if files != Some(count) && peers.ripgrep.is_some() {
            glob.verdict(false);
        }
    }
    if let Some(python) = &peers.python {
        let call = "GlobTool().execute(pattern='**/*.rs', path='.')";
        if let Some(theirs) = python_tool(python, &root, "glob_tool", "GlobTool", call) {
            glob.peer(
                format!("CoreCoder glob: {} (no ignores)", ms(theirs)),
                ratio(theirs, ours),
            );
        }
    }
    vec![grep, glob]
}

/// A tool context rooted at the tree, as the agent builds one (the model is never called).
fn context(root: &Path) -> ToolContext {
    let config = Config {
        base_url: "http://127.0.0.1:9/v1".to_string(),
        ..Config::default()
    };
    let (llm, cancel) = (Arc::new(Llm::new(config)), Arc::new(AtomicBool::new(false)));
    let consent = Consent::new(Mode::AllowAll);
    Extras::default().tool_context(root, &cancel, (&llm, &consent))
}

/// How many hits or files a grep or glob result lists: its lines, plus the "... and N more"
/// glob leaves unshown. None when grep stopped at its cap (the true count is unknown).
fn listed(text: &str) -> Option<usize> {
    let mut count = 0;
    for line in text.lines() {
        if line.starts_with("(stopped at") {
            return None;
        }
        match line
            .strip_prefix("... and ")
            .and_then(|l| l.strip_suffix(" more"))
        {
            Some(more) => count += more.parse::<usize>().ok()?,
            None => count += 1,
        }
    }
    Some(count)
}

fn shown(count: Option<usize>) -> String {
    count.map_or("more than the cap".to_string(), |n| n.to_string())
}

/// A peer's median time over the tree, and how many lines (hits or files) it printed.
fn peer_run(program: &Path, args: &[&str], root: &Path) -> (Duration, usize) {
    let command = || {
        let mut command = Command::new(program);
        command.args(args).current_dir(root);
        command
    };
    let time = median_of(RUNS, || run_quiet(&mut command()).0);
    (time, output_lines(&mut command()))
}

fn output_lines(command: &mut Command) -> usize {
    command.output().map_or(0, |out| {
        out.stdout
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count()
    })
}

/// Median of three timed calls of one of CoreCoder's tools, inside one Python process.
fn python_tool(
    python: &Path,
    root: &Path,
    module: &str,
    class: &str,
    call: &str,
) -> Option<Duration> {
    let script = format!(
        "import time\nfrom corecoder.tools.{module} import {class}\n{call}\nts = []\n\
         for _ in range(3):\n    t = time.perf_counter(); {call}; ts.append(time.perf_counter() - t)\n\
         print(sorted(ts)[1])"
    );
    let out = Command::new(python)
        .args(["-c", &script])
        .current_dir(root)
        .output()
        .ok()?;
    let seconds: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    Some(Duration::from_secs_f64(seconds))
}
