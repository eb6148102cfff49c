//! The agent loop: build prompt → stream → run tools → append results → repeat.
//!
//! `Agent::run_loop` is the loop, in one function you can read top to bottom and step through;
//! `run_task` wraps it for one user task, and the steps it calls follow it in this file, in the
//! order it calls them, then what the binary, the REPL and embedding programs call between
//! turns. The agent owns the history (nothing else changes it), the tracked working directory
//! and the todo list. Every optional feature is reached through `extras` (`extras/mod.rs`), one
//! method per step. It does not talk HTTP (that is `llm.rs`) and does not know how any tool
//! works (that is `tools/`).

use crate::core::batch::{self, Batch, Ruling};
use crate::core::consent::{Answer, Consent, LoopGuard};
use crate::core::context::{self, Report, Tier};
use crate::core::dispatch::{self, AgentKind, Effect, Outcome, Pool, ToolContext};
use crate::core::event::{Error, Event, Finish};
use crate::core::llm::Llm;
use crate::core::message::{self, Message, Reply, ToolCall};
use crate::core::prompt::{self, Estimator, Situation};
use crate::extras::Extras;
use crate::tools::todo_write::Todo;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct Agent {
    llm: Arc<Llm>,
    /// `history[0]` is the system prompt, rebuilt every round.
    history: Vec<Message>,
    cwd: PathBuf,
    todos: Vec<Todo>,
    consent: Consent,
    kind: AgentKind,
    max_rounds: u32,
    cancel: Arc<AtomicBool>,
    /// Started on the first batch of several calls; sub-agents run their calls inline.
    pool: Option<Pool>,
    /// Rounds the last task took (for `--output-format json`).
    rounds_used: u32,
    /// Counts identical calls in a row: the third is refused, the fifth ends the run.
    guard: LoopGuard,
    /// Calibrated by the provider's real prompt sizes; decides when to compact.
    estimator: Estimator,
    /// Every optional feature: hooks, MCP, the sandbox, the session log, checkpoints, early start…
    extras: Extras,
}

impl Agent {
    pub fn new(llm: Arc<Llm>, cwd: PathBuf, consent: Consent) -> Agent {
        Agent {
            llm,
            history: vec![Message::system("")],
            cwd,
            todos: Vec::new(),
            consent,
            kind: AgentKind::Main,
            max_rounds: 50,
            cancel: Arc::new(AtomicBool::new(false)),
            pool: None,
            rounds_used: 0,
            guard: LoopGuard::default(),
            estimator: Estimator::new(),
            extras: Extras::default(),
        }
    }

    /// A sub-agent for the `agent` tool: fresh history, no `agent` tool, calls run inline, the
    /// session-wide extras shared (no session log, no checkpoints of its own).
    pub fn sub_agent(ctx: &ToolContext, max_rounds: u32) -> Agent {
        let consent = ctx.consent.for_sub_agent();
        let mut agent = Agent::new(ctx.llm.clone(), ctx.cwd.clone(), consent);
        agent.extras = ctx.extras.clone();
        agent.kind = AgentKind::SubAgent;
        agent.max_rounds = max_rounds;
        agent.cancel = ctx.cancel.clone();
        agent
    }

    /// Run a task where no one can be asked: calls that would need consent are refused.
    pub fn run(&mut self, task: &str, on_event: &mut dyn FnMut(Event)) -> Result<Finish, Error> {
        self.run_task(task, on_event, &mut |_, _| Answer::Deny)
    }

    /// Run one user task to its end: an answer, the round cap, or an error. `ask(name,
    /// summary)` is called, on this thread, for each call the consent rules leave to the user.
    pub fn run_task(
        &mut self,
        task: &str,
        on_event: &mut dyn FnMut(Event),
        ask: &mut dyn FnMut(&str, &str) -> Answer,
    ) -> Result<Finish, Error> {
        self.cancel.store(false, Ordering::Relaxed);
        // A UserPromptSubmit hook may refuse the task before it joins the history.
        (self.extras)
            .task_submitted(&self.cwd, task, on_event)
            .map_err(Error::Refused)?;
        self.push(Message::user(task));
        let finish = self.run_loop(on_event, ask);
        self.extras.task_ended(&self.cwd, on_event);
        finish
    }

    /// The loop: the rounds of one task, until an answer, the round cap or an error.
    fn run_loop(
        &mut self,
        on_event: &mut dyn FnMut(Event),
        ask: &mut dyn FnMut(&str, &str) -> Answer,
    ) -> Result<Finish, Error> {
        let mut tool_schemas = dispatch::schemas(self.kind);
        tool_schemas.extend(self.extras.tool_schemas());
        let tool_names: Vec<String> = (tool_schemas.iter())
            .filter_map(|s| s["function"]["name"].as_str().map(String::from))
            .collect();
        for round in 1..=self.max_rounds {
            // 1. A fresh system prompt: the cwd, todos, plan mode or AGENTS.md may have changed.
            self.history[0] = self.system_prompt(&tool_names);
            // 2. Never send a history the provider would reject (a call left unanswered).
            let repairs = message::repair_tool_pairs(&mut self.history);
            if repairs > 0 {
                (self.extras).repaired(&self.history, repairs, on_event);
            }
            self.extras.round_started(on_event);

            // 3. Keep the prompt inside the context window: snip, summarise or collapse.
            let tokens = self.estimator.estimate(&self.history);
            if let Some(tier) = context::tier_for(tokens, self.llm.context_limit(&self.extras)) {
                self.compact(tier, on_event);
            }

            // 4. Stream the reply; text and reasoning reach the caller as they arrive.
            on_event(Event::Requesting { round });
            self.rounds_used = round;
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
            let rulings = match batch::rule(&mut self.guard, &calls, cut_off, on_event) {
                Ok(rulings) => rulings,
                Err(why) => {
                    // Still answer every call, so the history stays valid for a later turn.
                    let stopped = "[not run: the run was stopped for repeating this call]";
                    (calls.iter()).for_each(|c| self.push(Message::tool_result(&c.id, stopped)));
                    return Err(Error::Looping(why));
                }
            };
            let outcomes = self.run_tools(&calls, rulings, on_event, ask);
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

    /// Every message joins the history here, and the session log at the same moment.
    fn push(&mut self, message: Message) {
        self.extras.added(&message);
        self.history.push(message);
    }

    fn system_prompt(&mut self, tool_names: &[String]) -> Message {
        let instructions = self.extras.project_instructions(&self.cwd);
        Message::system(&prompt::system_prompt(&Situation {
            cwd: &self.cwd,
            tools: tool_names,
            kind: self.kind,
            plan: self.consent.plan,
            todos: &self.todos,
            instructions: &instructions,
        }))
    }

    /// Shrink the history at `tier` (the summary is a model call of its own, counted in the
    /// cost like any other) and tell the user when anything changed.
    pub fn compact(&mut self, tier: Tier, on_event: &mut dyn FnMut(Event)) -> Report {
        let (llm, cancel, extras) = (&self.llm, &self.cancel, &self.extras);
        let mut summarise = |prompt: Vec<Message>| {
            (llm.complete(&prompt, extras, cancel)).map_err(|e| e.to_string())
        };
        let (history, estimator) = (&mut self.history, &mut self.estimator);
        let report = context::compact_and_tell(history, estimator, tier, &mut summarise, on_event);
        if report.after < report.before {
            self.extras.rewritten(&self.history);
        }
        report
    }

    /// Stream one reply. A prompt the provider calls too long is compacted one tier harder
    /// and sent once more; Ctrl+C mid-answer keeps the part the user already saw. Read-only
    /// calls that become whole while it streams start early (`extras/early.rs`).
    fn ask_model(
        &mut self,
        tools: &[Value],
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Reply, Error> {
        let mut squeezed = false;
        // Only the main agent's pool, and only when no PreToolUse hook must see every call first.
        if self.kind == AgentKind::Main && self.extras.may_start_early() {
            self.pool.get_or_insert_with(Pool::new);
        }
        loop {
            let pool = self.pool.as_ref().filter(|_| self.extras.may_start_early());
            let ctx = self.tool_context();
            let mut partial = String::new();
            let mut early = std::mem::take(&mut self.extras.early);
            early.reply_starting(&self.guard);
            let mut forward = |event: Event| {
                match event {
                    Event::Text(text) => partial.push_str(text),
                    // A retried request starts over: the text shown so far is void.
                    Event::Retry { .. } | Event::Fallback { .. } => partial.clear(),
                    _ => {}
                }
                early.streamed(&event, pool, &ctx, &self.guard);
                on_event(event);
            };
            let streamed = self.llm.stream(
                &self.history,
                tools,
                &self.extras,
                &self.cancel,
                &mut forward,
            );
            self.extras.early = early;
            match streamed {
                Ok(reply) => {
                    if let Some(usage) = &reply.usage {
                        (self.estimator).calibrate(self.history.len(), usage.prompt_tokens);
                    }
                    return Ok(reply);
                }
                // Compact one tier harder and send once more; if nothing shrank, the same
                // bytes again would get the same answer.
                Err(Error::ContextTooLong(message)) if !squeezed => {
                    squeezed = true;
                    let (history, estimator) = (&self.history, &mut self.estimator);
                    let (llm, extras) = (&self.llm, &self.extras);
                    let tier =
                        context::tier_to_fit(&message, history, estimator, llm, extras, on_event);
                    let report = self.compact(tier, on_event);
                    if report.after >= report.before {
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

    fn run_tools(
        &mut self,
        calls: &[ToolCall],
        rulings: Vec<Ruling>,
        on_event: &mut dyn FnMut(Event),
        ask: &mut dyn FnMut(&str, &str) -> Answer,
    ) -> Vec<Outcome> {
        // A sub-agent already runs on a pool worker, so its own calls run inline.
        if self.kind == AgentKind::Main && calls.len() > 1 && self.pool.is_none() {
            self.pool = Some(Pool::new());
        }
        let ctx = self.tool_context();
        let batch = Batch {
            consent: &mut self.consent,
            extras: &mut self.extras,
            pool: self.pool.as_ref(),
            ctx,
        };
        let outcomes = batch.run(calls, rulings, on_event, ask);
        self.extras.batch_done(calls, &outcomes);
        outcomes
    }

    /// What a tool call may see of the session, as it stands now.
    fn tool_context(&self) -> ToolContext {
        ToolContext {
            cwd: self.cwd.clone(),
            llm: self.llm.clone(),
            consent: self.consent.clone(),
            cancel: self.cancel.clone(),
            extras: self.extras.clone(),
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

    // Between turns: what the binary, the REPL and embedding programs call. Nothing below runs
    // during a turn.

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

    /// The optional features: hooks, MCP servers, the sandbox, the session log, checkpoints…
    pub fn extras(&self) -> &Extras {
        &self.extras
    }

    /// Turn optional features on or off (sub-agents started later share them).
    pub fn extras_mut(&mut self) -> &mut Extras {
        &mut self.extras
    }

    /// Rounds (requests with their tool batches) the last task took.
    pub fn rounds_used(&self) -> u32 {
        self.rounds_used
    }

    pub fn consent_mut(&mut self) -> &mut Consent {
        &mut self.consent
    }

    /// Talk to another model from the next request on; the usage totals carry over.
    pub fn switch_model(&mut self, model: &str) {
        self.llm = Arc::new(self.llm.with_model(model));
        self.extras.model_switched(model);
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
        self.extras.rewritten(&self.history);
    }

    /// Continue an earlier conversation (already repaired by `session::load`).
    pub fn resume(&mut self, messages: Vec<Message>) {
        self.history.truncate(1);
        self.history.extend(messages);
    }
}
