//! One reply's tool calls, from consent to results: the step "run tools" of the agent loop.
//!
//! On the caller's thread, in call order: show each call; let the loop guard's ruling, the
//! PreToolUse hooks and consent (asking the user if need be) refuse it; checkpoint what the
//! allowed calls will change. Then those run (on the pool when there are several), the
//! PostToolUse hooks see each result, and every call gets exactly one outcome, in call order.
//! It never touches the history: the loop appends the results.

use crate::core::consent::{Answer, Consent, LoopGuard, Verdict};
use crate::core::dispatch::{self, Pool};
use crate::core::event::{Event, ResultKind};
use crate::core::message::{Outcome, ToolCall};
use crate::extras::Extras;
use crate::tools::{ToolContext, preview};
use serde_json::Value;

const ONCE: &str = "allow, and ask again next time";
/// What each call of a reply reads when the loop guard stops the run on it.
pub(crate) const STOPPED: &str = "[not run: the run was stopped for repeating this call]";

/// Whether a call may still run, as the loop guard, then the hooks and consent, rule on it.
pub(crate) enum Ruling {
    /// Not refused (yet: after the guard, hooks and consent still decide).
    Open,
    /// Answered without running (a repeat, cut arguments, a hook's veto, consent's no): the
    /// model reads this instead of a result.
    Refused(Outcome),
}

/// What the loop guard says of each call before anyone else looks: a repeat, a call whose
/// arguments the output limit cut, or one to a tool not in `tools` (`extras/gate.rs`), is
/// refused; `Err` stops the run.
pub(crate) fn rule(
    guard: &mut LoopGuard,
    extras: &Extras,
    tools: &[Value],
    calls: &[ToolCall],
    cut_off: bool,
    on_event: &mut dyn FnMut(Event),
) -> Result<Vec<Ruling>, String> {
    let mut rulings = Vec::with_capacity(calls.len());
    for call in calls {
        let cut = extras.gate().cut_off(call, cut_off, on_event);
        let cut = cut.or_else(|| extras.gate().not_offered(call, tools));
        rulings.push(match (cut, guard.judge(call)?) {
            (Some(refused), _) | (None, Some(refused)) => Ruling::Refused(refused),
            (None, None) => Ruling::Open,
        });
    }
    Ok(rulings)
}

/// What a batch needs from the agent, borrowed for the length of the batch.
pub(crate) struct Batch<'a> {
    pub(crate) consent: &'a mut Consent,
    pub(crate) extras: &'a mut Extras,
    /// `None` runs every call inline (a sub-agent already runs on a pool worker).
    pub(crate) pool: Option<&'a Pool>,
    pub(crate) ctx: ToolContext,
}

impl Batch<'_> {
    pub fn run(
        mut self,
        calls: &[ToolCall],
        rulings: Vec<Ruling>,
        on_event: &mut dyn FnMut(Event),
        ask: &mut dyn FnMut(&str, &str, &str) -> Answer,
    ) -> Vec<Outcome> {
        let mut settled = Vec::with_capacity(calls.len());
        for (call, ruling) in calls.iter().zip(rulings) {
            let name = &call.name;
            let summary = &preview::summary(name, &call.arguments);
            on_event(Event::ToolCall { name, summary });
            // A repeat or a hook veto is answered without asking the user anything.
            settled.push(match ruling {
                Ruling::Refused(repeated) => Ruling::Refused(repeated),
                Ruling::Open => match self.extras.before_call(call, &self.ctx.cwd, on_event) {
                    Some(blocked) => Ruling::Refused(blocked),
                    None => self.settle_consent(call, summary, on_event, ask),
                },
            });
        }
        let open = |(call, ruling): (_, &Ruling)| matches!(ruling, Ruling::Open).then_some(call);
        let allowed: Vec<&ToolCall> = calls.iter().zip(&settled).filter_map(open).collect();
        self.extras.before_calls(&allowed, &self.ctx.cwd, on_event);
        let mut ran = self.run_allowed(&allowed).into_iter();
        self.extras.calls_ran();
        let ruled = calls.iter().zip(settled);
        let (outcomes, kinds): (Vec<Outcome>, Vec<ResultKind>) = ruled
            .map(|(call, ruling)| match ruling {
                Ruling::Refused(refused) => (refused, ResultKind::Refused),
                Ruling::Open => {
                    let ran = ran.next().unwrap_or_else(|| Outcome::text("[interrupted]"));
                    let outcome = self.extras.after_call(call, ran, &self.ctx.cwd, on_event);
                    match outcome.text.starts_with("Error") {
                        true => (outcome, ResultKind::Failed),
                        false => (outcome, ResultKind::Ran),
                    }
                }
            })
            .unzip();
        // Results are shown once every call has its outcome (PostToolUse notices come first).
        for ((call, outcome), kind) in calls.iter().zip(&outcomes).zip(kinds) {
            let (name, text) = (&call.name, &outcome.text);
            on_event(Event::ToolResult { name, text, kind });
        }
        self.extras.batch_done(calls, &outcomes);
        outcomes
    }

    /// Outcomes of the allowed calls, in their order. The batch runs them (on the pool when
    /// there are several), but for a call early start already ran while the reply streamed:
    /// its result is collected instead, after the rest have started.
    fn run_allowed(&mut self, allowed: &[&ToolCall]) -> Vec<Outcome> {
        let started = self.extras.started_early(allowed);
        let pairs = allowed.iter().zip(&started);
        let rest: Vec<&ToolCall> = pairs
            .filter_map(|(c, s)| s.is_none().then_some(*c))
            .collect();
        let run = |c: &&ToolCall| dispatch::run(&c.name, &c.arguments, &self.ctx);
        let mut ran_now = match (self.pool, rest.len()) {
            (Some(pool), 2..) => pool.run_batch(&rest, &self.ctx),
            _ => rest.iter().map(run).collect(),
        }
        .into_iter();
        let lost = || Outcome::text("Error: the tool call did not return a result");
        started
            .into_iter()
            .map(|started| match started {
                Some(result) => result
                    .recv()
                    .map_or_else(|_| lost(), |(_, outcome)| outcome),
                None => ran_now.next().unwrap_or_else(lost),
            })
            .collect()
    }

    /// `Open` when the call may run; otherwise the result the model reads instead.
    fn settle_consent(
        &mut self,
        call: &ToolCall,
        summary: &str,
        on_event: &mut dyn FnMut(Event),
        ask: &mut dyn FnMut(&str, &str, &str) -> Answer,
    ) -> Ruling {
        let name = call.name.as_str();
        let verdict = self
            .extras
            .verdict_for_call(self.consent, call, &self.ctx.cwd);
        if matches!(verdict, Verdict::Ask | Verdict::AskEachTime(_))
            && let Some(preview) = &preview::preview(name, &call.arguments, &self.ctx)
        {
            on_event(Event::Proposed { name, preview });
        }
        match verdict {
            Verdict::Run => Ruling::Open,
            Verdict::Refuse(text) => Ruling::Refused(Outcome::text(text)),
            // Destructive, or a rule says ask: the summary says why; "always" allows it once.
            Verdict::AskEachTime(why) => {
                match ask(name, &format!("{summary} -- {why}; asked every time"), ONCE) {
                    Answer::Once | Answer::Always => Ruling::Open,
                    Answer::Deny => Ruling::Refused(Outcome::text(Consent::denial(name))),
                }
            }
            Verdict::Ask => match ask(name, summary, &self.extras.always_offer(call)) {
                Answer::Once => Ruling::Open,
                Answer::Always => {
                    self.extras.allowed_always(self.consent, call, on_event);
                    Ruling::Open
                }
                Answer::Deny => Ruling::Refused(Outcome::text(Consent::denial(name))),
            },
        }
    }
}
