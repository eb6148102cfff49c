//! The interactive session's side of trusted projects: the question before anything starts,
//! and the `/trust` command.
//!
//! `repl.rs` calls `ask` before `setup::start`, so no project hook or MCP server has run yet,
//! and `trust_now` for `/trust`. What the files are and how trust is recorded is `trust.rs`;
//! this file only asks, and reads the configuration again once the answer is yes.

use crate::app::dotenv::DotEnv;
use crate::app::flags::{Invocation, RunOptions};
use crate::app::resolve;
use crate::app::setup;
use crate::app::terminal::Display;
use crate::core::agent::Agent;
use crate::core::event::Error;
use crate::extras::git_files::GitTrust;
use crate::extras::trust::{self, Project, Trust};
use rustyline::DefaultEditor;
use std::path::Path;

/// Trust on first use: before any project hook or MCP server starts, show the files that would
/// start them (again when one changed) and ask. Yes remembers them as shown and reads the
/// configuration again (the `.env` may now count). No, Ctrl+C or Ctrl+D skips them this time.
pub fn ask(
    options: RunOptions,
    editor: &mut DefaultEditor,
    display: &Display,
) -> Result<RunOptions, Error> {
    if options.project.trust() == Trust::Trusted && options.project.git() == GitTrust::Trusted {
        return Ok(options);
    }
    display.note(&options.project.question());
    let question = "Trust this folder? [y] yes, and remember it  [n] no, skip them this time: ";
    loop {
        let typed = editor
            .readline(question)
            .map(|a| a.trim().to_ascii_lowercase());
        match typed.as_deref() {
            Ok("y" | "yes") => break,
            Ok("n" | "no") | Err(_) => return Ok(options),
            Ok(_) => continue,
        }
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

/// `/trust`: trust the project's files as they are *now* (shown first: the session may have
/// changed them) and load its hooks and MCP servers (the user's servers restart with them).
/// Its `.env` counts from the next start: the configuration is read once, at start-up.
pub fn trust_now(agent: &mut Agent, display: &Display) {
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
    if project.trust() == Trust::Untrusted || project.git() == GitTrust::Untrusted {
        display.note(&project.question());
    }
    if let Err(e) = project.remember(&store) {
        display.note(&format!("{e}: trusted for this session only."));
    }
    // The git files were shown (or unchanged): bash's git may run from them again.
    agent.extras.shell.git = GitTrust::Trusted;
    for warning in setup::load_extensions(agent, &home, &project) {
        display.note(&warning);
    }
    display.note(&format!(
        "Trusted: {} hooks, {} MCP tools. A .env's settings count from the next start.",
        agent.extras.hooks.count(),
        agent.extras.mcp.tool_count()
    ));
}
