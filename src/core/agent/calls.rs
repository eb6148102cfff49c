//! Step "run tools" of the loop, seen from the agent: the loop guard, the batch (consent,
//! hooks, checkpoints, the pool), read-only calls started early, and the tool trace.
//!
//! Part of `Agent` (see `agent.rs`); how each tool works is in `tools/`.

use super::{Agent, Event};
use crate::core::batch::Batch;
use crate::core::consent::Answer;
use crate::core::dispatch::{self, Outcome, ToolContext, ToolSet};
use crate::core::guard::{LoopGuard, Verdict};
use crate::core::message::ToolCall;
use crate::core::pool::{EarlyCall, Pool};
use crate::extras::hooks::HookContext;
use serde_json::json;

const CUT_CALL: &str = "the reply hit the output token limit before its arguments were complete";
const SMALLER: &str = "Send smaller calls (write a large file in several parts)";

impl Agent {
    /// Whether read-only calls may start while the reply streams: only on the main agent's
    /// pool (started here if need be), and only when no PreToolUse hook must see every call
    /// before it runs.
    pub(super) fn prepare_early_start(&mut self) -> bool {
        if self.tool_set != ToolSet::All || self.hooks.count() > 0 {
            return false;
        }
        self.pool.get_or_insert_with(Pool::new);
        true
    }

    /// Start a call whose arguments just became whole, if it may start early: the rule is
    /// `tools::may_start_early`. A call the loop guard will refuse is left for the batch to
    /// refuse; `guard_ahead` is a copy of the guard judging calls in the order they become whole.
    pub(super) fn start_early(
        pool: &Pool,
        call: &ToolCall,
        ctx: &ToolContext,
        guard_ahead: &mut LoopGuard,
    ) -> Option<EarlyCall> {
        let repeat = guard_ahead.judge_named(&call.name, &call.arguments) != Verdict::Run;
        let hint = ctx.mcp.hint(&call.name);
        if repeat || !dispatch::may_start_early(&call.name, hint, &ctx.consent) {
            return None;
        }
        Some(pool.start_early(call, ctx))
    }

    /// Which calls are answered without running: `Some` refusal for a repeat, or for a call
    /// whose arguments the output limit cut (`cut_off`); `Err` to stop the run.
    pub(super) fn guard_calls(
        &mut self,
        calls: &[ToolCall],
        cut_off: bool,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<Vec<Option<Outcome>>, String> {
        let mut guarded = Vec::with_capacity(calls.len());
        for call in calls {
            let cut = cut_off && !is_json_object(&call.arguments);
            guarded.push(match self.guard.judge(call) {
                Verdict::Stop(why) => return Err(why),
                _ if cut => {
                    let name = &call.name;
                    on_event(Event::Notice(&format!("{name}: not run, {CUT_CALL}")));
                    Some(Outcome::text(format!("[not run: {CUT_CALL}. {SMALLER}]")))
                }
                Verdict::Run => None,
                Verdict::Refuse(text) => Some(Outcome::text(text)),
            });
        }
        Ok(guarded)
    }

    pub(super) fn run_tools(
        &mut self,
        calls: &[ToolCall],
        guarded: Vec<Option<Outcome>>,
        on_event: &mut dyn FnMut(Event),
        ask: &mut dyn FnMut(&str, &str) -> Answer,
    ) -> Vec<Outcome> {
        // A sub-agent already runs on a pool worker, so its own calls run inline.
        if self.tool_set == ToolSet::All && calls.len() > 1 && self.pool.is_none() {
            self.pool = Some(Pool::new());
        }
        let session_id = self.session_id();
        let ctx = self.tool_context();
        let batch = Batch {
            early: std::mem::take(&mut self.early),
            consent: &mut self.consent,
            checkpoints: self.checkpoints.as_mut(),
            pool: self.pool.as_ref(),
            ctx,
            session_id: &session_id,
            guarded,
        };
        let outcomes = batch.run(calls, on_event, ask);
        if let Some(trace) = self.extras.account.trace() {
            for (call, outcome) in calls.iter().zip(&outcomes) {
                let (name, arguments) = (&call.name, &call.arguments);
                let fields = json!({"id": call.id, "name": name, "arguments": arguments, "result": outcome.text});
                trace.record("tool", fields);
            }
        }
        outcomes
    }

    /// What a tool call may see of the session, as it stands now.
    pub(super) fn tool_context(&self) -> ToolContext {
        ToolContext {
            hooks: self.hooks.clone(),
            mcp: self.mcp.clone(),
            instructions: self.instructions.clone(),
            cwd: self.cwd.clone(),
            llm: self.llm.clone(),
            account: self.extras.account.clone(),
            consent: self.consent.clone(),
            cancel: self.cancel.clone(),
            shell: self.shell.clone(),
            reads_running: self.reads_running.clone(),
        }
    }

    pub(super) fn hook_context(&self) -> HookContext<'_> {
        HookContext {
            session_id: self.log.as_ref().map_or("", |log| log.id()),
            cwd: &self.cwd,
        }
    }

    pub(super) fn session_id(&self) -> String {
        self.log
            .as_ref()
            .map_or(String::new(), |log| log.id().to_string())
    }
}

/// Whether a call's arguments came whole: a cut one cannot end in its closing brace.
fn is_json_object(arguments: &str) -> bool {
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(arguments).is_ok()
}
