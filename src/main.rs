//! The `corecoder` binary: parse the command line, then run one task (`-p`), the interactive
//! session, or the offline demo.
//!
//! It only wires `Config`, `Llm`, `Agent` and the terminal together; no agent logic here.

use corecoder::Error;
use corecoder::app::setup::{self, Started};
use corecoder::app::terminal::{self, DIM, Display, Show};
use corecoder::app::{demo, output, repl};
use corecoder::core::config::{self, HELP, Invocation, OutputFormat, RunOptions};
use corecoder::core::consent::Mode;
use corecoder::core::http;
use corecoder::extras::secrets;
use std::io::Write;

fn main() {
    // One malloc arena for every thread, not one kept per pool worker: see DESIGN.md,
    // "One malloc arena".
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: no other thread exists yet, and this only sets one of malloc's tunables.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let code = match config::from_command_line() {
        Err(e) => {
            say(&format!("corecoder: {e}"));
            2
        }
        // `corecoder --help | head` closes stdout early: nothing to report.
        Ok(Invocation::Help) => {
            let _ = std::io::stdout().write_all(HELP.as_bytes());
            0
        }
        Ok(Invocation::Version) => {
            let _ = writeln!(std::io::stdout(), "corecoder {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(Invocation::Run(options)) => {
            hide_secrets(&options);
            match run(*options) {
                Ok(code) => code,
                Err(e) => {
                    say(&format!("corecoder: {e}"));
                    e.exit_code()
                }
            }
        }
    };
    std::process::exit(code);
}

/// Before any thread or child exists: no child may read a secret variable or the API key out
/// of our `/proc` files (see `secrets.rs`; done here, as the binary alone owns the process).
fn hide_secrets(options: &RunOptions) {
    let key = options.config.api_key.as_deref();
    let hidden = |name: &str, value: &str| options.shell.hides(name, value) || Some(value) == key;
    for note in secrets::hide_from_children(&hidden) {
        say(&format!("corecoder: {note}"));
    }
}

fn run(options: RunOptions) -> Result<i32, Error> {
    // Local servers (Ollama, llama.cpp, vLLM on this machine) usually need no key.
    let keyless = options.config.api_key.is_none() && !http::is_loopback(&options.config.base_url);
    if options.demo || (keyless && options.prompt.is_none()) {
        let display = Display::new(Show::CallsAndResults);
        if !options.demo {
            display.note(
                "No API key set (CORECODER_API_KEY, OPENAI_API_KEY or DEEPSEEK_API_KEY), \
                 so here is the offline demo. See corecoder --help to use a real model.",
            );
        }
        let finish = demo::run(&mut |event| display.show(event))?;
        return Ok(display.finish(&finish));
    }
    if keyless {
        return Err(Error::Usage(
            "no API key: set CORECODER_API_KEY (or OPENAI_API_KEY / DEEPSEEK_API_KEY), \
             pass --api-key, or try corecoder --demo"
                .to_string(),
        ));
    }
    match options.prompt.clone() {
        Some(prompt) => one_shot(options, &task_with_stdin(&prompt)?),
        None => repl::run(options),
    }
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

/// `-p`: run one task; the answer goes to stdout, everything else to stderr.
fn one_shot(options: RunOptions, task: &str) -> Result<i32, Error> {
    let mode = match options.approve_all {
        true => Mode::AllowAll,
        false => Mode::ReadOnly,
    };
    let Started { mut agent, notes } = setup::start(&options, mode)?;
    terminal::watch_ctrl_c(agent.cancel_flag())?;
    let display = Display::new(Show::Calls);
    display.stop_on_closed_output(agent.cancel_flag());
    for note in notes {
        display.note(&note);
    }
    if options.output != OutputFormat::Text {
        return Ok(output::run(&mut agent, task, options.output));
    }
    let finish = display.with_spinner(&mut || agent.run(task, &mut |event| display.show(event)));
    // The reader went away (`| head -1`): the run was stopped; end quietly, as SIGPIPE would.
    if display.output_closed() {
        return Ok(141);
    }
    if let Err(Error::Interrupted) = finish {
        display.interrupted();
    }
    display.note(&display.paint(DIM, &agent.extras().account.cost_summary()));
    Ok(display.finish(&finish?))
}

/// A line on stderr that cannot fail: a closed stderr is no reason to panic.
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}
