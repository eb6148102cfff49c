//! A plain agent, nothing turned on: `minimal -p TASK [--yes]` runs one task in the current
//! directory and prints the answer on stdout. The model comes from `CORECODER_BASE_URL`,
//! `CORECODER_API_KEY` and `CORECODER_MODEL` (or the `OPENAI_*` names). Without `--yes` only
//! read_file, glob, grep and todo_write run; with it bash and file changes run too.
//!
//! This is what a fork keeps: `core/`, `client/` and `tools/`, with `Extras::default()`.

use corecoder::{Agent, Config, Consent, Error, Finish, Llm, Mode};
use std::sync::Arc;

/// `CORECODER_NAME`, else `OPENAI_NAME`.
fn var(name: &str) -> Option<String> {
    let read = |prefix: &str| std::env::var(format!("{prefix}_{name}")).ok();
    read("CORECODER")
        .or_else(|| read("OPENAI"))
        .filter(|v| !v.is_empty())
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = match args.iter().position(|a| a == "-p") {
        Some(at) => args.get(at + 1).cloned().unwrap_or_default(),
        None => return Err(Error::Usage("usage: minimal -p TASK [--yes]".to_string())),
    };
    let mode = match args.iter().any(|a| a == "--yes") {
        true => Mode::AllowAll,
        false => Mode::ReadOnly,
    };
    let mut config = Config {
        api_key: var("API_KEY"),
        ..Config::default()
    };
    config.base_url = var("BASE_URL").unwrap_or(config.base_url);
    config.model = var("MODEL").unwrap_or(config.model);
    let cwd = std::env::current_dir().map_err(|e| Error::Io(e.to_string()))?;
    let mut agent = Agent::new(Arc::new(Llm::new(config)), cwd, Consent::new(mode));
    match agent.run(&task, &mut |_| {})? {
        Finish::Answer(text) | Finish::CutOff(text) => println!("{text}"),
        Finish::RoundCap => return Err(Error::Api("the round cap was reached".to_string())),
    }
    Ok(())
}
