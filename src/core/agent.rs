//! The agent loop: build prompt → stream → run tools → append results → repeat.
//!
//! `Agent::run_asking` is the whole of it, in one function you can read top to bottom and
//! step through; the steps it calls follow it in this file, in the order it calls them. The agent owns the history (nothing else changes it), the tracked working
//! directory and the todo list. It does not talk HTTP (that is `llm.rs`) and does not know
//! how any tool works (that is `tools/`).

mod calls;
mod history;
mod settings;

use crate::core::consent::{Answer, Consent};
use crate::core::context::{self, Estimator};
use crate::core::dispatch::{self, Effect, ToolContext, ToolSet};
use crate::core::error::Error;
use crate::core::event::Event;
use crate::core::guard::LoopGuard;
use crate::core::llm::Llm;
use crate::core::message::Reply;
use crate::core::message::{self, Message};
use crate::core::pool::{EarlyCall, Pool};
use crate::core::prompt::{self, Situation};
use crate::extras::Extras;
use crate::extras::checkpoint::Checkpoints;
use crate::extras::hooks::{HookEvent, Hooks};
use crate::extras::instructions::Instructions;
use crate::extras::mcp::Servers;
use crate::extras::sandbox::ShellSafety;
use crate::extras::session::SessionLog;
use crate::tools::todo_write::Todo;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How a task ended, when it did not end in an `Error`.
#[derive(Debug, Clone, PartialEq)]
pub enum Finish {
    Answer(String),
    /// The answer as far as it came before the provider's output limit (`max_tokens`) cut it.
    CutOff(String),
    RoundCap,
}

pub const ROUND_CAP_MESSAGE: &str = "(reached maximum tool-call rounds)";
pub const CUT_OFF_MESSAGE: &str =
    "(the answer was cut off at the output token limit; raise CORECODER_MAX_TOKENS)";

pub struct Agent {
    llm: Arc<Llm>,
    /// Every optional feature, behind the one seam (the client reports to `extras.account`).
    extras: Extras,
    /// `history[0]` is the system prompt, rebuilt every round.
    history: Vec<Message>,
    cwd: PathBuf,
    todos: Vec<Todo>,
    consent: Consent,
    tool_set: ToolSet,
    max_rounds: u32,
    cancel: Arc<AtomicBool>,
    /// Started on the first batch of several calls; sub-agents run their calls inline.
    pool: Option<Pool>,
    /// What `/undo` can restore; `None` when nothing is tracked (sub-agents, the library default).
    checkpoints: Option<Checkpoints>,
    /// PreToolUse, PostToolUse, UserPromptSubmit and Stop hooks (none by default).
    hooks: Arc<Hooks>,
    /// MCP servers (none by default); their tools are offered next to ours.
    mcp: Arc<Servers>,
    /// The bash tool's sandbox and environment filter (no sandbox by default).
    shell: ShellSafety,
    /// Reading threads of read_file and grep still running (see `tools::bounded`).
    reads_running: Arc<AtomicUsize>,
    /// The project's `AGENTS.md` files; `None` leaves them out (library default).
    instructions: Option<Instructions>,
    /// Read-only calls started while the last reply streamed; the next batch uses their results.
    early: Vec<EarlyCall>,
    /// Rounds the last task took (for `--output-format json`).
    rounds: u32,
    /// Counts identical calls in a row: the third is refused, the fifth ends the run.
    guard: LoopGuard,
    /// Calibrated by the provider's real prompt sizes; decides when to compact.
    estimator: Estimator,
    /// Where the conversation is written as it happens; `None` for sub-agents and by default.
    log: Option<SessionLog>,
    /// Set when the log could not be written; shown at the start of the next round.
    log_failure: Option<String>,
}

impl Agent {
    pub fn new(llm: Arc<Llm>, cwd: PathBuf, consent: Consent) -> Agent {
        Agent {
            llm,
            extras: Extras::default(),
            history: vec![Message::system("")],
            cwd,
            todos: Vec::new(),
            consent,
            tool_set: ToolSet::All,
            max_rounds: 50,
            cancel: Arc::new(AtomicBool::new(false)),
            pool: None,
            checkpoints: None,
            hooks: Arc::new(Hooks::default()),
            mcp: Arc::new(Servers::none()),
            shell: ShellSafety::default(),
            reads_running: Default::default(),
            instructions: None,
            early: Vec::new(),
            rounds: 0,
            guard: LoopGuard::default(),
            estimator: Estimator::new(),
            log: None,
            log_failure: None,
        }
    }

    /// A sub-agent for the `agent` tool: fresh history, no `agent` tool, calls run inline.
    pub fn sub_agent(ctx: &ToolContext, max_rounds: u32) -> Agent {
        let consent = ctx.consent.for_sub_agent();
        let mut agent = Agent::new(ctx.llm.clone(), ctx.cwd.clone(), consent);
        agent.instructions = ctx.instructions.clone();
        agent.hooks = ctx.hooks.clone();
        agent.mcp = ctx.mcp.clone();
        agent.shell = ctx.shell.clone();
        agent.tool_set = ToolSet::WithoutAgent;
        agent.max_rounds = max_rounds;
        agent.cancel = ctx.cancel.clone();
        agent.reads_running = ctx.reads_running.clone();
        agent.extras.account = ctx.account.clone();
        agent
    }

    /// Run a task where no one can be asked: calls that would need consent are refused.
    pub fn run(&mut self, task: &str, on_event: &mut dyn FnMut(Event)) -> Result<Finish, Error> {
        self.run_asking(task, on_event, &mut |_, _| Answer::Deny)
    }

    /// Run one user task to its end: an answer, the round cap, or an error. `ask(name,
    /// summary)` is called, on this thread, for each call the consent rules leave to the user.
    pub fn run_asking(
        &mut self,
        task: &str,
        on_event: &mut dyn FnMut(Event),
        ask: &mut dyn FnMut(&str, &str) -> Answer,
    ) -> Result<Finish, Error> {
        self.cancel.store(false, Ordering::Relaxed);
        // A UserPromptSubmit hook may refuse the task before it joins the history.
        let mut warnings = Vec::new();
        let verdict = self
            .hooks
            .user_prompt_submit(&self.hook_context(), task, &mut warnings);
        warnings.iter().for_each(|w| on_event(Event::Notice(w)));
        verdict.map_err(Error::Refused)?;
        self.push(Message::user(task));
        let finish = self.run_rounds(on_event, ask);
        let mut warnings = Vec::new();
        self.hooks
            .notify(&self.hook_context(), HookEvent::Stop, &mut warnings);
        warnings.iter().for_each(|w| on_event(Event::Notice(w)));
        finish
    }

    /// The rounds of one task, until an answer, the round cap or an error.
    fn run_rounds(
        &mut self,
        on_event: &mut dyn FnMut(Event),
        ask: &mut dyn FnMut(&str, &str) -> Answer,
    ) -> Result<Finish, Error> {
        let mut tool_schemas = dispatch::schemas(self.tool_set);
        tool_schemas.extend(self.mcp.schemas());
        let tool_names: Vec<String> = (tool_schemas.iter())
            .filter_map(|s| s["function"]["name"].as_str().map(String::from))
            .collect();
        for round in 1..=self.max_rounds {
            // 1. A fresh system prompt: the cwd, todos, plan mode or AGENTS.md may have changed.
            self.history[0] = self.system_prompt(&tool_names);
            // 2. Never send a history the provider would reject (a call left unanswered).
            let repairs = message::repair_tool_pairs(&mut self.history);
            if repairs > 0 {
                self.log_whole_history();
                self.report_repairs(repairs, on_event);
            }
            if let Some(failure) = self.log_failure.take() {
                on_event(Event::Notice(&failure));
            }

            // 3. Keep the prompt inside the context window: snip, summarise or collapse.
            let tokens = self.estimator.estimate(&self.history);
            if let Some(tier) = context::tier_for(tokens, self.max_context()) {
                self.compact(tier, on_event);
            }

            // 4. Stream the reply; text and reasoning reach the caller as they arrive.
            on_event(Event::Requesting { round });
            self.rounds = round;
            let reply = self.ask_model(&tool_schemas, on_event)?;
            on_event(Event::Replied {
                usage: &self.extras.account.usage(),
            });

            // 5. No tool calls: this is the answer (unless there is none, or it was cut off).
            let cut_off = reply.finish_reason.as_deref() == Some("length");
            if reply.tool_calls.is_empty() {
                if reply.text.trim().is_empty() && !cut_off {
                    return Err(Error::Api("the model returned an empty reply".to_string()));
                }
                self.push(Message::assistant(&reply.text));
                return Ok(match cut_off {
                    true => Finish::CutOff(reply.text),
                    false => Finish::Answer(reply.text),
                });
            }

            // 6. Record the calls, run them, and answer each one, in call order.
            let assistant = Message::from_reply(&reply);
            let calls = assistant.tool_calls.clone();
            self.push(assistant);
            let guarded = match self.guard_calls(&calls, cut_off, on_event) {
                Ok(guarded) => guarded,
                Err(why) => {
                    // Still answer every call, so the history stays valid for a later turn.
                    let stopped = "[not run: the run was stopped for repeating this call]";
                    calls
                        .iter()
                        .for_each(|call| self.push(Message::tool_result(&call.id, stopped)));
                    return Err(Error::Looping(why));
                }
            };
            let outcomes = self.run_tools(&calls, guarded, on_event, ask);
            for (call, outcome) in calls.iter().zip(outcomes) {
                self.push(Message::tool_result(&call.id, &outcome.text));
                self.apply(outcome.effect);
            }
            if self.cancel.load(Ordering::Relaxed) {
                return Err(Error::Interrupted);
            }
        }
        Ok(Finish::RoundCap)
    }

    fn system_prompt(&mut self, tool_names: &[String]) -> Message {
        let instructions = match &mut self.instructions {
            Some(instructions) => instructions.text(&self.cwd).to_string(),
            None => String::new(),
        };
        Message::system(&prompt::system_prompt(&Situation {
            cwd: &self.cwd,
            tools: tool_names,
            tool_set: self.tool_set,
            plan: self.consent.plan,
            todos: &self.todos,
            instructions: &instructions,
        }))
    }

    /// Stream one reply. A prompt the provider calls too long is compacted one tier harder
    /// and sent once more; Ctrl+C mid-answer keeps the part the user already saw.
    fn ask_model(
        &mut self,
        tools: &[Value],
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Reply, Error> {
        let mut squeezed = false;
        let early_start = self.prepare_early_start();
        loop {
            let early_pool = self.pool.as_ref().filter(|_| early_start);
            let ctx = self.tool_context();
            let mut partial = String::new();
            let (mut early, mut from_lost_streams) = (Vec::<EarlyCall>::new(), 0);
            let mut guard_ahead = self.guard.clone();
            let mut forward = |event: Event| {
                match event {
                    Event::Text(text) => partial.push_str(text),
                    // A retried request starts over, but what the lost stream started has run:
                    // it stays, to answer the same call of the new stream, not run it twice.
                    Event::Retry { .. } | Event::Fallback { .. } => {
                        partial.clear();
                        from_lost_streams = early.len();
                        guard_ahead = self.guard.clone();
                    }
                    // A finished call that may start early (read-only) runs now, while the
                    // model is still talking.
                    Event::CallReady(call) => {
                        let ran = |e: &EarlyCall| {
                            e.call.name == call.name && e.call.arguments == call.arguments
                        };
                        let started = early_pool
                            .filter(|_| !early[..from_lost_streams].iter().any(ran))
                            .and_then(|pool| {
                                Agent::start_early(pool, call, &ctx, &mut guard_ahead)
                            });
                        early.extend(started);
                    }
                    _ => {}
                }
                on_event(event);
            };
            let streamed = self.llm.stream(
                &self.history,
                tools,
                &self.extras,
                &self.cancel,
                &mut forward,
            );
            self.early = early;
            match streamed {
                Ok(reply) => {
                    if let Some(usage) = &reply.usage {
                        self.estimator
                            .calibrate(self.history.len(), usage.prompt_tokens);
                    }
                    return Ok(reply);
                }
                Err(Error::ContextTooLong(message)) if !squeezed => {
                    squeezed = true;
                    if !self.compact_to_fit(&message, on_event) {
                        return Err(Error::ContextTooLong(message));
                    }
                }
                Err(Error::Interrupted) if !partial.is_empty() => {
                    self.push(Message::assistant(&format!("{partial}\n[interrupted]")));
                    return Err(Error::Interrupted);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Effects merge back in call order, so a batch ends where the same calls run one after
    /// another would have ended.
    fn apply(&mut self, effect: Effect) {
        match effect {
            Effect::None => {}
            Effect::ChangeDir(dir) => self.cwd = dir,
            Effect::SetTodos(todos) => self.todos = todos,
        }
    }
}
