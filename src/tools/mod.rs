//! The built-in tools, one file each: the leaves of a turn, which a reader may skim. The
//! dispatch `match` that calls them, and the pool that runs one reply's calls in parallel
//! through it, are `core/dispatch.rs`; what they share is in `support/`.
//! Here: `ToolContext`, what every tool is handed.

pub mod agent;
pub mod bash;
pub mod edit_file;
pub mod glob;
pub mod grep;
pub mod preview;
pub mod read_file;
pub mod support;
#[cfg(test)]
pub mod test_support;
pub mod todo_write;
pub mod write_file;

use crate::client::llm::Llm;
use crate::core::consent::Consent;
use crate::extras::Extras;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Everything a tool may look at while it runs. Cloned into each pool job.
#[derive(Clone)]
pub struct ToolContext {
    /// The session's tracked working directory when this call started.
    pub cwd: PathBuf,
    /// Only the `agent` tool uses these: a sub-agent shares the connection, usage and consent.
    pub llm: Arc<Llm>,
    pub consent: Consent,
    /// Set by Ctrl+C; long-running tools poll it and stop early.
    pub cancel: Arc<AtomicBool>,
    /// The session-wide extras (`Extras::for_sub_agent`): MCP servers, the bash sandbox, the
    /// reading threads' count, and what a sub-agent inherits (hooks, instructions).
    pub extras: Arc<Extras>,
}
