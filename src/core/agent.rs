//! The agent loop: build prompt → stream → run tools → append results → repeat. `run_loop` is
//! the loop, to read top to bottom and step through; `run_task` wraps it for one task; the steps
//! follow in the order it calls them, then what callers use between turns. The agent owns the
//! history, the working directory and the todo list; every optional feature is reached through
//! `extras` (`extras/mod.rs`). It talks no HTTP and runs no tool itself.

use crate::client::llm::Llm;
use crate::core::batch::{self, Batch};
use crate::core::consent::{Answer, Consent, LoopGuard};
use crate::core::context::{self, Report, Tier};
use crate::core::dispatch::{self, Pool};
use crate::core::event::{Error, Event, Finish};
use crate::core::message::{self, Effect, Message, Reply, Role, ToolCall};
use crate::core::notes::StateNotes;
use crate::core::prompt::{self, AgentKind};
use crate::extras::Extras;
use crate::tools::ToolContext;
use crate::tools::support::todos::Todo;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set the public fields between turns; the history and the model change only through methods.
pub struct Agent {
    /// What may run without asking; plan mode (`consent.plan`) is switched here.
    pub consent: Consent,
    /// Rounds (a request and its tool batch) a task may take before it ends at the cap.
    pub(crate) max_rounds: u32,
    /// Set it (e.g. from a Ctrl+C handler) to stop the current turn at the next safe point.
    pub(crate) cancel: Arc<AtomicBool>,
    /// Rounds the last task took (for `--output-format json`).
    pub(crate) rounds_used: u32,
    /// Hooks, MCP, the sandbox, the session log, checkpoints… (sub-agents share the session's).
    pub extras: Extras,
    /// Where the next tool call starts; a `cd` in bash moves it.
    pub(crate) cwd: PathBuf,
    /// The user's agent, or a sub-agent the `agent` tool started (`tools/agent.rs`).
    pub(crate) kind: AgentKind,
    llm: Arc<Llm>,
    /// `history[0]` is the system prompt, rebuilt every round.
    history: Vec<Message>,
    todos: Vec<Todo>,
    /// What the system prompt describes and what the model was told since (`notes.rs`).
    notes: StateNotes,
    /// Counts identical calls in a row: the third is refused, the fifth ends the run.
    guard: LoopGuard,
    /// Started with the first task; a sub-agent runs its calls inline (it runs on a worker).
    pool: Option<Pool>,
}

impl Agent {
    pub fn new(llm: Arc<Llm>, cwd: PathBuf, consent: Consent) -> Agent {
        Agent {
            llm,
            history: vec![Message::system("")],
            cwd,
            todos: Vec::new(),
            notes: StateNotes::default(),
            guard: LoopGuard::default(),
            consent,
            kind: AgentKind::Main,
            max_rounds: 50,
            cancel: Arc::new(AtomicBool::new(false)),
            pool: None,
            rounds_used: 0,
            extras: Extras::default(),
        }
    }

    /// Run a task where no one can be asked: calls that would need consent are refused.
    pub fn run(&mut self, task: &str, on_event: &mut dyn FnMut(Event)) -> Result<Finish, Error> {
        self.run_task(task, on_event, &mut |_, _, _| Answer::Deny)
    }

    /// Run one task to its end: an answer, the round cap, an error, or a hook's refusal. `ask(name,
    /// summary, always)` is called on this thread for each call consent leaves to the user.
    pub(crate) fn run_task(
        &mut self,
        task: &str,
        on_event: &mut dyn FnMut(Event),
        ask: &mut dyn FnMut(&str, &str, &str) -> Answer,
    ) -> Result<Finish, Error> {
        self.cancel.store(false, Ordering::Relaxed);
        self.extras
            .task_submitted(&self.cwd, task, on_event)
            .map_err(Error::Refused)?;
        let task = self.with_state_note(Message::user(task));
        self.push(task);
        let finish = self.run_loop(on_event, ask);
        self.extras.task_ended(&self.cwd, on_event);
        finish
    }

    fn run_loop(
        &mut self,
        on_event: &mut dyn FnMut(Event),
        ask: &mut dyn FnMut(&str, &str, &str) -> Answer,
    ) -> Result<Finish, Error> {
        let tools = [dispatch::schemas(self.kind), self.extras.tool_schemas()].concat();
        if self.kind == AgentKind::Main {
            self.pool.get_or_insert_with(Pool::new);
        }
        for round in 1..=self.max_rounds {
            // 1. The system prompt: the session as it started, the same bytes every round.
            let (cwd, plan, todos) = (&self.cwd, self.consent.plan, &self.todos);
            let start = self.notes.at_start(cwd, plan, todos, &mut self.extras);
            self.history[0] = Message::system(&prompt::system_prompt(start, self.kind));
            // 2. Never send a history the provider would reject (a call left unanswered).
            let repairs = message::repair_tool_pairs(&mut self.history);
            self.extras.repaired(&self.history, repairs, on_event);
            self.extras.round_started(on_event);

            // 3. Keep the prompt inside the context window: snip, summarise or collapse.
            let limit = self.llm.context_limit();
            let tokens = self.extras.prompt_tokens(&self.history);
            if let Some(tier) = context::tier_for(tokens, limit) {
                self.compact(tier, on_event);
            }

            // 4. Stream the reply; text and reasoning reach the caller as they arrive.
            on_event(Event::Requesting { round });
            self.rounds_used = round;
            let reply = self.ask_model(&tools, on_event)?;
            self.extras.replied(self.history.len(), &reply, on_event);

            // 5. No tool calls: this is the answer (unless there is none, or it was cut off).
            let cut_off = reply.finish_reason.as_deref() == Some("length");
            if reply.tool_calls.is_empty() {
                let finish = Finish::of_answer(&reply.text, cut_off)?;
                self.push(Message::assistant(&reply.text));
                return Ok(finish);
            }

            // 6. Record the calls, run them, and answer each one, in call order.
            let assistant = Message::from_reply(&reply);
            let calls = assistant.tool_calls.clone();
            self.push(assistant);
            let (guard, extras) = (&mut self.guard, &self.extras);
            let rulings = match batch::rule(guard, extras, &tools, &calls, cut_off, on_event) {
                Ok(rulings) => rulings,
                Err(why) => {
                    // Still answer every call, so the history stays valid for a later turn.
                    let stopped = |c: &ToolCall| Message::tool_result(&c.id, batch::STOPPED);
                    calls.iter().for_each(|c| self.push(stopped(c)));
                    return Err(Error::Looping(why));
                }
            };
            let batch = Batch {
                ctx: self.tool_context(),
                consent: &mut self.consent,
                extras: &mut self.extras,
                pool: self.pool.as_ref(),
            };
            let outcomes = batch.run(&calls, rulings, on_event, ask);
            let mut results = Vec::with_capacity(calls.len());
            for (call, outcome) in calls.iter().zip(outcomes) {
                results.push(Message::tool_result(&call.id, &outcome.text));
                // In call order, so a batch ends where the same calls one after another would.
                match outcome.effect {
                    Effect::None => {}
                    Effect::ChangeDir(dir) => self.cwd = dir,
                    Effect::SetTodos(todos) => self.todos = todos,
                }
            }
            // What the batch changed (a `cd`, the todo list) is told at the end of its last result.
            let last = results.pop().map(|last| self.with_state_note(last));
            results.into_iter().chain(last).for_each(|m| self.push(m));
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

    /// What changed since the model was last told (`notes.rs`), at the end of
    /// `message`, the next to join the history: no byte already sent moves.
    fn with_state_note(&mut self, mut message: Message) -> Message {
        let (cwd, plan, todos) = (&self.cwd, self.consent.plan, &self.todos);
        let note = self.notes.now(cwd, plan, todos, &mut self.extras);
        if let (Some(note), Some(text)) = (note, &mut message.content) {
            text.push_str(&note);
        }
        message
    }

    /// Shrink the history at `tier` and tell the user when anything changed (`context.rs`). The
    /// notes may be gone with it: the last message tells them again if it is not sent yet.
    pub(crate) fn compact(&mut self, tier: Tier, on_event: &mut dyn FnMut(Event)) -> Report {
        let (history, llm, extras, cancel) =
            (&mut self.history, &self.llm, &mut self.extras, &self.cancel);
        let report = context::compact_and_tell(history, llm, extras, cancel, tier, on_event);
        if report.after < report.before {
            self.notes.forget(&self.history);
            let unsent = |m: &mut Message| matches!(m.role, Role::User | Role::Tool);
            if let Some(last) = self.history.pop_if(unsent) {
                let last = self.with_state_note(last);
                self.history.push(last);
            }
            self.extras.rewritten(&self.history);
        }
        report
    }

    /// Stream one reply. A prompt the provider calls too long is compacted one tier harder and
    /// sent once more (if nothing shrank, the same bytes would get the same answer).
    fn ask_model(
        &mut self,
        tools: &[Value],
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Reply, Error> {
        match self.stream_reply(tools, on_event) {
            Err(Error::ContextTooLong(message)) => {
                let (configured, limit) = (self.llm.config().max_context, self.llm.context_limit());
                let (history, windows) = (&self.history, (configured as usize, limit));
                let tokens = self.extras.overflowed(&message, history, windows, on_event);
                match self.compact(context::harder(context::tier_for(tokens, limit)), on_event) {
                    report if report.after < report.before => self.stream_reply(tools, on_event),
                    _ => Err(Error::ContextTooLong(message)),
                }
            }
            streamed => streamed,
        }
    }

    /// One request; Ctrl+C mid-answer keeps what the user saw. Read-only calls start early on the
    /// main agent's pool (`extras/early.rs`), unless a PreToolUse hook must see every call first.
    fn stream_reply(
        &mut self,
        tools: &[Value],
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Reply, Error> {
        let (ctx, mut partial) = (self.tool_context(), String::new());
        let pool = self.pool.as_ref().filter(|_| self.extras.may_start_early());
        let mut early = self.extras.reply_starting(&self.guard, &self.cwd);
        let mut forward = |event: Event| {
            match event {
                Event::Text(text) => partial.push_str(text),
                // A retried request starts over: the text shown so far is void.
                Event::Retry { .. } | Event::Fallback { .. } => partial.clear(),
                _ => {}
            }
            let start = |call: &ToolCall| pool.map(|pool| pool.start(call, &ctx));
            early.streamed(&event, &ctx.sub_agent.consent, &ctx.mcp, &start);
            on_event(event);
        };
        let (llm, history, extras, cancel) = (&self.llm, &self.history, &self.extras, &self.cancel);
        let streamed = llm.stream(history, tools, extras, cancel, &mut forward);
        self.extras.reply_done(early);
        if matches!(streamed, Err(Error::Interrupted)) && !partial.is_empty() {
            self.push(Message::assistant(&format!("{partial}\n[interrupted]")));
        }
        streamed
    }

    fn tool_context(&self) -> ToolContext {
        let sub_agent = (&self.llm, &self.consent);
        self.extras.tool_context(&self.cwd, &self.cancel, sub_agent)
    }

    pub fn history(&self) -> &[Message] {
        &self.history
    }

    pub fn llm(&self) -> &Llm {
        &self.llm
    }

    /// Talk to another model from the next request on; the usage totals carry over.
    pub fn switch_model(&mut self, model: &str) {
        self.llm = Arc::new(self.llm.with_model(model));
        self.extras.model_switched(model);
    }

    /// Tell the model of something done behind its back (`/undo`), or it would think it stands.
    pub fn tell_model(&mut self, note: &str) {
        self.push(Message::user(&format!("[note from the session] {note}")));
    }

    /// Forget the conversation and the todo list (the working directory stays).
    pub fn reset(&mut self) {
        self.history.truncate(1);
        self.todos.clear();
        self.notes.forget(&self.history);
        self.extras.rewritten(&self.history);
    }

    /// Continue an earlier conversation (repaired by `session::load`); the next note says where.
    pub fn resume(&mut self, messages: Vec<Message>) {
        self.history.splice(1.., messages);
        self.notes.forget(&self.history);
        self.extras.resumed();
    }
}
