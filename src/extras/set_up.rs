//! `Extras` between turns: what the binary (`app/setup.rs`, the REPL's commands) and embedding
//! programs set and read. The fields stay private to `extras/`, so the loop reaches a feature
//! only through a step's method (`extras/mod.rs`) and a tool only through these readers; nothing
//! here runs during a turn's steps but `tool_context`, what a tool call is handed.

use super::Extras;
use super::account::Account;
use super::checkpoint::Checkpoints;
use super::consent_rules::Rules;
use super::dialect::Dialects;
use super::gate::Gate;
use super::hooks::Hooks;
use super::instructions::Instructions;
use super::mcp::Servers;
use super::sandbox::ShellSafety;
use super::session::SessionLog;
use crate::client::llm::Llm;
use crate::core::consent::Consent;
use crate::tools::{SubAgent, ToolContext};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

impl Extras {
    /// Prices, the ledger, fallbacks and the trace: what the client reports to.
    pub fn account(&self) -> &Account {
        &self.account
    }

    pub(crate) fn set_account(&mut self, account: Account) {
        self.account = account;
    }

    /// Requests and streams in a dialect other than chat completions (`Config::dialect`).
    pub(crate) fn dialect(&self) -> &Dialects {
        &self.dialect
    }

    pub(crate) fn shell_mut(&mut self) -> &mut ShellSafety {
        &mut self.shell
    }

    /// The permission rules and the saved "always" answers; also the read boundary.
    pub(crate) fn rules(&self) -> &Arc<Rules> {
        &self.rules
    }

    /// The rules to change (shared with sub-agents until changed: copied on write).
    pub(crate) fn rules_mut(&mut self) -> &mut Rules {
        Arc::make_mut(&mut self.rules)
    }

    /// What a bash command's arguments decide before consent (the danger table).
    pub(crate) fn gate(&self) -> &Gate {
        &self.gate
    }

    pub(crate) fn gate_mut(&mut self) -> &mut Gate {
        &mut self.gate
    }

    /// PreToolUse, PostToolUse, UserPromptSubmit, Stop and SessionStart hooks (none by default).
    pub(crate) fn hooks(&self) -> &Hooks {
        &self.hooks
    }

    pub fn set_hooks(&mut self, hooks: Hooks) {
        self.hooks = Arc::new(hooks);
    }

    /// MCP servers (none by default); their tools are offered next to ours.
    pub(crate) fn mcp(&self) -> &Servers {
        &self.mcp
    }

    pub fn set_mcp(&mut self, servers: Servers) {
        self.mcp = Arc::new(servers);
    }

    /// The project's `AGENTS.md` files for the system prompt and the notes.
    pub(crate) fn set_instructions(&mut self, instructions: Instructions) {
        self.instructions = Some(instructions);
    }

    /// What `/undo` can restore; `None` when nothing is tracked (sub-agents, the default).
    pub(crate) fn checkpoints_mut(&mut self) -> Option<&mut Checkpoints> {
        self.checkpoints.as_mut()
    }

    pub(crate) fn set_checkpoints(&mut self, checkpoints: Checkpoints) {
        self.checkpoints = Some(checkpoints);
    }

    /// Where the conversation is written as it happens; `None` for sub-agents and by default.
    pub(crate) fn log_mut(&mut self) -> Option<&mut SessionLog> {
        self.log.as_mut()
    }

    pub(crate) fn log(&self) -> Option<&SessionLog> {
        self.log.as_ref()
    }

    pub(crate) fn set_log(&mut self, log: SessionLog) {
        self.log = Some(log);
    }

    /// What a tool call sees (`tools/mod.rs`): the shell policy, the read boundary, the reading
    /// threads, MCP, and what the `agent` tool needs for a sub-agent.
    pub fn tool_context(
        &self,
        cwd: &Path,
        cancel: &Arc<AtomicBool>,
        sub: (&Arc<Llm>, &Consent),
    ) -> ToolContext {
        let (llm, consent, extras) = (sub.0.clone(), sub.1.clone(), self.for_sub_agent());
        ToolContext {
            cwd: cwd.to_path_buf(),
            cancel: cancel.clone(),
            shell: self.shell.clone(),
            rules: self.rules.clone(),
            reads_running: self.reads_running.clone(),
            reads: self.reads.clone(),
            mcp: self.mcp.clone(),
            sub_agent: Arc::new(SubAgent {
                llm,
                consent,
                extras,
            }),
        }
    }

    /// History rewrites (compaction, repair, `/clear`): each breaks the provider's prompt cache.
    pub(crate) fn rewrites(&self) -> u32 {
        self.rewrites
    }
}
