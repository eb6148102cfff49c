//! Starting a session: the files under `~/.corecoder`, prices, the session log, checkpoints,
//! hooks and MCP servers (the project's only when trusted), and resuming an earlier session.
//! Shared by `-p` and the interactive mode.
//!
//! Runs once, before the first turn. Problems with these files never stop a session: they
//! become notes for the user (and that feature is off). A resume that cannot be found does.

use crate::agent::Agent;
use crate::checkpoint::Checkpoints;
use crate::config::{Resume, RunOptions};
use crate::consent::{Consent, Mode};
use crate::cost::PriceTable;
use crate::error::Error;
use crate::hooks::Hooks;
use crate::instructions::Instructions;
use crate::llm::Llm;
use crate::mcp::Servers;
use crate::mcp_config;
use crate::session::{self, Header, SessionLog};
use crate::trace::Trace;
use crate::trust::{self, Project};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

pub struct Started {
    pub agent: Agent,
    /// Warnings and what was resumed, for the user to read before the first turn.
    pub notes: Vec<String>,
}

pub fn start(options: &RunOptions, mode: Mode) -> Result<Started, Error> {
    let sandbox = options.shell.sandbox;
    sandbox.check_supported().map_err(Error::Usage)?;
    let home = corecoder_home();
    let mut notes = Vec::new();
    let (mut consent, warning) = Consent::with_file(mode, home.join("permissions.json"));
    consent.allow_destructive(&options.allow_destructive);
    notes.extend(warning);
    let (prices, warning) = PriceTable::with_overrides(&home.join("pricing.json"));
    notes.extend(warning);
    let cwd =
        std::env::current_dir().map_err(|e| Error::Io(format!("no working directory: {e}")))?;
    let sessions = sessions_dir(&home);

    let resumed = match &options.resume {
        None => None,
        Some(Resume::Id(id)) => Some(id.clone()),
        Some(Resume::LatestHere) => Some(session::latest_in(&sessions, &cwd).ok_or_else(|| {
            Error::Usage(format!(
                "no earlier session was started in {}",
                cwd.display()
            ))
        })?),
    };
    let mut config = options.config.clone();
    let mut history = Vec::new();
    if let Some(id) = &resumed {
        let loaded = session::load(&sessions, id).map_err(Error::Usage)?;
        // The model of the session comes back with it, unless -m chose another.
        if let (false, Some(header)) = (options.model_from_flag, &loaded.header) {
            config.model = header.model.clone();
        }
        notes.push(format!(
            "Resumed session {id}: {} messages.",
            loaded.messages.len()
        ));
        if loaded.skipped > 0 {
            notes.push(format!(
                "{} unreadable lines of the session file were skipped.",
                loaded.skipped
            ));
        }
        history = loaded.messages;
    }

    let header = Header {
        model: config.model.clone(),
        cwd: cwd.clone(),
        started: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    let mut llm = Llm::new(config).with_prices(prices);
    llm.check_budget_can_be_kept(&home.join("pricing.json"))?;
    if let Some(path) = &options.trace {
        let trace = Trace::create(path)
            .map_err(|e| Error::Usage(format!("--trace: cannot write {}: {e}", path.display())))?;
        llm = llm.with_trace(trace);
    }
    let llm = Arc::new(llm);
    let mut agent = Agent::new(llm, cwd, consent);
    agent.set_max_rounds(options.max_rounds);
    agent.set_shell_safety(options.shell.clone());
    agent.set_instructions(Instructions::new(&home));
    notes.extend(options.project.notes.iter().cloned());
    notes.extend(options.project.skipped_line());
    notes.extend(load_extensions(&mut agent, &home, &options.project));
    agent.resume(history);
    let log = match &resumed {
        Some(id) => SessionLog::reopen(&sessions, id),
        None => SessionLog::create(&sessions, &header).map_err(|e| e.to_string()),
    };
    match log {
        Ok(log) => {
            let (checkpoints, warning) = Checkpoints::open(&checkpoint_dir(&home, log.id()));
            notes.extend(warning);
            agent.attach_checkpoints(checkpoints);
            agent.attach_log(log);
        }
        Err(e) => notes.push(format!(
            "this session will not be saved, and /undo is off: {e}"
        )),
    }
    notes.extend(agent.start_hooks());
    Ok(Started { agent, notes })
}

/// Hooks and MCP servers: the user's own, and the project's where it is trusted (`trust.rs`).
/// Also called by `/trust`, to load what it just trusted. Returns the warnings.
pub fn load_extensions(agent: &mut Agent, home: &Path, project: &Project) -> Vec<String> {
    // Started in the home directory, the project's hooks file is the user's: read it once.
    let project_file = |relative: &str| {
        let path = agent.cwd().join(relative);
        let own = path == home.join("hooks.json");
        (project.allows(relative) && !own).then_some(path)
    };
    let project_hooks = project_file(trust::HOOKS_FILE);
    let mut mcp_files = vec![home.join("mcp.json")];
    mcp_files.extend(project_file(trust::MCP_FILE));
    let (hooks, mut warnings) = Hooks::load(&home.join("hooks.json"), project_hooks.as_deref());
    agent.set_hooks(Arc::new(hooks));
    let (configs, more) = mcp_config::load_config(&mcp_files);
    warnings.extend(more);
    let (servers, more) = Servers::start(configs);
    warnings.extend(more);
    agent.set_mcp(Arc::new(servers));
    warnings
}

/// `~/.corecoder` (or a temporary directory when there is no home).
pub fn corecoder_home() -> PathBuf {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    home.join(".corecoder")
}

/// Checkpoints are kept per session, so `corecoder -r ID` brings its `/undo` stack back.
pub fn checkpoint_dir(home: &Path, session_id: &str) -> PathBuf {
    home.join("checkpoints").join(session_id)
}

pub fn sessions_dir(home: &Path) -> PathBuf {
    home.join("sessions")
}
