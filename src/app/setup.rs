//! Starting a session: the files under `~/.corecoder`, prices, the session log, checkpoints,
//! hooks and MCP servers (the project's only when trusted), and resuming an earlier session.
//! Shared by `-p` and the interactive mode.
//!
//! Runs once, before the first turn. Problems with these files never stop a session: they
//! become notes for the user (and that feature is off). A resume that cannot be found does.

use crate::app::flags::{Resume, RunOptions};
use crate::client::llm::Llm;
use crate::core::agent::Agent;
use crate::core::consent::{Consent, Mode};
use crate::core::event::Error;
use crate::extras;
use crate::extras::account::Account;
use crate::extras::checkpoint::Checkpoints;
use crate::extras::consent_rules;
use crate::extras::consent_rules::settings;
use crate::extras::cost::PriceTable;
use crate::extras::hooks::Hooks;
use crate::extras::instructions::Instructions;
use crate::extras::mcp::Servers;
use crate::extras::mcp_config;
use crate::extras::mcp_wire::ServerConfig;
use crate::extras::permissions::Permissions;
use crate::extras::sandbox::Sandbox;
use crate::extras::session::{self, Header, SessionLog, listing};
use crate::extras::trace::Trace;
use crate::extras::trust::{self, Project};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

pub(crate) struct Started {
    pub(crate) agent: Agent,
    /// Warnings and what was resumed, for the user to read before the first turn.
    pub(crate) notes: Vec<String>,
}

pub(crate) fn start(options: &RunOptions, mode: Mode) -> Result<Started, Error> {
    let cwd =
        std::env::current_dir().map_err(|e| Error::Io(format!("no working directory: {e}")))?;
    start_in(options, mode, cwd, &[])
}

/// `start` in `cwd` rather than the process's directory, with `more_mcp` servers beside the
/// configured ones (an editor's session over ACP, `acp.rs`, passes its own).
pub(crate) fn start_in(
    options: &RunOptions,
    mode: Mode,
    cwd: PathBuf,
    more_mcp: &[ServerConfig],
) -> Result<Started, Error> {
    let sandbox = options.shell.sandbox;
    sandbox.check_supported().map_err(Error::Usage)?;
    let home = corecoder_home();
    let mut notes = Vec::new();
    if sandbox != crate::extras::sandbox::Sandbox::Off {
        notes.extend(crate::extras::sandbox::kernel_gaps());
    }
    notes.extend(make_private(&home));
    let permissions = Permissions {
        file: Some(home.join("permissions.json")),
    };
    let (always, warning) = permissions.read();
    let mut consent = Consent::new(mode);
    consent.always = always;
    notes.extend(warning);
    let (prices, warning) = PriceTable::with_overrides(&home.join("pricing.json"));
    notes.extend(warning);
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
    let provider = crate::app::variables::provider_key(config.dialect);
    let mut history = Vec::new();
    let (mut repaired, mut taught) = (0, None);
    if let Some(id) = &resumed {
        let loaded = session::load(&sessions, id).map_err(Error::Usage)?;
        // The model the session last used comes back with it, unless -m chose another, or
        // the session spoke another dialect (its model would mean nothing here).
        let spoken = loaded.header.as_ref().map_or("", |h| h.provider.as_str());
        let same = Some(spoken).filter(|p| !p.is_empty()).unwrap_or("openai") == provider;
        if let (false, true, Some(model)) = (options.model_from_flag, same, &loaded.model) {
            config.model = model.clone();
        }
        notes.push(format!(
            "Resumed session {id}: {} messages, model {}.",
            loaded.messages.len(),
            config.model
        ));
        notes.extend(listing::last_exchange(&loaded.messages));
        if loaded.skipped > 0 {
            notes.push(format!(
                "{} unreadable lines of the session file were skipped.",
                loaded.skipped
            ));
        }
        if loaded.repaired > 0 {
            notes.push(extras::repair_notice(loaded.repaired, "on resume"));
        }
        repaired = loaded.repaired;
        taught = loaded.taught;
        history = loaded.messages;
    }

    let header = Header {
        model: config.model.clone(),
        provider: provider.to_string(),
        cwd: cwd.clone(),
        started: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    let llm = Llm::new(config);
    let mut account = Account::default().with_prices(prices);
    account.check_budget_can_be_kept(llm.config(), &home.join("pricing.json"))?;
    if let Some(path) = &options.trace {
        let trace = Trace::create(path, llm.config(), &cwd)
            .map_err(|e| Error::Usage(format!("--trace: cannot write {}: {e}", path.display())))?;
        if repaired > 0 {
            trace.record("repair", json!({"changed": repaired, "at": "resume"}));
        }
        account = account.with_trace(trace);
    }
    let mut agent = Agent::new(Arc::new(llm), cwd.clone(), consent);
    agent.extras.set_account(account);
    agent.extras.set_quirks(agent.llm().quirks.clone(), taught);
    let rules = consent_rules::Rules {
        permissions,
        ..consent_rules::Rules::default()
    };
    *agent.extras.rules_mut() = rules;
    (agent.extras.gate_mut()).allow_destructive(&options.allow_destructive);
    agent.max_rounds = options.max_rounds;
    // The writable roots are fixed here, from the launch directory, for the whole session.
    let mut shell = options.shell.for_session(&cwd).map_err(Error::Usage)?;
    shell.git = options.project.git();
    if shell.sandbox == Sandbox::WorkspaceWrite {
        // Before any tool runs: what this session could plant is compared from now on.
        let store = trust::store_path(&home);
        notes.extend(options.project.watch_git(&store).err());
    }
    notes.extend(options.project.git_line());
    *agent.extras.shell_mut() = shell;
    agent.extras.set_instructions(Instructions::new(&home));
    notes.extend(options.project.notes.iter().cloned());
    notes.extend(options.project.skipped_line());
    notes.extend(load_extensions(
        &mut agent,
        &home,
        &options.project,
        more_mcp,
    ));
    (agent.extras).check_tool_choice(agent.llm().config(), agent.kind)?;
    if !history.is_empty() {
        agent.resume(history);
    }
    let log = match &resumed {
        Some(id) => SessionLog::reopen(&sessions, id, &header),
        None => SessionLog::create(&sessions, &header)
            .map_err(|e| format!("cannot write in {}: {e}", sessions.display())),
    };
    match log {
        Ok(log) => {
            let (checkpoints, warning) = Checkpoints::open(&checkpoint_dir(&home, log.id()));
            notes.extend(warning);
            agent.extras.set_checkpoints(checkpoints);
            agent.extras.set_log(log);
        }
        Err(e) => notes.push(format!(
            "this session will not be saved, and /undo is off: {e}"
        )),
    }
    notes.extend(agent.extras.session_started(&agent.cwd));
    Ok(Started { agent, notes })
}

/// Hooks, MCP servers and the settings files' permission rules: the user's own, and the
/// project's where it is trusted (`trust.rs`).
/// Also called by `/trust`, to load what it just trusted. Returns the warnings.
pub(crate) fn load_extensions(
    agent: &mut Agent,
    home: &Path,
    project: &Project,
    more_mcp: &[ServerConfig],
) -> Vec<String> {
    // Started in the home directory, the project's hooks file is the user's: read it once.
    let project_file = |relative: &str| {
        let path = agent.cwd.join(relative);
        let own = path == home.join("hooks.json");
        (project.allows(relative) && !own).then_some(path)
    };
    let mut hook_files = vec![home.join("hooks.json")];
    hook_files.extend(project_file(trust::HOOKS_FILE));
    let mut mcp_files = vec![home.join("mcp.json")];
    mcp_files.extend(project_file(trust::MCP_FILE));
    // `~/.claude` is beside `~/.corecoder`; with no home (`corecoder_home`'s temp fallback)
    // it is inside that private folder, never in the shared temp directory.
    let user_home = home
        .parent()
        .filter(|_| home.ends_with(".corecoder"))
        .unwrap_or(home);
    let trusted = |relative: &str| project.allows(relative);
    let settings = settings::load(user_home, home, &agent.cwd, &trusted);
    hook_files.extend(settings.hook_files);
    let (hooks, mut warnings) = Hooks::load(&hook_files);
    warnings.extend(settings.warnings);
    agent.extras.set_hooks(hooks);
    let rules = agent.extras.rules_mut();
    (rules.list, rules.saved) = (settings.rules, settings.saved);
    let (mut configs, more) = mcp_config::load_config(&mcp_files);
    warnings.extend(more);
    configs.extend(more_mcp.iter().cloned());
    let (servers, more) = Servers::start(configs);
    warnings.extend(more);
    agent.extras.set_mcp(servers);
    warnings
}

/// `~/.corecoder`. `check_home` refused, at start-up, a `HOME` that is not an existing
/// absolute directory; met here anyway (a program embedding the app), a private directory in
/// the temp directory stands in, never the project or a shared place.
pub(crate) fn corecoder_home() -> PathBuf {
    match check_home(std::env::var_os("HOME")) {
        Ok(home) => home,
        // SAFETY: getuid has no preconditions and cannot fail.
        Err(_) => std::env::temp_dir().join(format!("corecoder-{}", unsafe { libc::getuid() })),
    }
}

/// `$HOME/.corecoder`, for a `HOME` that is an absolute path to a directory. Anything else is
/// a usage error saying what is wrong with it: the password file's home taken unseen (cron,
/// `env -i`), or a home made along a mistyped path (as root, `HOME=/nonexistent/x` once made
/// the whole path), would keep sessions where the user does not look.
pub(crate) fn check_home(home: Option<std::ffi::OsString>) -> Result<PathBuf, Error> {
    let why = match home.as_deref().map(Path::new) {
        None => "HOME is not set".to_string(),
        Some(home) if home.as_os_str().is_empty() => "HOME is empty".to_string(),
        Some(home) if !home.is_absolute() => {
            format!("HOME '{}' is not an absolute path", home.display())
        }
        Some(home) if !home.is_dir() => {
            let home = home.display();
            format!("HOME '{home}' does not exist or is not a directory")
        }
        Some(home) => return Ok(home.join(".corecoder")),
    };
    Err(Error::Usage(format!(
        "{why}: corecoder keeps its sessions, history and permissions in $HOME/.corecoder, \
         and makes no home: set HOME to your home directory"
    )))
}

/// `~/.corecoder` exists and only its owner can enter it: sessions, traces of the conversation
/// and permissions live there. An existing one of ours with wider rights is narrowed.
fn make_private(home: &Path) -> Option<String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let made = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(home);
    if let Err(e) = made {
        return Some(format!("cannot create {}: {e}", home.display()));
    }
    let meta = std::fs::symlink_metadata(home).ok()?;
    // SAFETY: getuid has no preconditions and cannot fail.
    let ours = meta.uid() == unsafe { libc::getuid() };
    if !ours || !meta.is_dir() {
        let owner = "owned by someone else, or not a directory";
        return Some(format!("{} is {owner}: check it", home.display()));
    }
    if meta.mode() & 0o077 != 0 {
        let private = std::fs::Permissions::from_mode(0o700);
        let _ = std::fs::set_permissions(home, private);
    }
    None
}

/// Checkpoints are kept per session, so `corecoder -r ID` brings its `/undo` stack back.
pub(crate) fn checkpoint_dir(home: &Path, session_id: &str) -> PathBuf {
    home.join("checkpoints").join(session_id)
}

pub(crate) fn sessions_dir(home: &Path) -> PathBuf {
    home.join("sessions")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_home_that_is_not_an_existing_absolute_directory_is_refused() {
        let said = |home: Option<&str>| match check_home(home.map(Into::into)) {
            Ok(home) => home.display().to_string(),
            Err(e) => e.to_string(),
        };
        let root = std::env::temp_dir();
        let root = root.to_str().expect("UTF-8");
        assert_eq!(said(Some(root)), format!("{root}/.corecoder"));
        assert!(said(None).starts_with("HOME is not set: "));
        assert!(said(Some("")).starts_with("HOME is empty: "));
        assert!(said(Some("rel/dir")).starts_with("HOME 'rel/dir' is not an absolute path: "));
        let missing = format!("{root}/corecoder-no-such-home-{}/x", std::process::id());
        let err = said(Some(&missing));
        assert!(
            err.starts_with(&format!("HOME '{missing}' does not exist")),
            "{err}"
        );
        assert!(!Path::new(&missing).exists());
        let fallback = corecoder_home();
        assert!(fallback.is_absolute(), "{}", fallback.display());
    }

    #[test]
    fn the_state_directory_is_made_private() {
        let dir = std::env::temp_dir().join(format!("corecoder-private-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let home = dir.join(".corecoder");
        assert_eq!(make_private(&home), None);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&home), 0o700);
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(make_private(&home), None);
        assert_eq!(mode(&home), 0o700, "an existing one is narrowed");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
