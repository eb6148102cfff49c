//! The interactive session's side of trusted projects: the question before anything starts
//! (all of each file seen before a "y" counts, as for the consent question), and the `/trust`
//! command.
//!
//! `repl.rs` calls `ask` before `setup::start`, so no project hook or MCP server has run yet,
//! and `trust_now` for `/trust`. What the files are and how trust is recorded is `trust.rs`;
//! this file only asks, and reads the configuration again once the answer is yes.

use crate::app::dotenv::DotEnv;
use crate::app::flags::{Invocation, RunOptions};
use crate::app::repl_consent::{self, NOT_ALL_SHOWN, Viewed};
use crate::app::resolve;
use crate::app::setup;
use crate::app::terminal::Display;
use crate::core::agent::Agent;
use crate::core::event::Error;
use crate::extras::git_files::GitTrust;
use crate::extras::trust::{self, Project, Trust};
use crate::tools::support::shown::FALLBACK_WIDTH;
use rustyline::DefaultEditor;
use std::path::Path;

const QUESTION: &str = "Trust this folder? [y] yes, and remember it  [n] no, skip them this time";

/// Trust on first use: before any project hook or MCP server starts, show the files that would
/// start them (again when one changed) and ask. Yes remembers them as shown and reads the
/// configuration again (the `.env` may now count). No, Ctrl+C or Ctrl+D skips them this time.
pub(crate) fn ask(
    options: RunOptions,
    editor: &mut DefaultEditor,
    display: &Display,
) -> Result<RunOptions, Error> {
    let project = &options.project;
    let settled = project.trust() == Trust::Trusted && project.git() == GitTrust::Trusted;
    if settled || !trusted(editor, display, project) {
        return Ok(options);
    }
    // Trusted exactly as shown: a file that changed while the question waited is not.
    let mut shown = options.project.clone();
    // From what the process started with: its own environment and arguments no longer hold
    // the secrets (`secrets::hide_from_children`).
    let read_again = match shown.remember(&trust::store_path(&setup::corecoder_home())) {
        Ok(()) => resolve::read_again(&options.launch, Trust::Untrusted),
        Err(e) => {
            display.note(&format!("{e}: trusted for this session only."));
            resolve::read_again(&options.launch, Trust::Trusted)
        }
    };
    match read_again? {
        Invocation::Run(trusted) => Ok(*trusted),
        _ => Ok(options),
    }
}

/// The question and its answer: yes only once all of each file has been on screen (as the
/// consent question, `repl_consent.rs`): when the first lines are not all of it, "y" waits
/// for `v`.
fn trusted(editor: &mut DefaultEditor, display: &Display, project: &Project) -> bool {
    display.note(&project.question());
    let mut viewed = match project.shown_in_part() {
        true => Viewed::Part("not all shown".into()),
        false => Viewed::All,
    };
    loop {
        let question = match viewed {
            Viewed::All => format!("{QUESTION}: "),
            Viewed::Part(_) => format!("{QUESTION}  (not all shown — [v] view all): "),
        };
        let typed = (editor.readline(&question)).map(|a| a.trim().to_ascii_lowercase());
        match typed.as_deref() {
            Ok("y" | "yes") if viewed != Viewed::All => display.note(NOT_ALL_SHOWN),
            Ok("y" | "yes") => return true,
            Ok("v" | "view") => {
                display.note(&project.whole(repl_consent::width(editor)));
                viewed = Viewed::All;
            }
            Ok("n" | "no") | Err(_) => return false,
            Ok(_) => continue,
        }
    }
}

/// `/trust`: trust the project's files as they are *now* (shown first: the session may have
/// changed them) and load its hooks and MCP servers (the user's servers restart with them).
/// Its `.env` counts from the next start: the configuration is read once, at start-up.
pub(crate) fn trust_now(agent: &mut Agent, display: &Display) {
    let home = setup::corecoder_home();
    let user_home = std::env::var_os("HOME").unwrap_or_default();
    let dotenv = DotEnv::find(&agent.cwd, Path::new(&user_home));
    let store = trust::store_path(&home);
    let mut project = Project::look(
        &agent.cwd,
        dotenv.as_ref().and_then(DotEnv::for_trust),
        &store,
    );
    if project.files.is_empty() {
        return display.note(
            "This folder has no hooks, MCP servers, settings files or .env settings to trust.",
        );
    }
    // Trusted as it is now, so all of it is shown (no question follows for a `v`).
    if project.trust() == Trust::Untrusted || project.git() == GitTrust::Untrusted {
        display.note(&project.whole(FALLBACK_WIDTH));
    }
    if let Err(e) = project.remember(&store) {
        display.note(&format!("{e}: trusted for this session only."));
    }
    // The git files were shown (or unchanged): bash's git may run from them again.
    agent.extras.shell_mut().git = GitTrust::Trusted;
    for warning in setup::load_extensions(agent, &home, &project, &[]) {
        display.note(&warning);
    }
    display.note(&format!(
        "Trusted: {} hooks, {} MCP tools. A .env's settings count from the next start.",
        agent.extras.hooks().count(),
        agent.extras.mcp().tool_count()
    ));
}
