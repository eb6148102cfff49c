//! A team of three sub-agents, offline: the `agent` tool with `tasks`.
//!
//! `cargo run --example team`. The model splits "count the TODOs" over three workers; each is
//! the same `Agent` loop with a fresh history (started by `tools::agent::run_team` on scoped
//! threads, at most four at a time), runs its own `grep`, and answers. Their requests reach
//! the scripted model in no fixed order, so each worker's replies are keyed by its task
//! (`Turn::when`); the reports come back in the order given, each under its name.

use corecoder::app::demo::{Turn, start_scripted_model, text, tool_calls};
use corecoder::core::consent::{Consent, Mode};
use corecoder::core::event::Event;
use corecoder::{Agent, Error, Llm};
use serde_json::json;
use std::sync::Arc;

const MODULES: [(&str, &str); 3] = [
    ("lexer", "// TODO: unicode\nfn lex() {}\n"),
    (
        "parser",
        "// TODO: errors\n// TODO: recovery\nfn parse() {}\n",
    ),
    ("printer", "fn print() {}\n"),
];

fn main() -> Result<(), Error> {
    let project = std::env::temp_dir().join(format!("corecoder-team-{}", std::process::id()));
    let io = |e: std::io::Error| Error::Io(e.to_string());
    std::fs::create_dir_all(&project).map_err(io)?;
    for (name, source) in MODULES {
        std::fs::write(project.join(format!("{name}.rs")), source).map_err(io)?;
    }
    let model = start_scripted_model(script())?;
    // The `agent` tool needs consent like any mutating tool; AllowAll stands for "yes".
    let llm = Arc::new(Llm::new(model.config()));
    let mut agent = Agent::new(llm, project.clone(), Consent::new(Mode::AllowAll));
    let finish = agent.run(
        "Count the TODOs in each module.",
        &mut |event| match event {
            Event::ToolCall { name, summary } => println!("> {name}({summary})"),
            Event::ToolResult { text, .. } => println!("{text}"),
            _ => {}
        },
    );
    let _ = std::fs::remove_dir_all(&project);
    println!("{:?}", finish?);
    println!("{}", agent.extras.account().cost_summary());
    Ok(())
}

/// The lead's two replies, then two per worker, keyed by the file its task names.
fn script() -> Vec<Turn> {
    let tasks: Vec<_> = (MODULES.iter())
        .map(
            |(name, _)| json!({"name": name, "task": format!("Count the TODO lines in {name}.rs")}),
        )
        .collect();
    let lead = "each module";
    let mut script = vec![Turn::when(
        lead,
        tool_calls(
            "One worker per module.",
            &[("agent", json!({"tasks": tasks}))],
        ),
    )];
    for (name, source) in MODULES {
        let count = source.matches("TODO").count();
        let file = format!("{name}.rs");
        let grep = json!({"pattern": "TODO", "path": file});
        script.push(Turn::when(
            &file,
            tool_calls("Searching.", &[("grep", grep)]),
        ));
        script.push(Turn::when(&file, text(&format!("{file}: {count} TODOs"))));
    }
    script.push(Turn::when(
        lead,
        text("3 TODOs: lexer 1, parser 2, printer 0."),
    ));
    script
}
