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
use crate::client::quirks::{Adaptations, Quirks};
use crate::core::config::{Config, ToolChoice};
use crate::core::consent::Consent;
use crate::core::dispatch;
use crate::core::event::Error;
use crate::core::prompt::AgentKind;
use crate::tools::{SubAgent, ToolContext};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

impl Extras {
    /// `CORECODER_TOOL_CHOICE` naming a tool the session does not offer (built in for `kind`,
    /// or from an MCP server, once started) is a usage error naming those it does: every
    /// request would be refused, or answered with a call to a tool that is not there.
    pub(crate) fn check_tool_choice(&self, config: &Config, kind: AgentKind) -> Result<(), Error> {
        let tools = [dispatch::schemas(kind), self.tool_schemas()].concat();
        let names: Vec<&str> = (tools.iter())
            .filter_map(|t| t["function"]["name"].as_str())
            .collect();
        match &config.tool_choice {
            Some(ToolChoice::Tool(name)) if !names.contains(&name.as_str()) => {
                Err(Error::Usage(format!(
                    "CORECODER_TOOL_CHOICE: no tool is called '{name}'; the tools are {}",
                    names.join(", ")
                )))
            }
            _ => Ok(()),
        }
    }

    /// The client's lessons (`client/quirks.rs`, shared), so each one learnt goes in the session
    /// log; and those a resumed session's log holds (`session::Loaded::taught`), taught again.
    pub(crate) fn set_quirks(&mut self, quirks: Quirks, resumed: Option<(String, Adaptations)>) {
        resumed.into_iter().for_each(|taught| quirks.teach(taught));
        self.taught = quirks.taught().1;
        self.quirks = quirks;
    }

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
