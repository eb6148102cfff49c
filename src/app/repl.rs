//! The interactive session: read a line, run it as a turn (or a slash command), repeat.
//!
//! `corecoder` without `-p` lands here. Line editing and history come from `rustyline`; the
//! consent question is asked here, on the main thread, when the agent calls `ask`. Ctrl+C
//! during a turn stops it and returns to the prompt with a valid history; at the prompt it
//! only clears the line. Before anything starts it asks whether to trust the folder's hooks and
//! MCP servers (`trust.rs`), when they are new or changed. It does not know how tools or
//! requests work.

use crate::app::repl_trust;
use crate::app::setup::{self, Started};
use crate::app::terminal::{self, BOLD, DIM, Display, Show};
use crate::core::agent::{Agent, Finish};
use crate::core::config::RunOptions;
use crate::core::consent::{Answer, Mode, Plan};
use crate::core::context::Tier;
use crate::core::error::Error;
use crate::extras::checkpoint::Checkpoints;
use crate::extras::sandbox::Sandbox;
use crate::extras::session;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use std::sync::atomic::Ordering;

const HELP: &str = "\
Type a task and press Enter. End a line with \\ to continue on the next one.
  /help             this list
  /model [NAME]     show or switch the model
  /tokens           tokens used so far
  /plan             toggle plan mode (read-only; type `approve` to carry the plan out)
  /reset            forget the conversation
  /undo             put back the last file change made by a tool
  /diff             files changed this session, with their diffs
  /save [NAME]      name this session (resume it with corecoder -r NAME)
  /sessions         the latest 20 sessions
  /compact          summarise the older part of the conversation now
  /mcp [reconnect NAME]   MCP servers: list them, or restart one
  /trust            trust this folder's hooks, MCP servers and .env as they are now
  quit, exit, Ctrl+D   leave; Ctrl+C stops a running turn";

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
    let options = repl_trust::ask(options, &mut editor, &display)?;
    let Started { mut agent, notes } = setup::start(&options, mode)?;
    let cancel = agent.cancel_flag();
    terminal::watch_ctrl_c(cancel.clone())?;
    let history = home.join("history");
    let _ = editor.load_history(&history);
    banner(&display, &agent, mode, options.shell.sandbox);
    for note in notes {
        display.note(&note);
    }
    loop {
        let task = match read_input(&mut editor, agent.consent_mut().plan) {
            Input::Quit => break,
            Input::Nothing => continue,
            Input::Cleared => {
                // The typed text stays on screen above the new prompt: say it was not sent.
                display.note(&display.paint(DIM, "(cleared, not sent)"));
                continue;
            }
            Input::Command(name, arg) => match command(&mut agent, &display, &name, &arg) {
                Some(task) => task,
                None => continue,
            },
            Input::Task(task) => approve_or(&mut agent, &display, task),
        };
        turn(&mut agent, &display, &mut editor, &task);
        // A Ctrl+C that stopped the turn is spent; the next one must not end the process.
        cancel.store(false, Ordering::Relaxed);
    }
    save_history(&mut editor, &history);
    // What the session spent, as `-p` says it at its end.
    display.note(&display.paint(DIM, &agent.extras().account.cost_summary()));
    Ok(0)
}

/// rustyline's `save_history` truncates the file and then writes it: a crash in between would
/// lose the whole history. So it writes a temporary file, synced and then renamed over it.
fn save_history(editor: &mut DefaultEditor, history: &std::path::Path) {
    if let Some(dir) = history.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let temp = history.with_extension("tmp");
    let _ = std::fs::remove_file(&temp);
    // Nothing new to save writes nothing; then there is no temporary file to rename.
    if editor.save_history(&temp).is_ok() && temp.exists() {
        let synced = std::fs::File::open(&temp).and_then(|file| file.sync_all());
        if synced.is_ok() {
            let _ = std::fs::rename(&temp, history);
        }
    }
}

fn banner(display: &Display, agent: &Agent, mode: Mode, sandbox: Sandbox) {
    let config = agent.llm().config();
    let version = env!("CARGO_PKG_VERSION");
    let mode = match mode {
        Mode::AllowAll => "allow all (--yes)",
        _ => "ask before changes",
    };
    display.note(&display.paint(
        BOLD,
        &format!("corecoder {version} · model {}", config.model),
    ));
    let mut details = format!("{} · {mode} · sandbox {sandbox}", config.base_url);
    if agent.hooks().count() > 0 {
        details.push_str(&format!(" · {} hooks", agent.hooks().count()));
    }
    if agent.mcp().tool_count() > 0 {
        details.push_str(&format!(" · {} MCP tools", agent.mcp().tool_count()));
    }
    details.push_str(" · /help for commands");
    display.note(&display.paint(DIM, &details));
    // What workspace-write cannot stop is said where the user looks: here.
    if sandbox == Sandbox::WorkspaceWrite {
        display.note(&display.paint(DIM, sandbox.describe()));
    }
}

/// One line, or several joined when each but the last ends in `\`.
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
    if agent.consent_mut().plan == Plan::On && task.trim().eq_ignore_ascii_case("approve") {
        agent.consent_mut().plan = Plan::Off;
        display.note("Plan mode off: carrying out the plan.");
        return "I approve the plan. Carry it out now.".to_string();
    }
    task
}

/// A slash command; `Some(task)` when it should be sent to the model.
fn command(agent: &mut Agent, display: &Display, name: &str, arg: &str) -> Option<String> {
    match name {
        "/help" => display.note(HELP),
        "/model" if arg.is_empty() => {
            display.note(&format!(
                "Model: {}",
                agent.extras().account.model(agent.llm().config())
            ));
        }
        "/model" => {
            agent.switch_model(arg);
            display.note(&format!("Model: {arg}"));
        }
        "/tokens" => display.note(&agent.extras().account.cost_summary()),
        "/plan" => {
            let consent = agent.consent_mut();
            consent.plan = match consent.plan {
                Plan::On => Plan::Off,
                Plan::Off => Plan::On,
            };
            let state = match consent.plan {
                Plan::On => "Plan mode on: only read-only tools run. Type `approve` to go ahead.",
                Plan::Off => "Plan mode off.",
            };
            display.note(state);
        }
        "/reset" => {
            agent.reset();
            display.note("Conversation cleared.");
        }
        "/undo" => match agent.checkpoints_mut().map(|c| c.undo()) {
            Some(Ok(done)) => {
                display.note(&done);
                // A file was put back ("Restored …", "Removed …"): the model must know.
                if done.starts_with("Restored") || done.starts_with("Removed") {
                    agent.tell_model(&format!("The user ran /undo: {done}"));
                }
            }
            Some(Err(done)) => display.note(&done),
            None => display.note("/undo is off in this session (see the note at start)."),
        },
        "/diff" => match agent.checkpoints_mut() {
            Some(checkpoints) => display.note(&checkpoints.diff()),
            None => display.note("/diff is off in this session (see the note at start)."),
        },
        "/save" => save(agent, display, arg),
        "/sessions" => sessions(display),
        "/compact" => {
            // A compaction that changed something says so itself (a notice); only say when not.
            let report = agent.compact(Tier::Summarise, &mut |event| display.show(event));
            if report.after >= report.before {
                display.note(&format!(
                    "Nothing to compact yet ({} tokens).",
                    report.before
                ));
            }
        }
        "/mcp" => mcp(agent, display, arg),
        "/trust" => repl_trust::trust_now(agent, display),
        _ => display.note(&format!("Unknown command: {name} (see /help)")),
    }
    None
}

/// `/save NAME`: rename the session (and its checkpoints) so `corecoder -r NAME` finds it.
fn save(agent: &mut Agent, display: &Display, name: &str) {
    let home = setup::corecoder_home();
    let Some(log) = agent.log_mut() else {
        return display.note("This session is not being saved (see the note at start).");
    };
    if name.is_empty() {
        return display.note(&format!("Session: {} (give a name: /save NAME)", log.id()));
    }
    let old = log.id().to_string();
    match log.rename(name) {
        Ok(new) => {
            let from = setup::checkpoint_dir(&home, &old);
            let to = setup::checkpoint_dir(&home, &new);
            let _ = std::fs::rename(&from, &to);
            let (checkpoints, _) = Checkpoints::open(&to);
            agent.attach_checkpoints(checkpoints);
            display.note(&format!("Saved as {new}: resume with corecoder -r {new}"));
        }
        Err(e) => display.note(&format!("Not saved: {e}")),
    }
}

/// `/mcp` lists the servers; `/mcp reconnect NAME` restarts one.
fn mcp(agent: &Agent, display: &Display, arg: &str) {
    let servers = agent.mcp();
    match arg.split_once(' ') {
        Some(("reconnect", name)) => match servers.reconnect(name.trim()) {
            Ok(done) | Err(done) => display.note(&done),
        },
        _ if servers.status().is_empty() => {
            display.note("No MCP servers (configure them in ~/.corecoder/mcp.json or .mcp.json).");
        }
        _ => servers.status().iter().for_each(|line| display.note(line)),
    }
}

/// `/sessions`: the latest 20, newest first.
fn sessions(display: &Display) {
    let dir = setup::sessions_dir(&setup::corecoder_home());
    let list = session::list(&dir, 20);
    if list.is_empty() {
        return display.note("No saved sessions yet.");
    }
    for summary in list {
        let when = session::utc_minute(summary.modified);
        let cwd = summary.cwd.map(|cwd| cwd.display().to_string());
        let cwd = cwd.unwrap_or_default();
        display.note(&format!("{:<24} {when}  {cwd}", summary.id));
        display.note(&display.paint(DIM, &format!("    {}", summary.preview)));
    }
    display.note("Resume one with corecoder -r ID.");
}

fn turn(agent: &mut Agent, display: &Display, editor: &mut DefaultEditor, task: &str) {
    let mut ask = |name: &str, summary: &str| ask(editor, display, name, summary);
    let result = display
        .with_spinner(&mut || agent.run_asking(task, &mut |event| display.show(event), &mut ask));
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

/// The consent question. Anything but y/a/n asks again; Ctrl+C or Ctrl+D means no.
fn ask(editor: &mut DefaultEditor, display: &Display, name: &str, summary: &str) -> Answer {
    display.spinner.stop();
    let question =
        format!("Allow {name}({summary})? [y] allow once  [a] always allow this tool  [n] deny: ");
    // The model chose the summary: a `\r` or an escape in it must not redraw the question.
    let question = crate::tools::support::text::printable(&question);
    let answer = loop {
        let typed = editor
            .readline(&question)
            .map(|a| a.trim().to_ascii_lowercase());
        match typed.as_deref() {
            Ok("y" | "yes") => break Answer::Once,
            Ok("a" | "always") => break Answer::Always,
            Ok("n" | "no") => break Answer::Deny,
            Ok(_) => continue,
            Err(_) => break Answer::Deny,
        }
    };
    // The call runs next (or the model is told no): either way, something is being waited for.
    display.spinner.start(name);
    answer
}
