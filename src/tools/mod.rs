//! The built-in tools, one file each: the leaves of a turn, which a reader may skim. The
//! dispatch `match` that calls them, and the pool that runs one reply's calls in parallel
//! through it, are `core/dispatch.rs`; what the model is told about each is `schemas.rs`; what
//! they share is in `support/`.
//! Here: `ToolContext`, what every tool is handed.

pub(crate) mod agent;
pub(crate) mod bash;
pub(crate) mod edit_file;
pub(crate) mod glob;
pub(crate) mod grep;
pub(crate) mod preview;
pub(crate) mod read_file;
pub(crate) mod schemas;
pub mod support;
#[cfg(test)]
pub(crate) mod test_support;
pub(crate) mod todo_write;
pub(crate) mod write_file;

use crate::client::llm::Llm;
use crate::core::consent::Consent;
use crate::extras::Extras;
use crate::extras::consent_rules::Rules;
use crate::extras::mcp::Servers;
use crate::extras::sandbox::ShellSafety;
use crate::tools::support::seen::Seen;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

/// What a tool may look at while it runs, and nothing more: no hooks, no session log, no
/// account. Built by `Extras::tool_context`; cloned into each pool job.
#[derive(Clone)]
pub struct ToolContext {
    /// The session's tracked working directory when this call started.
    pub(crate) cwd: PathBuf,
    /// Set by Ctrl+C; long-running tools poll it and stop early.
    pub(crate) cancel: Arc<AtomicBool>,
    /// The shell policy: bash's sandbox and environment filter, where files may be written,
    /// whether the project's git may run.
    pub(crate) shell: ShellSafety,
    /// The read boundary glob and grep keep to (the permission rules' denied paths).
    pub(crate) rules: Arc<Rules>,
    /// Reading threads of read_file and grep still running (`tools/support/bounded.rs`).
    pub(crate) reads_running: Arc<AtomicUsize>,
    /// What read_file has shown this agent's model, for the unchanged-file note.
    pub(crate) reads: Seen,
    /// Where an `mcp__SERVER__TOOL` call goes (none by default).
    pub(crate) mcp: Arc<Servers>,
    /// What the `agent` tool needs, and only it.
    pub(crate) sub_agent: Arc<SubAgent>,
}

/// What a sub-agent starts from: the connection (and so the usage), the consent it narrows,
/// and the session-wide extras (`Extras::for_sub_agent`).
pub(crate) struct SubAgent {
    pub(crate) llm: Arc<Llm>,
    pub(crate) consent: Consent,
    pub(crate) extras: Extras,
}
