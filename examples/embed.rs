//! Embedding corecoder in your own program: `Config` → `Llm` → `Agent` → `run`.
//!
//! `cargo run --example embed` answers a question about this repository's `Cargo.toml` using a
//! scripted model on loopback (no key, no network). For a real provider, replace the `Config`
//! with `corecoder::app::variables::config_from_env()?` (CORECODER_API_KEY, CORECODER_MODEL, ...).

use corecoder::app::demo::{Turn, start_scripted_model, text, tool_calls};
use corecoder::core::consent::{Consent, Mode};
use corecoder::core::event::Event;
use corecoder::{Agent, Llm};
use serde_json::json;
use std::sync::Arc;

fn main() -> Result<(), corecoder::Error> {
    let read = json!({"file_path": "Cargo.toml", "limit": 5});
    let model = start_scripted_model(vec![
        Turn::next(tool_calls("Reading the manifest.", &[("read_file", read)])),
        Turn::next(text("The package is called corecoder.")),
    ])?;
    // The 20 lines that matter: where the model is, a client for it, an agent, a task.
    let config = model.config();
    let llm = Arc::new(Llm::new(config));
    let cwd = std::env::current_dir().map_err(|e| corecoder::Error::Io(e.to_string()))?;
    // ReadOnly: read_file, glob and grep run; bash and file changes are refused.
    let mut agent = Agent::new(llm, cwd, Consent::new(Mode::ReadOnly));
    let finish = agent.run("What is this package called?", &mut |event| match event {
        Event::ToolCall { name, summary } => println!("> {name}({summary})"),
        Event::ToolResult { text, .. } => println!("  {}", text.lines().next().unwrap_or("")),
        _ => {}
    })?;
    println!("{finish:?}");
    println!("{}", agent.extras.account().cost_summary());
    Ok(())
}
