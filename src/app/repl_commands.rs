//! The interactive session's slash commands: the list `/help` prints, and what each does.
//!
//! `repl.rs` reads a line; one starting with `/` comes here, on the main thread, between
//! turns. A command changes the agent's settings or prints what it is asked for; it runs no
//! turn (`/compact` has the agent summarise, `/trust` is `repl_trust.rs`).

use crate::app::markdown::DIM;
use crate::app::repl_trust;
use crate::app::setup;
use crate::app::terminal::Display;
use crate::core::agent::Agent;
use crate::core::consent::Plan;
use crate::core::context::Tier;
use crate::extras::checkpoint::Checkpoints;
use crate::extras::consent_rules::settings;
use crate::extras::session;
use crate::extras::session::listing::Format;
use crate::tools::support::text::one_line;

const HELP: &str = "\
Type a task and press Enter. End a line with \\ to continue on the next one.
  /help             this list
  /model [NAME]     show or switch the model
  /tokens           tokens and dollars so far (cached tokens, hit rate)
  /plan             toggle plan mode (read-only; type `approve` to carry the plan out)
  /reset            forget the conversation
  /undo             put back the last file change made by a tool
  /diff             files edits and writes changed, with their diffs, and what bash ran
  /save [NAME]      name this session (resume it with corecoder -r NAME)
  /sessions         the latest 20 sessions (CoreCoder's too)
  /compact          summarise the older part of the conversation now
  /mcp [reconnect NAME]   MCP servers: list them, or restart one
  /trust            trust this folder's hooks, MCP servers, settings and .env as they are now
  /permissions [rm N]   the permission rules in force and their files; remove rule N
  quit, exit, Ctrl+D   leave; Ctrl+C stops a running turn";

/// A slash command; `Some(task)` when it should be sent to the model.
pub fn run(agent: &mut Agent, display: &Display, name: &str, arg: &str) -> Option<String> {
    match name {
        "/help" => display.note(HELP),
        "/model" if arg.is_empty() => {
            let config = agent.llm().config();
            let provider = crate::app::variables::provider_name(config.dialect);
            let model = agent.extras.account().model(config);
            display.note(&format!("Model: {model} · {provider}"));
        }
        "/model" => {
            agent.switch_model(arg);
            display.note(&format!("Model: {arg}"));
        }
        "/tokens" => display.note(&agent.extras.account().cost_summary()),
        "/plan" => {
            let consent = &mut agent.consent;
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
        "/undo" => match agent.extras.checkpoints_mut().map(|c| c.undo()) {
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
        "/diff" => match agent.extras.checkpoints_mut() {
            Some(checkpoints) => display.note(&diff(checkpoints)),
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
        "/permissions" => permissions(agent, display, arg),
        _ => display.note(&format!("Unknown command: {name} (see /help)")),
    }
    None
}

/// `/save NAME`: name the session so `corecoder -r NAME` finds it; its id keeps working.
fn save(agent: &mut Agent, display: &Display, name: &str) {
    let Some(log) = agent.extras.log_mut() else {
        return display.note("This session is not being saved (see the note at start).");
    };
    if name.is_empty() {
        let dir = setup::sessions_dir(&setup::corecoder_home());
        let names = session::names::of(&dir, log.id());
        let named = match names.is_empty() {
            true => String::new(),
            false => format!(" ({})", names.join(", ")),
        };
        return display.note(&format!(
            "Session: {}{named} (give a name: /save NAME)",
            log.id()
        ));
    }
    match log.name(name) {
        Ok(name) => display.note(&format!(
            "Saved as {name}: resume with corecoder -r {name} (or by its id, {})",
            log.id()
        )),
        Err(e) => display.note(&format!("Not saved: {e}")),
    }
}

/// At most this many of the commands bash ran are named under `/diff`.
const RAN_SHOWN: usize = 5;

/// `/diff`: the edits and writes, then what bash ran: its changes are not tracked (a command
/// may touch any file), so they are named with where to see them, never passed over.
fn diff(checkpoints: &Checkpoints) -> String {
    let mut out = checkpoints.diff();
    let ran = checkpoints.untracked();
    if ran.is_empty() {
        return out;
    }
    out.push_str("\nWhat bash changed is not tracked, so /diff cannot show it; this session ran:");
    if ran.len() > RAN_SHOWN {
        out.push_str(&format!("\n  … and {} earlier", ran.len() - RAN_SHOWN));
    }
    for command in &ran[ran.len().saturating_sub(RAN_SHOWN)..] {
        // A sub-agent's marker names its task, not a command line.
        let line = match command.starts_with("a sub-agent: ") {
            true => format!("\n  {}", one_line(command, 100)),
            false => format!("\n  $ {}", one_line(command, 100)),
        };
        out.push_str(&line);
    }
    out.push_str("\nIn a git repository, `git status` and `git diff` show every change.");
    out
}

/// `/mcp` lists the servers; `/mcp reconnect NAME` restarts one.
fn mcp(agent: &Agent, display: &Display, arg: &str) {
    let servers = agent.extras.mcp();
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

/// `/permissions` lists the rules in force (deny first, as they are applied), each with the
/// file it came from, then the tools allowed "always"; `/permissions rm N` takes rule N out of
/// its file and out of this session.
fn permissions(agent: &mut Agent, display: &Display, arg: &str) {
    match arg.strip_prefix("rm") {
        Some(n) => remove_permission(agent, display, n.trim()),
        None => list_permissions(agent, display),
    }
}

/// The numbering `/permissions` shows: the rules' places in the list, deny first, then the
/// tools allowed "always".
fn numbered(agent: &Agent) -> (Vec<usize>, Vec<String>) {
    let list = &agent.extras.rules().list;
    let mut order: Vec<usize> = (0..list.len()).collect();
    order.sort_by_key(|&at| list[at].list);
    (order, agent.consent.always.iter().cloned().collect())
}

fn list_permissions(agent: &Agent, display: &Display) {
    let (order, always) = numbered(agent);
    if order.is_empty() && always.is_empty() {
        return display.note(
            "No permission rules (write them in ~/.corecoder/settings.json, .claude/settings.json, \
             ...: see docs/safety.md).",
        );
    }
    let rules = agent.extras.rules();
    for (n, rule) in order.iter().map(|&at| &rules.list[at]).enumerate() {
        let line = format!("{:>3}. {:<5} {}", n + 1, rule.list.key(), rule.text);
        let source = rule.source.display().to_string();
        display.note_parts(&[("", &line), (DIM, &format!("  {source}"))]);
    }
    let file = rules.permissions.file.as_ref();
    let file = file.map_or("this session".to_string(), |f| f.display().to_string());
    for (n, tool) in always.iter().enumerate() {
        let line = format!("{:>3}. allow {tool} (\"always\")", order.len() + n + 1);
        display.note_parts(&[("", &line), (DIM, &format!("  {file}"))]);
    }
    display.note("Remove one with /permissions rm N.");
}

/// `/permissions rm N`: out of this session, and out of the file it came from.
fn remove_permission(agent: &mut Agent, display: &Display, n: &str) {
    let (order, always) = numbered(agent);
    let count = order.len() + always.len();
    let Some(n) = n.parse::<usize>().ok().filter(|n| (1..=count).contains(n)) else {
        return display.note(&format!(
            "Say which: /permissions rm N, N from 1 to {count}."
        ));
    };
    let removed = match order.get(n - 1) {
        Some(&at) => {
            let rules = agent.extras.rules_mut();
            let rule = rules.list.remove(at);
            let saved = settings::remove(&rule, rules.saved.as_ref());
            saved.map(|()| format!("{} {}", rule.list.key(), rule.text))
        }
        None => {
            let tool = &always[n - 1 - order.len()];
            agent.consent.always.remove(tool);
            let saved = (agent.extras.rules().permissions).save(&agent.consent.always);
            saved.map(|()| format!("always {tool}"))
        }
    };
    match removed {
        Ok(what) => display.note(&format!("Removed: {what}")),
        Err(e) => display.note(&format!("Removed for this session; the file: {e}")),
    }
}

/// `/sessions`: the latest 20, newest first.
fn sessions(display: &Display) {
    let dir = setup::sessions_dir(&setup::corecoder_home());
    let list = session::listing::list(&dir, 20);
    if list.is_empty() {
        return display.note("No saved sessions yet.");
    }
    for summary in list {
        let when = session::utc_minute(summary.modified);
        let cwd = match (summary.format, summary.cwd) {
            (Format::CoreCoder, _) => "(saved by CoreCoder)".to_string(),
            (Format::Log, cwd) => cwd.map(|cwd| cwd.display().to_string()).unwrap_or_default(),
        };
        let mut id = summary.id;
        if !summary.names.is_empty() {
            id = format!("{id} ({})", summary.names.join(", "));
        }
        display.note(&format!("{id:<24} {when}  {cwd}"));
        display.note_in(DIM, &format!("    {}", summary.preview));
    }
    display.note("Resume one with corecoder -r ID.");
}
