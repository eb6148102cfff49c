//! The interactive session: read a line, run it as a turn (or a slash command, in
//! `repl_commands.rs`), repeat.
//!
//! `corecoder` without `-p` lands here. Line editing and history come from `rustyline`; the
//! consent question is asked on the main thread, when the agent calls `ask`, by
//! `repl_consent.rs`, with the preview the agent proposed just before. Ctrl+C
//! during a turn stops it and returns to the prompt with a valid history; at the prompt it
//! only clears the line. Before anything starts it asks whether to trust the folder's hooks and
//! MCP servers (`trust.rs`), when they are new or changed. It does not know how tools or
//! requests work.

use crate::app::flags::RunOptions;
use crate::app::markdown::{BOLD, DIM};
use crate::app::process;
use crate::app::repl_consent::{self, Call};
use crate::app::setup::{self, Started};
use crate::app::terminal::{Display, Show};
use crate::app::{repl_commands, repl_trust};
use crate::core::agent::Agent;
use crate::core::consent::{Mode, Plan};
use crate::core::event::{Error, Event, Finish};
use crate::extras::sandbox::Sandbox;
use crate::tools::support::file_lock::FileLock;
use crate::tools::support::files::{Access, write_atomic};
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use std::cell::RefCell;
use std::sync::atomic::Ordering;

/// What a line typed at the prompt asks for.
enum Input {
    Task(String),
    Command(String, String),
    Quit,
    Nothing,
    /// Ctrl+C at the prompt.
    Cleared,
}

pub fn run(options: RunOptions) -> Result<i32, Error> {
    let home = setup::corecoder_home();
    let mode = match options.approve_all {
        true => Mode::AllowAll,
        false => Mode::Ask,
    };
    let display = Display::new(Show::CallsAndResults);
    let mut editor = DefaultEditor::new().map_err(|e| Error::Io(format!("terminal: {e}")))?;
    // Esc+Enter (what a terminal sends for Alt+Enter) starts a new line of the same message,
    // as in Claude Code; without this binding rustyline ignored it and Enter joined the lines.
    let newline = rustyline::KeyEvent(rustyline::KeyCode::Enter, rustyline::Modifiers::ALT);
    editor.bind_sequence(newline, rustyline::Cmd::Newline);
    let options = repl_trust::ask(options, &mut editor, &display)?;
    let Started { mut agent, notes } = setup::start(&options, mode)?;
    let cancel = agent.cancel.clone();
    process::watch_ctrl_c(cancel.clone())?;
    let history = home.join("history");
    let _ = editor.load_history(&history);
    banner(&display, &agent, mode, options.shell.sandbox);
    for note in notes {
        display.note(&note);
    }
    loop {
        let task = match read_input(&mut editor, agent.consent.plan) {
            Input::Quit => break,
            Input::Nothing => continue,
            Input::Cleared => {
                // The typed text stays on screen above the new prompt: say it was not sent.
                display.note_in(DIM, "(cleared, not sent)");
                continue;
            }
            Input::Command(name, arg) => {
                match repl_commands::run(&mut agent, &display, &name, &arg) {
                    Some(task) => task,
                    None => continue,
                }
            }
            Input::Task(task) => approve_or(&mut agent, &display, task),
        };
        turn(&mut agent, &display, &mut editor, &task);
        // A Ctrl+C that stopped the turn is spent; the next one must not end the process.
        cancel.store(false, Ordering::Relaxed);
    }
    save_history(&mut editor, &history);
    // What the session spent, as `-p` says it at its end.
    display.note_in(DIM, &agent.extras.account().cost_summary());
    Ok(0)
}

/// This session's new lines join the history file as it is now, so the lines of a session that
/// ended meanwhile stay: under the file's lock, a scratch copy of it gets them (rustyline's
/// `append_history`, which merges into a file it did not load), and `write_atomic` puts its
/// bytes in place (a crash mid-write leaves the old history, never half of one).
fn save_history(editor: &mut DefaultEditor, history: &std::path::Path) {
    let Ok(_lock) = FileLock::take(history) else {
        return;
    };
    let scratch = history.with_extension(format!("{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&scratch);
    let copied = match std::fs::copy(history, &scratch) {
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        Ok(_) => true,
    };
    // With nothing new, the copy goes back as it was.
    if copied
        && editor.append_history(&scratch).is_ok()
        && let Ok(bytes) = std::fs::read(&scratch)
    {
        let _ = write_atomic(history, &bytes, Access::UserOnly);
    }
    let _ = std::fs::remove_file(&scratch);
}

fn banner(display: &Display, agent: &Agent, mode: Mode, sandbox: Sandbox) {
    let config = agent.llm().config();
    let version = env!("CARGO_PKG_VERSION");
    let provider = crate::app::variables::provider_name(config.dialect);
    let mode = match mode {
        Mode::AllowAll => "allow all (--yes)",
        _ => "ask before changes",
    };
    display.note_in(
        BOLD,
        &format!("corecoder {version} · model {} · {provider}", config.model),
    );
    let mut details = format!("{} · {mode} · sandbox {sandbox}", config.base_url);
    if agent.extras.hooks().count() > 0 {
        details.push_str(&format!(" · {} hooks", agent.extras.hooks().count()));
    }
    if agent.extras.mcp().tool_count() > 0 {
        details.push_str(&format!(" · {} MCP tools", agent.extras.mcp().tool_count()));
    }
    details.push_str(" · /help for commands");
    display.note_in(DIM, &details);
    // What workspace-write cannot stop is said where the user looks: here.
    if sandbox == Sandbox::WorkspaceWrite {
        display.note_in(DIM, sandbox.describe());
    }
}

/// One line, or several joined when each but the last ends in `\` (or when Esc+Enter put a
/// newline in the line itself).
fn read_input(editor: &mut DefaultEditor, plan: Plan) -> Input {
    let prompt = match plan {
        Plan::On => "(plan) > ",
        Plan::Off => "> ",
    };
    let mut lines: Vec<String> = Vec::new();
    loop {
        let shown = if lines.is_empty() { prompt } else { "... " };
        match editor.readline(shown) {
            Ok(line) => match line.strip_suffix('\\') {
                Some(head) => lines.push(head.to_string()),
                None => {
                    lines.push(line);
                    break;
                }
            },
            // Ctrl+C at the prompt clears what was typed; it never leaves.
            Err(ReadlineError::Interrupted) => return Input::Cleared,
            Err(_) => return Input::Quit,
        }
    }
    let text = lines.join("\n");
    let _ = editor.add_history_entry(text.as_str());
    let trimmed = text.trim();
    match trimmed {
        "" => Input::Nothing,
        "quit" | "exit" => Input::Quit,
        _ if trimmed.starts_with('/') => {
            let (name, arg) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
            Input::Command(name.to_string(), arg.trim().to_string())
        }
        _ => Input::Task(text),
    }
}

/// In plan mode, `approve` ends the planning and asks the model to carry the plan out.
fn approve_or(agent: &mut Agent, display: &Display, task: String) -> String {
    if agent.consent.plan == Plan::On && task.trim().eq_ignore_ascii_case("approve") {
        agent.consent.plan = Plan::Off;
        display.note("Plan mode off: carrying out the plan.");
        return "I approve the plan. Carry it out now.".to_string();
    }
    task
}

fn turn(agent: &mut Agent, display: &Display, editor: &mut DefaultEditor, task: &str) {
    agent.extras.account().trace_task(task, agent.consent.plan);
    // The preview of the call about to be asked about: the question shows it, not the display.
    let proposed: RefCell<Option<String>> = RefCell::default();
    let mut on_event = |event: Event| {
        if let Event::Proposed { preview, .. } = event {
            proposed.replace(Some(preview.to_string()));
        }
        display.show(event);
    };
    let mut ask = |name: &str, summary: &str, always: &str| {
        let call = Call {
            name,
            summary,
            always,
        };
        repl_consent::ask(editor, display, call, proposed.take().as_deref())
    };
    let result = display
        .spinner
        .around(&mut || agent.run_task(task, &mut on_event, &mut ask));
    match result {
        Ok(finish) => {
            display.finish(&finish);
            if finish == Finish::RoundCap {
                display.note("Send another message to let it go on.");
            }
        }
        Err(Error::Interrupted) => display.note("(interrupted)"),
        Err(e) => display.note(&format!("{e}")),
    }
}
