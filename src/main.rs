//! The `corecoder` binary: parse the command line, then run one task (`-p`) or the demo.
//!
//! It only wires `Config`, `Llm` and `Agent` together and prints what the agent reports:
//! answer text on stdout, tool lines, reasoning and notices on stderr. No agent logic here.

use corecoder::agent::{Event, Finish, Permission, ROUND_CAP_MESSAGE};
use corecoder::config::{self, HELP, Invocation, RunOptions};
use corecoder::{Agent, Error, Llm, demo, http, llm};
use std::io::{IsTerminal, Write};
use std::sync::Arc;

fn main() {
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
        Ok(Invocation::Run(options)) => match run(options) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("corecoder: {e}");
                e.exit_code()
            }
        },
    };
    std::process::exit(code);
}

fn run(options: RunOptions) -> Result<i32, Error> {
    let no_key = options.config.api_key.is_none();
    if options.demo || (no_key && options.prompt.is_none()) {
        if !options.demo {
            eprintln!(
                "No API key set (CORECODER_API_KEY, OPENAI_API_KEY or DEEPSEEK_API_KEY), \
                 so here is the offline demo. See corecoder --help to use a real model."
            );
        }
        let live = std::io::stdout().is_terminal();
        let finish = demo::run(&mut |event| print_event(event, live, Show::CallsAndResults))?;
        return Ok(report(finish, live));
    }
    let Some(task) = options.prompt.clone() else {
        eprintln!(
            "The interactive mode is not built yet. Give the task with -p, e.g.\n  \
             corecoder -p \"fix the failing test\" --yes\n(see corecoder --help)"
        );
        return Ok(2);
    };
    // Local servers (Ollama, llama.cpp, vLLM on this machine) usually need no key.
    if no_key && !http::is_loopback(&options.config.base_url) {
        return Err(Error::Usage(
            "no API key: set CORECODER_API_KEY (or OPENAI_API_KEY / DEEPSEEK_API_KEY), \
             pass --api-key, or try corecoder --demo"
                .to_string(),
        ));
    }
    one_shot(options, &task)
}

/// `-p`: run one task; the answer goes to stdout, everything else to stderr.
fn one_shot(options: RunOptions, task: &str) -> Result<i32, Error> {
    let permission = match options.approve_all {
        true => Permission::AllowAll,
        false => Permission::RefuseMutating,
    };
    let cwd =
        std::env::current_dir().map_err(|e| Error::Io(format!("no working directory: {e}")))?;
    let mut agent = Agent::new(Arc::new(Llm::new(options.config)), cwd, permission);
    agent.set_max_rounds(options.max_rounds);
    watch_ctrl_c(&agent)?;
    // On a terminal the answer streams as it arrives; in a pipe only the final answer is
    // printed, so `$(corecoder -p …)` captures just that.
    let live = std::io::stdout().is_terminal();
    let finish = agent.run(task, &mut |event| print_event(event, live, Show::Calls))?;
    Ok(report(finish, live))
}

/// Print how the task ended and choose the exit code.
fn report(finish: Finish, live: bool) -> i32 {
    match finish {
        Finish::Answer(text) => {
            match live {
                true => println!(),
                false => println!("{text}"),
            }
            0
        }
        Finish::RoundCap => {
            eprintln!("{ROUND_CAP_MESSAGE}");
            3
        }
    }
}

/// The first Ctrl+C asks the agent to stop at the next safe point (history stays valid);
/// a second one ends the process at once.
fn watch_ctrl_c(agent: &Agent) -> Result<(), Error> {
    use signal_hook::consts::SIGINT;
    let flag = agent.cancel_flag();
    let failed = |e: std::io::Error| Error::Io(format!("cannot watch for Ctrl+C: {e}"));
    signal_hook::flag::register_conditional_shutdown(SIGINT, 130, flag.clone()).map_err(failed)?;
    signal_hook::flag::register(SIGINT, flag).map_err(failed)?;
    Ok(())
}

/// How much of each tool call stderr shows: the demo also previews results, to show the loop.
#[derive(Clone, Copy, PartialEq)]
enum Show {
    Calls,
    CallsAndResults,
}

fn print_event(event: Event, live: bool, show: Show) {
    match event {
        Event::Llm(llm::Event::Text(text)) if live => {
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
        Event::Llm(llm::Event::Text(_)) => {}
        Event::Llm(llm::Event::Reasoning(text)) => eprint!("{text}"),
        Event::Llm(llm::Event::Retry { attempt, wait, why }) => {
            eprintln!("\n[retry {attempt} in {:.1}s: {why}]", wait.as_secs_f64());
        }
        Event::ToolCall { name, summary } => eprintln!("> {name}({summary})"),
        Event::ToolResult { text, .. } if show == Show::CallsAndResults => {
            for line in text.lines().take(4) {
                eprintln!("  {}", line.chars().take(100).collect::<String>());
            }
        }
        Event::ToolResult { .. } => {}
    }
}
