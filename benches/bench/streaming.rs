//! Read-only calls started while the reply is still streaming: three `read_file` calls whose
//! files are FIFOs that answer 1 s after the tool opens them, in a reply streamed over 2 s.
//!
//! A call counts as finished once a later call begins (or the stream ends), so calls 0 and 1 run
//! during the stream and call 2 after it. The run is timed as a whole process; the sum it is
//! compared with is stream + 3 × 1 s. It does not look at what the model is sent.

use crate::Row;
use crate::agents::{agent_command, sandbox};
use crate::measure::{median_of, ms, ratio, run_quiet};
use crate::server::Server;
use crate::sse_body::{call_args, call_start, end, role};
use serde_json::json;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const TOOL: Duration = Duration::from_secs(1);
const STREAM: Duration = Duration::from_secs(2);

pub fn early_start() -> Row {
    let dir = sandbox("streaming");
    let fifos: Vec<PathBuf> = (0..3).map(|n| dir.join(format!("pipe{n}.txt"))).collect();
    for fifo in &fifos {
        let name = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path; mkfifo touches nothing else.
        unsafe { libc::mkfifo(name.as_ptr(), 0o600) };
    }
    let took = median_of(5, || {
        let server = Server::start(vec![reply(&fifos)]);
        std::thread::scope(|scope| {
            for fifo in &fifos {
                scope.spawn(move || answer_after_a_second(fifo));
            }
            run_quiet(&mut agent_command(
                &Command::new(crate::OURS),
                &dir,
                &server,
            ))
            .0
        })
    });
    let sum = STREAM + 3 * TOOL;
    let mut row = Row::new(
        "3 × 1 s read-only calls streamed over 2 s (whole run)",
        ms(took),
        "≈ max(stream, tool), not the sum",
    );
    row.peer(format!("sum: {}", ms(sum)), ratio(sum, took));
    // The last call can only start when the stream ends, so stream + one tool is the floor.
    row.verdict(took < STREAM + TOOL + Duration::from_millis(300));
    row
}

/// Call 0 whole and call 1 begun at once; call 1 whole and call 2 begun after a third of the
/// stream; call 2 whole after two thirds; the end at `STREAM`.
fn reply(fifos: &[PathBuf]) -> Vec<(Duration, String)> {
    let args = |n: usize| json!({"file_path": fifos[n].to_string_lossy()}).to_string();
    let step = STREAM / 3;
    vec![
        (
            Duration::ZERO,
            role() + &call_start(0, "c0", "read_file") + &call_args(0, &args(0)),
        ),
        (Duration::ZERO, call_start(1, "c1", "read_file")),
        (
            step,
            call_args(1, &args(1)) + &call_start(2, "c2", "read_file"),
        ),
        (step, call_args(2, &args(2))),
        (step, end("tool_calls")),
    ]
}

/// Wait for a reader to open `fifo`, then answer 1 s later: a read-only tool that takes 1 s.
fn answer_after_a_second(fifo: &Path) {
    let give_up = Instant::now() + Duration::from_secs(20);
    while Instant::now() < give_up {
        // Non-blocking: fails until the tool has opened the other end.
        let opened = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(fifo);
        if let Ok(mut writer) = opened {
            std::thread::sleep(TOOL);
            let _ = writer.write_all(b"from the pipe\n");
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}
