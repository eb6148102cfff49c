//! The `corecoder` binary: parse the command line, then run one task (`-p`), the interactive
//! session, or the offline demo.
//!
//! It only wires `Config`, `Llm`, `Agent` and the terminal together; no agent logic here.

use corecoder::config::{self, HELP, Invocation, OutputFormat, RunOptions};
use corecoder::consent::Mode;
use corecoder::setup::{self, Started};
use corecoder::terminal::{self, DIM, Display, Show};
use corecoder::{Error, demo, http, output, repl, secrets};

fn main() {
    // glibc gives each thread that allocates its own malloc arena, and keeps it: the pool's
    // workers alone took a session's peak memory from 7.4 to 12 MiB. One arena cost no speed
    // we could tell from noise (grep and glob in BENCHMARKS.md): workers mostly wait on the disk.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: no other thread exists yet, and this only sets one of malloc's tunables.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let code = match config::from_command_line() {
        Err(e) => {
            eprintln!("corecoder: {e}");
            2
        }
        Ok(Invocation::Help) => {
            print!("{HELP}");
            0
        }
        Ok(Invocation::Version) => {
            println!("corecoder {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(Invocation::Run(options)) => {
            hide_secrets(&options);
            match run(*options) {
                Ok(code) => code,
                Err(e) => {
                    eprintln!("corecoder: {e}");
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
        eprintln!("corecoder: {note}");
    }
}

fn run(options: RunOptions) -> Result<i32, Error> {
    // Local servers (Ollama, llama.cpp, vLLM on this machine) usually need no key.
    let keyless = options.config.api_key.is_none() && !http::is_loopback(&options.config.base_url);
    if options.demo || (keyless && options.prompt.is_none()) {
        if !options.demo {
            eprintln!(
                "No API key set (CORECODER_API_KEY, OPENAI_API_KEY or DEEPSEEK_API_KEY), \
                 so here is the offline demo. See corecoder --help to use a real model."
            );
        }
        let display = Display::new(Show::CallsAndResults);
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
        Some(task) => one_shot(options, &task),
        None => repl::run(options),
    }
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
    for note in notes {
        display.note(&note);
    }
    if options.output != OutputFormat::Text {
        return Ok(output::run(&mut agent, task, options.output));
    }
    let finish = display.with_spinner(&mut || agent.run(task, &mut |event| display.show(event)));
    display.note(&display.paint(DIM, &agent.llm().cost_summary()));
    Ok(display.finish(&finish?))
}
