//! Setting an agent up and looking inside it: what the binary, the REPL and embedding programs
//! call between turns. Nothing here runs during a turn; the loop itself is in `agent.rs`.

use super::Agent;
use crate::core::consent::Consent;
use crate::core::llm::Llm;
use crate::core::message::Message;
use crate::extras::Extras;
use crate::extras::checkpoint::Checkpoints;
use crate::extras::hooks::{HookEvent, Hooks};
use crate::extras::instructions::Instructions;
use crate::extras::mcp::Servers;
use crate::extras::sandbox::ShellSafety;
use crate::extras::session::SessionLog;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Setting an agent up and looking inside it: for the binary, the REPL and embedding programs.
impl Agent {
    pub fn set_max_rounds(&mut self, rounds: u32) {
        self.max_rounds = rounds;
    }

    /// Set this (e.g. from a Ctrl+C handler) to stop the current turn at the next safe point.
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }

    pub fn history(&self) -> &[Message] {
        &self.history
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub fn llm(&self) -> &Llm {
        &self.llm
    }

    pub fn extras(&self) -> &Extras {
        &self.extras
    }

    pub fn extras_mut(&mut self) -> &mut Extras {
        &mut self.extras
    }

    /// Run these hooks from now on (sub-agents share them).
    pub fn set_hooks(&mut self, hooks: Arc<Hooks>) {
        self.hooks = hooks;
    }

    /// Offer these MCP servers' tools from now on (sub-agents get them too).
    pub fn set_mcp(&mut self, servers: Arc<Servers>) {
        self.mcp = servers;
    }

    /// Run bash commands under this sandbox and environment filter (sub-agents too).
    pub fn set_shell_safety(&mut self, shell: ShellSafety) {
        self.shell = shell;
    }

    pub fn mcp(&self) -> &Servers {
        &self.mcp
    }

    /// Rounds (requests with their tool batches) the last task took.
    pub fn rounds_used(&self) -> u32 {
        self.rounds
    }

    pub fn hooks(&self) -> &Hooks {
        &self.hooks
    }

    /// Tell the SessionStart hooks; what goes wrong comes back as warnings.
    pub fn start_hooks(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        self.hooks
            .notify(&self.hook_context(), HookEvent::SessionStart, &mut warnings);
        warnings
    }

    /// Put the project's instructions in the system prompt (re-read when they change).
    pub fn set_instructions(&mut self, instructions: Instructions) {
        self.instructions = Some(instructions);
    }

    /// Track file changes for `/undo` and `/diff` from now on.
    pub fn attach_checkpoints(&mut self, checkpoints: Checkpoints) {
        self.checkpoints = Some(checkpoints);
    }

    pub fn checkpoints_mut(&mut self) -> Option<&mut Checkpoints> {
        self.checkpoints.as_mut()
    }

    pub fn consent_mut(&mut self) -> &mut Consent {
        &mut self.consent
    }

    /// Talk to another model from the next request on; the usage totals carry over.
    pub fn switch_model(&mut self, model: &str) {
        self.llm = Arc::new(self.llm.with_model(model));
        self.extras.account.forget_fallback();
        // Recorded in the log, so `corecoder -r` resumes on the model the session ended with.
        if let Some(log) = &mut self.log
            && let Err(e) = log.record_model(model)
        {
            self.log_failure = Some(format!("the session log stopped: {e}"));
            self.log = None;
        }
    }

    /// Tell the model, in the conversation, of something done behind its back (`/undo`): the
    /// next request would otherwise still show the change it made as standing.
    pub fn tell_model(&mut self, note: &str) {
        self.push(Message::user(&format!("[note from the session] {note}")));
    }

    /// Forget the conversation and the todo list (the working directory stays).
    pub fn reset(&mut self) {
        self.history.truncate(1);
        self.todos.clear();
        self.log_whole_history();
    }

    /// Write every message to `log` from now on.
    pub fn attach_log(&mut self, log: SessionLog) {
        self.log = Some(log);
    }

    pub fn log_mut(&mut self) -> Option<&mut SessionLog> {
        self.log.as_mut()
    }

    /// Continue an earlier conversation (already repaired by `session::load`).
    pub fn resume(&mut self, messages: Vec<Message>) {
        self.history.truncate(1);
        self.history.extend(messages);
    }
}
