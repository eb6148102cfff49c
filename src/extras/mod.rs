//! Every optional feature: hooks, MCP servers, the sandbox, sessions, checkpoints, the trace,
//! project instructions, trust, the other dialects, each off (a no-op) unless the binary or an
//! embedding program turns it on; and, on by default (`Extras` says exactly), the danger gate,
//! the secret filter, early start of read-only calls, the built-in prices and the estimate
//! calibrated on the provider's counts. The seam: the value the loop holds, one method per step
//! of a turn, in turn order; it never runs the loop (over 300 lines so that every step is in one
//! file).

pub(crate) mod account;
pub(crate) mod anthropic;
pub(crate) mod calibration;
pub(crate) mod checkpoint;
pub(crate) mod consent_rules;
pub(crate) mod cost;
pub mod dialect;
pub(crate) mod early;
pub(crate) mod gate;
pub(crate) mod git_files;
pub mod hooks;
pub(crate) mod hooks_config;
pub(crate) mod instructions;
pub mod mcp;
pub mod mcp_config;
pub(crate) mod mcp_protocol;
pub mod mcp_wire;
pub(crate) mod permissions;
pub(crate) mod reads;
pub(crate) mod responses;
pub(crate) mod sandbox;
pub(crate) mod secrets;
pub mod session;
mod set_up;
pub(crate) mod sha256;
pub(crate) mod trace;
pub(crate) mod trust;

use crate::client::quirks::{Adaptations, Quirks};
use crate::core::consent::{Consent, LoopGuard, Verdict};
use crate::core::event::Event;
use crate::core::message::{Message, Outcome, Reply, ToolCall};
use crate::tools::support::seen::Seen;
use checkpoint::Checkpoints;
use crossbeam_channel::Receiver;
use hooks::{HookContext, HookEvent, Hooks};
use instructions::Instructions;
use mcp::Servers;
use sandbox::ShellSafety;
use serde_json::{Value, json};
use session::SessionLog;
use std::path::Path;
use std::sync::{Arc, atomic::AtomicUsize};

/// The one seam between the core and every optional feature: the loop holds one `Extras` and
/// calls one method per step of a turn, each a no-op when its feature is off; the client is
/// handed the same value to report what it sent, spent and read. Set up between turns through
/// the public `Agent::extras`.
///
/// `Extras::default()` has off: hooks, MCP, the sandbox, `AGENTS.md`, the session log, `/undo`'s
/// checkpoints, the trace, fallback models, saved "always" answers and permission rules, and
/// other dialects than chat completions. It has on: the danger table (a
/// destructive bash command is refused even under "allow all" unless allowed by name), the
/// secret filter (bash does not see variables that look like secrets), early start of
/// read-only calls while a reply streams, the built-in price table (spending is counted), the
/// estimate calibrated on the provider's counts, and the note for a file read again unchanged. The binary (`app/setup.rs`) turns on
/// besides: prices from `~/.corecoder/pricing.json`, the trace (`--trace`), the permission
/// rules and saved answers, `--allow-destructive`, the sandbox (`--sandbox`) and the variables
/// let through (`CORECODER_ENV_ALLOW`), `AGENTS.md`, hooks, MCP servers, the session log and
/// checkpoints.
#[derive(Default)]
pub struct Extras {
    /// Prices, the ledger, fallbacks and the trace: what the client reports to.
    account: account::Account,
    /// Requests and streams in a dialect other than chat completions (`Config::dialect`).
    dialect: dialect::Dialects,
    /// PreToolUse, PostToolUse, UserPromptSubmit, Stop and SessionStart hooks (none by default).
    hooks: Arc<Hooks>,
    /// MCP servers (none by default); their tools are offered next to ours.
    mcp: Arc<Servers>,
    /// The bash tool's sandbox and environment filter (no sandbox by default).
    shell: ShellSafety,
    /// The project's `AGENTS.md` files for the system prompt; `None` leaves them out.
    instructions: Option<Instructions>,
    /// Reading threads of read_file and grep still running (see `tools/support/bounded.rs`).
    reads_running: Arc<AtomicUsize>,
    /// What read_file has shown this agent's model (`tools/support/seen.rs`; its own per agent).
    reads: Seen,
    /// Read-only calls started while the last reply streamed (the main agent only).
    early: early::Early,
    /// What a bash command's arguments decide before consent (the danger table).
    gate: gate::Gate,
    /// What `/undo` can restore; `None` when nothing is tracked (sub-agents, the library default).
    checkpoints: Option<Checkpoints>,
    /// Where the conversation is written as it happens; `None` for sub-agents and by default.
    log: Option<SessionLog>,
    /// The provider's last measured prompt size, anchoring the estimate (per agent).
    calibration: calibration::Calibration,
    /// The permission rules and the saved "always" answers (`consent_rules.rs`).
    rules: Arc<consent_rules::Rules>,
    /// Set when the log could not be written; shown at the start of the next round.
    log_failure: Option<String>,
    /// History rewrites (compaction, repair, `/clear`): each breaks the provider's prompt cache.
    rewrites: u32,
    /// The `checkpoints` height before the running batch, to drop the steps that changed nothing.
    mark: Option<usize>,
    /// What the provider taught (the client's `client/quirks.rs`, shared), and as last logged.
    quirks: Quirks,
    taught: Adaptations,
}

/// Not `Clone`: a copy that silently dropped the log, the checkpoints and the calibration would
/// look whole. What a sub-agent gets is `for_sub_agent`, by name.
impl Extras {
    /// What a tool call and a sub-agent see: the session-wide features are shared (hooks, MCP,
    /// sandbox, instructions, the account, the reading threads, the rules, the danger gate);
    /// what belongs to one agent starts empty: its session log (none), its `/undo` checkpoints
    /// (none), the calls it started early, its calibration, its rewrites count, the reads its
    /// model was shown.
    pub(crate) fn for_sub_agent(&self) -> Extras {
        Extras {
            account: self.account.clone(),
            hooks: self.hooks.clone(),
            mcp: self.mcp.clone(),
            shell: self.shell.clone(),
            instructions: self.instructions.clone(),
            reads_running: self.reads_running.clone(),
            gate: self.gate.clone(),
            rules: self.rules.clone(),
            ..Extras::default()
        }
    }
}

impl Extras {
    /// Between turns: tell the SessionStart hooks; what goes wrong comes back as warnings.
    pub(crate) fn session_started(&self, cwd: &Path) -> Vec<String> {
        let (mut warnings, context) = (Vec::new(), self.hook_context(cwd));
        (self.hooks).notify(&context, HookEvent::SessionStart, &mut warnings);
        warnings
    }

    /// A task arrived: a UserPromptSubmit hook may refuse it (`Err`, the hook's reason) before
    /// it joins the history.
    pub(crate) fn task_submitted(
        &self,
        cwd: &Path,
        task: &str,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), String> {
        let mut warnings = Vec::new();
        let verdict = (self.hooks).user_prompt_submit(&self.hook_context(cwd), task, &mut warnings);
        warnings.iter().for_each(|w| on_event(Event::Notice(w)));
        verdict
    }

    /// A message joined the history: the log gets it at the same moment, so a crash loses at
    /// most the line being written.
    pub(crate) fn added(&mut self, message: &Message) {
        self.reads
            .joined(message.content.as_deref().unwrap_or_default());
        let written = self.log.as_mut().map(|log| log.append(message));
        self.log_written(written);
    }

    /// The history was rewritten (repair, compaction, reset): the log records it whole.
    pub(crate) fn rewritten(&mut self, history: &[Message]) {
        self.rewrites += 1;
        self.dialect.forget();
        self.reads.forget();
        let written = self.log.as_mut().map(|log| log.replace(history));
        self.log_written(written);
    }

    /// Another conversation took the history's place (`Agent::resume`): no read shown holds.
    pub(crate) fn resumed(&mut self) {
        self.reads.forget();
    }

    /// The model changed: recorded in the log, so `corecoder -r` resumes on the model the
    /// session ended with.
    pub(crate) fn model_switched(&mut self, model: &str) {
        self.account.forget_fallback();
        let written = self.log.as_mut().map(|log| log.record_model(model));
        self.log_written(written);
    }

    /// A log that cannot be written is dropped (not retried every message) and reported once.
    fn log_written(&mut self, written: Option<std::io::Result<()>>) {
        if let Some(Err(e)) = written {
            self.log_failure = Some(format!("the session log stopped: {e}"));
            self.log = None;
        }
    }

    /// A round starts: what went wrong since the last one (the log stopped) is told now.
    pub(crate) fn round_started(&mut self, on_event: &mut dyn FnMut(Event)) {
        if let Some(failure) = self.log_failure.take() {
            on_event(Event::Notice(&failure));
        }
    }

    /// The history was repaired before a request (`changed` tool results added or dropped;
    /// none is a no-op): the log records it whole, and the user and the trace hear of it, so a
    /// loop that drops results cannot hide behind the repair.
    pub(crate) fn repaired(
        &mut self,
        history: &[Message],
        changed: usize,
        on_event: &mut dyn FnMut(Event),
    ) {
        if changed == 0 {
            return;
        }
        self.rewritten(history);
        if let Some(trace) = self.account.trace() {
            trace.record("repair", json!({"changed": changed, "at": "request"}));
        }
        on_event(Event::Notice(&repair_notice(changed, "before a request")));
    }

    /// The project's instructions as they stand in `cwd`, for the system prompt and the notes
    /// (`core/notes.rs`); empty when the feature is off.
    pub(crate) fn instructions(&mut self, cwd: &Path) -> String {
        instructions::text(&mut self.instructions, cwd)
    }

    /// Before a request: the prompt's size, anchored on what the provider last measured.
    pub(crate) fn prompt_tokens(&self, history: &[Message]) -> usize {
        self.calibration.estimate(history)
    }

    /// The history was compacted (a snip keeps its length): the anchor no longer holds.
    pub(crate) fn history_compacted(&mut self) {
        self.calibration.reset();
    }

    /// The provider answered "too long": the prompt's size by its own count where it gave one.
    pub(crate) fn overflowed(
        &mut self,
        message: &str,
        history: &[Message],
        windows: (usize, usize),
        on_event: &mut dyn FnMut(Event),
    ) -> usize {
        let said = crate::tools::support::provider_errors::overflow_numbers(message);
        calibration::overflowed(&mut self.calibration, said, windows, history, on_event)
    }

    /// A reply to `history[..sent]` arrived: its usage anchors the estimate, and the caller is
    /// shown the session's totals so far.
    pub(crate) fn replied(&mut self, sent: usize, reply: &Reply, on_event: &mut dyn FnMut(Event)) {
        // What the provider taught goes in the log when it changes, for a resume to start with.
        let (model, taught) = self.quirks.taught();
        if std::mem::replace(&mut self.taught, taught) != taught {
            let written = (self.log.as_mut()).map(|log| log.record_taught(&model, taught));
            self.log_written(written);
        }
        if let Some(usage) = cost::believed(reply.usage.as_ref(), on_event) {
            self.calibration.calibrate(sent, usage.prompt_tokens);
        }
        on_event(Event::Replied {
            usage: &self.account.usage(),
        });
    }

    /// A reply is about to stream: early start judges ahead from the loop's guard as it stands,
    /// and the reads from `cwd`; the loop holds it while the reply streams and puts it back.
    pub(crate) fn reply_starting(&mut self, guard: &LoopGuard, cwd: &Path) -> early::Early {
        let (rules, shell) = (&self.rules, &self.shell);
        self.early.reply_starting(guard, rules, (shell, cwd));
        std::mem::take(&mut self.early)
    }

    /// The reply streamed: the calls it started are held until the batch collects them.
    pub(crate) fn reply_done(&mut self, early: early::Early) {
        self.early = early;
    }

    /// The permission rules, the call's arguments, then consent (`consent_rules.rs`, `gate.rs`,
    /// `reads.rs`).
    pub(crate) fn verdict_for_call(
        &self,
        consent: &Consent,
        call: &ToolCall,
        cwd: &Path,
    ) -> Verdict {
        consent_rules::verdict(&self.rules, (&self.gate, &self.shell), consent, call, cwd)
    }

    /// What an "always" answer to `call` would allow, for the question (`consent_rules/always.rs`).
    pub(crate) fn always_offer(&self, call: &ToolCall) -> String {
        consent_rules::always::offer(&self.rules, call)
    }

    /// The MCP tools offered next to ours.
    pub(crate) fn tool_schemas(&self) -> Vec<Value> {
        self.mcp.schemas()
    }

    /// Whether read-only calls may start while the reply streams: not when a PreToolUse hook
    /// must see every call before it runs.
    pub(crate) fn may_start_early(&self) -> bool {
        self.hooks.count() == 0
    }

    /// One call is about to be settled: `Some` is the refusal the model reads when a
    /// PreToolUse hook vetoes it.
    pub(crate) fn before_call(
        &self,
        call: &ToolCall,
        cwd: &Path,
        on_event: &mut dyn FnMut(Event),
    ) -> Option<Outcome> {
        (self.hooks).before_call(&self.hook_context(cwd), call, on_event)
    }

    /// The user answered "always": what it allows is saved and holds from now on (`consent_rules/always.rs`).
    pub(crate) fn allowed_always(
        &mut self,
        to: &mut Consent,
        call: &ToolCall,
        on: &mut dyn FnMut(Event),
    ) {
        consent_rules::always::allowed_always(Arc::make_mut(&mut self.rules), to, call, on);
    }

    /// The allowed calls are about to run: record what each may change, for `/undo`. A file
    /// that cannot be recorded still gets edited: the user is told this change cannot be undone.
    pub(crate) fn before_calls(
        &mut self,
        allowed: &[&ToolCall],
        cwd: &Path,
        on_event: &mut dyn FnMut(Event),
    ) {
        let Some(checkpoints) = self.checkpoints.as_mut() else {
            return;
        };
        self.mark = Some(checkpoints.len());
        for call in allowed {
            if let Err(e) = checkpoints.record_call(&call.name, &hooks::input(call), cwd) {
                let notice = format!("/undo will not cover this {}: {e}", call.name);
                on_event(Event::Notice(&notice));
            }
        }
    }

    /// The allowed calls are about to run: for each, where its result arrives if early start
    /// already started the same call while the reply streamed (`early.rs`); `None` runs now.
    pub(crate) fn started_early(
        &mut self,
        allowed: &[&ToolCall],
    ) -> Vec<Option<Receiver<(usize, Outcome)>>> {
        allowed.iter().map(|call| self.early.claim(call)).collect()
    }

    /// The allowed calls ran: a failed edit changed nothing, so it must not become an /undo step.
    pub(crate) fn calls_ran(&mut self) {
        if let (Some(checkpoints), Some(mark)) = (self.checkpoints.as_mut(), self.mark.take()) {
            let _ = checkpoints.forget_unchanged(mark);
        }
    }

    /// One call has its result: the PostToolUse hooks see it, and what they print is added
    /// to the result for the model.
    pub(crate) fn after_call(
        &self,
        call: &ToolCall,
        ran: Outcome,
        cwd: &Path,
        on_event: &mut dyn FnMut(Event),
    ) -> Outcome {
        (self.hooks).after_call(&self.hook_context(cwd), call, ran, on_event)
    }

    /// The batch is answered: every call and its result go to the trace.
    pub(crate) fn batch_done(&self, calls: &[ToolCall], outcomes: &[Outcome]) {
        if let Some(trace) = self.account.trace() {
            trace.record_calls(calls, outcomes);
        }
    }

    /// The task ended (however it ended): tell the Stop hooks.
    pub(crate) fn task_ended(&self, cwd: &Path, on_event: &mut dyn FnMut(Event)) {
        let mut warnings = Vec::new();
        (self.hooks).notify(&self.hook_context(cwd), HookEvent::Stop, &mut warnings);
        warnings.iter().for_each(|w| on_event(Event::Notice(w)));
    }

    fn hook_context<'a>(&'a self, cwd: &'a Path) -> HookContext<'a> {
        let session_id = self.log.as_ref().map_or("", |log| log.id());
        HookContext { session_id, cwd }
    }
}

/// What the user (and the reliability tests, which count these lines) see after a repair.
pub(crate) fn repair_notice(changed: usize, when: &str) -> String {
    format!("history repaired {when}: {changed} tool messages added as [interrupted] or dropped")
}
