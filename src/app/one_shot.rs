//! `-p`: one task, run to its end without a person. The answer goes to stdout (or one JSON
//! object, or JSON lines, for `--output-format`); notes, calls and the cost go to stderr.
//!
//! The task is the `-p` text with whatever a pipe or a file on stdin adds. Mutating tools run
//! only with `--yes`; nothing asks, since nobody is there to answer. The interactive session
//! is `repl.rs`.

use crate::app::flags::{OutputFormat, RunOptions};
use crate::app::json_output;
use crate::app::markdown::DIM;
use crate::app::process;
use crate::app::setup::{self, Started};
use crate::app::terminal::{Display, Show};
use crate::core::consent::Mode;
use crate::core::event::Error;

/// `-p`: run one task; the answer goes to stdout, everything else to stderr.
pub fn run(options: RunOptions, prompt: &str) -> Result<i32, Error> {
    let task = task_with_stdin(prompt)?;
    let mode = match options.approve_all {
        true => Mode::AllowAll,
        false => Mode::ReadOnly,
    };
    let Started { mut agent, notes } = setup::start(&options, mode)?;
    process::watch_ctrl_c(agent.cancel.clone())?;
    let display = Display::new(Show::Calls);
    display.stop_on_closed_output(agent.cancel.clone());
    for note in notes {
        display.note(&note);
    }
    agent.extras.account().trace_task(&task, agent.consent.plan);
    if options.output != OutputFormat::Text {
        return Ok(json_output::run(&mut agent, &task, options.output));
    }
    let finish = display
        .spinner
        .around(&mut || agent.run(&task, &mut |event| display.show(event)));
    // The reader went away (`| head -1`): the run was stopped; end quietly, as SIGPIPE would.
    if display.output_closed() {
        return Ok(141);
    }
    if let Err(Error::Interrupted) = finish {
        display.interrupted();
    }
    display.note_in(DIM, &agent.extras.account().cost_summary());
    Ok(display.finish(&finish?))
}

/// What stdin adds to `-p`: the whole task for `-p -`, or context after the task when stdin is
/// a pipe or a file (`git diff | corecoder -p "review this"`); a terminal or /dev/null adds
/// nothing. At most `MAX_STDIN` bytes are read.
fn task_with_stdin(prompt: &str) -> Result<String, Error> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    const MAX_STDIN: u64 = 16 << 20;
    let piped = std::fs::metadata("/dev/stdin")
        .is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_file());
    let mut input = String::new();
    if prompt == "-" || piped {
        let mut bytes = Vec::new();
        let read = std::io::stdin().take(MAX_STDIN + 1).read_to_end(&mut bytes);
        read.map_err(|e| Error::Usage(format!("-p: cannot read stdin: {e}")))?;
        if bytes.len() as u64 > MAX_STDIN {
            return Err(Error::Usage(format!(
                "-p: stdin is over {} MiB",
                MAX_STDIN >> 20
            )));
        }
        input = String::from_utf8_lossy(&bytes).into_owned();
    }
    let task = match prompt {
        "-" => input,
        _ if input.trim().is_empty() => prompt.to_string(),
        _ => format!("{prompt}\n\n{input}"),
    };
    if task.trim().is_empty() {
        return Err(Error::Usage("-p -: stdin held no task".to_string()));
    }
    Ok(task)
}
