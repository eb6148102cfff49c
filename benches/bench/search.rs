//! grep and glob over the large tree through the tools' own code path (`tools::run`, in
//! process), side by side with ripgrep, fd and CoreCoder's tools on the same tree.
//!
//! Peers run as processes (their start-up is a few ms of a run that takes hundreds); CoreCoder's
//! tools are timed inside Python, import excluded. Match counts are compared so a tool that
//! ignores less (or more) is caught. It does not check the ordering of results.

use crate::measure::{median_of, ms, ratio, run_quiet, timed};
use crate::{Peers, Row};
use corecoder::config::Config;
use corecoder::consent::{Consent, Mode};
use corecoder::llm::Llm;
use corecoder::tools::{self, ToolContext};
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
    let hits = tools::run("grep", &grep_args, &ctx).text.lines().count();
    let ours = median_of(RUNS, || {
        timed(|| drop(tools::run("grep", &grep_args, &ctx)))
    });
    let mut grep = Row::new(
        &format!("grep tool, `{PATTERN}` over the tree ({hits} hits)"),
        ms(ours),
        "≤ 1.5× ripgrep",
    );
    if let Some(rg) = &peers.ripgrep {
        let rg_hits = output_lines(
            Command::new(rg)
                .args(["-n", PATTERN, "."])
                .current_dir(&root),
        );
        let theirs = median_of(RUNS, || {
            run_quiet(
                Command::new(rg)
                    .args(["-n", PATTERN, "."])
                    .current_dir(&root),
            )
            .0
        });
        grep.peer(
            format!("ripgrep: {} ({rg_hits} hits)", ms(theirs)),
            ratio(theirs, ours),
        );
        grep.verdict(ours.as_secs_f64() <= theirs.as_secs_f64() * 1.5);
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
    let ours = median_of(RUNS, || {
        timed(|| drop(tools::run("glob", &glob_args, &ctx)))
    });
    let mut glob = Row::new(
        "glob tool, `**/*.rs` over the tree",
        ms(ours),
        "≤ 1.5× ripgrep",
    );
    if let Some(rg) = &peers.ripgrep {
        let files = || {
            let mut command = Command::new(rg);
            command.args(["--files", "-g", "*.rs"]).current_dir(&root);
            command
        };
        let theirs = median_of(RUNS, || run_quiet(&mut files()).0);
        let count = output_lines(&mut files());
        glob.peer(
            format!("rg --files -g: {} ({count} files)", ms(theirs)),
            ratio(theirs, ours),
        );
        glob.verdict(ours.as_secs_f64() <= theirs.as_secs_f64() * 1.5);
    }
    if let Some(fd) = &peers.fd {
        let theirs = median_of(RUNS, || {
            run_quiet(
                Command::new(fd)
                    .args(["-t", "f", "-e", "rs"])
                    .current_dir(&root),
            )
            .0
        });
        glob.peer(format!("fd: {}", ms(theirs)), ratio(theirs, ours));
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
    ToolContext {
        cwd: root.to_path_buf(),
        llm: Arc::new(Llm::new(config)),
        consent: Consent::new(Mode::AllowAll),
        cancel: Arc::new(AtomicBool::new(false)),
        instructions: None,
        hooks: Default::default(),
        mcp: Arc::new(corecoder::mcp::Servers::none()),
        shell: Default::default(),
        reads_running: Default::default(),
    }
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
