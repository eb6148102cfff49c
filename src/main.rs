//! The `corecoder` binary: parse the command line, then run one task (`-p`), the interactive
//! session, the offline demo, a replay of a traced session, or the editor's protocol (`--acp`).
//!
//! It reads as the run does: tune the process, parse the flags (`app/resolve.rs`), hide the
//! secrets, run one face (`app/one_shot.rs`, `app/repl.rs`, `app/demo.rs`, `app/replay.rs`, `app/acp.rs`),
//! exit with its code.
//! No agent logic here.

use corecoder::Error;
use corecoder::app::flags::{Invocation, RunOptions};
use corecoder::app::help::HELP;
use corecoder::app::terminal::{Display, Show};
use corecoder::app::{acp, demo, one_shot, process, repl, replay, resolve};
use corecoder::tools::support::{net, text};
use std::io::Write;

fn main() {
    process::tune_malloc();
    let code = match resolve::from_command_line() {
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
            for note in process::hide_secrets(&options) {
                say(&format!("corecoder: {note}"));
            }
            match run(*options) {
                Ok(code) => code,
                Err(e) => {
                    say(&format!("corecoder: {e}"));
                    process::exit_code(&e)
                }
            }
        }
    };
    std::process::exit(code);
}

/// Which face runs: a replay, the offline demo, one task (`-p`), or the interactive session.
fn run(options: RunOptions) -> Result<i32, Error> {
    // A replay needs no key: its model is the trace, served on loopback.
    if let Some(replaying) = options.replay.clone().filter(|_| !options.acp) {
        return replay::run(options, &replaying);
    }
    // Local servers (Ollama, llama.cpp, vLLM on this machine) usually need no key.
    let keyless = options.config.api_key.is_none() && !net::is_loopback(&options.config.base_url);
    if keyless && !options.demo {
        // The key may be in an untrusted project's `.env`: its note says so, and how to trust.
        options.project.notes.iter().for_each(|note| say(note));
    }
    if !options.acp && (options.demo || (keyless && options.prompt.is_none())) {
        let display = Display::new(Show::CallsAndResults);
        if !options.demo {
            display.note(
                "No API key set (CORECODER_API_KEY, OPENAI_API_KEY or DEEPSEEK_API_KEY), \
                 so here is the offline demo. See corecoder --help to use a real model.",
            );
        }
        let finish = demo::run(options.trace.as_deref(), &mut |event| display.show(event))?;
        return Ok(display.finish(&finish));
    }
    if keyless {
        return Err(Error::Usage(
            "no API key: set CORECODER_API_KEY (or OPENAI_API_KEY / DEEPSEEK_API_KEY), \
             pass --api-key, or try corecoder --demo"
                .to_string(),
        ));
    }
    if options.acp {
        return acp::run(options);
    }
    match options.prompt.clone() {
        Some(prompt) => one_shot::run(options, &prompt),
        None => repl::run(options),
    }
}

/// A line on stderr that cannot fail: a closed stderr is no reason to panic. An error may
/// quote a provider or a file: its escapes are shown as `?` (`printable`), not obeyed.
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{}", text::printable(text));
}
