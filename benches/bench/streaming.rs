//! Read-only MCP calls started while the reply is still streaming, timed as whole runs.
//!
//! One scripted reply streams over 2.0 s and holds three calls of the `slow` tool of the
//! fixture MCP server (`fixtures/mcp/misbehaving_server.py`, each call sleeping 1 s): the
//! calls' arguments close at about 1/3 s, 2/3 s and 1 s, and the last chunk (finish_reason,
//! usage, `[DONE]`) arrives at 2.0 s; the next request gets a plain answer. Ours is
//! `-p --yes` with the server in `readonly` mode, which marks `slow` `readOnlyHint: true`: each
//! call starts as soon as it is whole, so all three are done when the stream ends (≈ 2 s).
//! The peer is the same run with the tool unmarked (mode `good`): the three calls start
//! together after the stream (≈ 3 s). The sequential figure (the stream, then the three calls
//! one after another) is computed as 2 s + 3 × 1 s, not measured. Each run includes the
//! binary's start-up and the Python server's start-up and handshake; every run is checked to
//! have called the tool three times. It does not time the built-in read-only tools
//! (`tests/it/early.rs` checks their early start).

use crate::Row;
use crate::agents::{agent_command, sandbox};
use crate::measure::{median_of, ms, ratio, run_quiet};
use crate::server::{Reply, Server};
use crate::sse_body;
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const RUNS: usize = 5;
const STREAM: Duration = Duration::from_millis(2000);
const TOOL: Duration = Duration::from_millis(1000);

pub fn early_start() -> Row {
    let marked = whole_runs("streaming-marked", "readonly");
    let unmarked = whole_runs("streaming-unmarked", "good");
    let sequential = STREAM + 3 * TOOL;
    let mut row = Row::new(
        "3 × 1 s read-only MCP calls streamed over 2 s (whole run)",
        marked.map_or("—".to_string(), ms),
        "≈ max(stream, tool), not the sum",
    );
    let (Some(ours), Some(unmarked)) = (marked, unmarked) else {
        row.not_measured();
        return row;
    };
    let label = format!("same tool not marked read-only: {}", ms(unmarked));
    row.peer(label, ratio(unmarked, ours));
    let label = format!("sequential (computed, 2 s + 3 × 1 s): {}", ms(sequential));
    row.peer(label, ratio(sequential, ours));
    // Met when the calls hid behind the stream: 2.0 s of stream plus 0.4 s for starting the
    // binary and the Python server and for the last request. Calls run after the stream
    // would take ≈ 3 s.
    row.verdict(ours <= Duration::from_millis(2400));
    row
}

/// The median whole run against the fixture server in `mode`; None (with a note) if a run
/// failed or did not call the tool three times.
fn whole_runs(name: &str, mode: &str) -> Option<Duration> {
    let sandbox = sandbox(name);
    configure(&sandbox, mode);
    let mark = sandbox.join("started");
    let mut faults = Vec::new();
    let median = median_of(RUNS, || {
        let _ = std::fs::remove_file(&mark);
        let server = Server::start(vec![three_calls_over_two_seconds(&mark)]);
        let program = Command::new(crate::OURS);
        let (took, ok) = run_quiet(&mut agent_command(&program, &sandbox, &server));
        let calls = std::fs::read_to_string(&mark)
            .unwrap_or_default()
            .lines()
            .count();
        if !ok || calls != 3 {
            faults.push(format!("exit ok: {ok}, tool calls: {calls}"));
        }
        took
    });
    if faults.is_empty() {
        return Some(median);
    }
    eprintln!(
        "note: streaming ({mode}) not measured: {}",
        faults.join("; ")
    );
    None
}

/// `~/.corecoder/mcp.json` naming the fixture server in `mode` as `fix`.
fn configure(sandbox: &Path, mode: &str) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/mcp/misbehaving_server.py");
    let fixture = fixture.display().to_string();
    let servers = json!({"fix": {"command": "python3", "args": [fixture, mode]}});
    let dir = sandbox.join("home/.corecoder");
    let _ = std::fs::create_dir_all(&dir);
    let config = json!({ "mcpServers": servers }).to_string();
    let _ = std::fs::write(dir.join("mcp.json"), config);
}

/// The reply: each call's arguments split in two, call n whole at (n + 1)/3 s, then nothing
/// until the last chunk at 2.0 s. The calls differ, or the loop guard would refuse the third.
fn three_calls_over_two_seconds(mark: &Path) -> Reply {
    let halves = |n: usize| {
        let (text, mark) = (format!("result {n}"), mark.display().to_string());
        let args = json!({"text": text, "ms": TOOL.as_millis() as u64, "mark": mark});
        let args = args.to_string();
        let mut middle = args.len() / 2;
        while !args.is_char_boundary(middle) {
            middle -= 1;
        }
        (args[..middle].to_string(), args[middle..].to_string())
    };
    let open = |n: usize| {
        let id = format!("call_{n}");
        sse_body::call_start(n, &id, "mcp__fix__slow") + &sse_body::call_args(n, &halves(n).0)
    };
    let close = |n: usize| sse_body::call_args(n, &halves(n).1);
    let last_call_whole = Duration::from_secs(1);
    let third = last_call_whole / 3;
    vec![
        (Duration::ZERO, sse_body::role() + &open(0)),
        (third, close(0) + &open(1)),
        (third, close(1) + &open(2)),
        (last_call_whole - 2 * third, close(2)),
        (STREAM - last_call_whole, sse_body::end("tool_calls")),
    ]
}
