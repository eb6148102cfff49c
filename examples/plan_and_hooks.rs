//! Plan mode and hooks, offline: what stops a mutating call, and in which order.
//!
//! `cargo run --example plan_and_hooks`. A throwaway project gets a `.corecoder/hooks.json`
//! with a `PreToolUse` hook that vetoes `rm -rf` (exit 2; its stderr is what the model reads)
//! and a `PostToolUse` hook whose output is added to every `edit_file` result. Then two turns:
//! 1. Plan mode on (as `/plan`): `read_file` runs, `edit_file` is refused even though the
//!    session allows everything (as `--yes`), and the model answers with a numbered plan.
//! 2. Plan mode off (as typing `approve`): the hook vetoes `rm -rf`, the edit runs.
//!
//! The model is scripted; the consent rules, the hooks (real `sh -c` processes) and the tools
//! are the library's own.

use corecoder::app::demo::{Turn, start_scripted_model, text, tool_calls};
use corecoder::core::consent::{Consent, Mode, Plan};
use corecoder::core::event::Event;
use corecoder::extras::hooks::Hooks;
use corecoder::{Agent, Error, Llm};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

const HOOKS: &str = r#"{
  "PreToolUse": [{"matcher": "bash",
    "command": "if grep -q 'rm -rf'; then echo 'rm -rf is not allowed here' >&2; exit 2; fi"}],
  "PostToolUse": [{"matcher": "edit_file", "command": "echo 'notes.txt changed: re-read it'"}]
}"#;

fn main() -> Result<(), Error> {
    let project = std::env::temp_dir().join(format!("corecoder-plan-{}", std::process::id()));
    let io = |e: std::io::Error| Error::Io(e.to_string());
    std::fs::create_dir_all(project.join(".corecoder")).map_err(io)?;
    std::fs::write(project.join("notes.txt"), "TODO: say hello\n").map_err(io)?;
    std::fs::write(project.join(".corecoder/hooks.json"), HOOKS).map_err(io)?;
    let result = run_both_turns(&project);
    let _ = std::fs::remove_dir_all(&project);
    result
}

fn run_both_turns(project: &Path) -> Result<(), Error> {
    let edit =
        json!({"file_path": "notes.txt", "old_string": "TODO: say hello", "new_string": "hello"});
    let model = start_scripted_model(vec![
        Turn::next(tool_calls(
            "Looking first.",
            &[
                ("read_file", json!({"file_path": "notes.txt"})),
                ("edit_file", edit.clone()),
            ],
        )),
        Turn::next(text(
            "Plan:\n1. Remove build/ with `rm -rf build`.\n2. Replace the TODO.",
        )),
        Turn::next(tool_calls(
            "Step 1.",
            &[("bash", json!({"command": "rm -rf build"}))],
        )),
        Turn::next(tool_calls("Step 2.", &[("edit_file", edit)])),
        Turn::next(text(
            "Done: the TODO is replaced; build/ was left alone (the hook said no).",
        )),
    ])?;
    let no_user_file = project.join("no-such-user-hooks.json");
    let files = [no_user_file, project.join(".corecoder/hooks.json")];
    let (hooks, warnings) = Hooks::load(&files);
    warnings.iter().for_each(|w| eprintln!("warning: {w}"));
    let llm = Arc::new(Llm::new(model.config()));
    let mut agent = Agent::new(llm, project.to_path_buf(), Consent::new(Mode::AllowAll));
    agent.extras.set_hooks(hooks);

    println!("== turn 1, plan mode on");
    agent.consent.plan = Plan::On;
    let plan = agent.run("Tidy up notes.txt", &mut show)?;
    println!("{plan:?}");

    println!("== turn 2, plan approved");
    agent.consent.plan = Plan::Off;
    let done = agent.run("I approve the plan. Carry it out now.", &mut show)?;
    println!("{done:?}");
    Ok(())
}

fn show(event: Event) {
    match event {
        Event::ToolCall { name, summary } => println!("> {name}({summary})"),
        Event::ToolResult { name, text, .. } => {
            println!("< {name}: {}", text.replace('\n', "\n  "))
        }
        Event::Notice(notice) => println!("! {notice}"),
        _ => {}
    }
}
