//! One reply's tool calls, from consent to results: the step "run tools" of the agent loop.
//!
//! On the caller's thread, in call order: show each call, then let the loop guard, the
//! PreToolUse hooks and consent (asking the user if the rules say so) refuse it, and checkpoint
//! the files the allowed calls will change. Then the allowed calls run (on the pool when there
//! are several; a read-only call started while the reply streamed is collected instead), the
//! PostToolUse hooks see each result, and every call gets exactly one outcome, in call order.
//! It never touches the history: the loop appends the results.

use crate::core::consent::{Answer, Consent, Verdict};
use crate::core::dispatch::{self, Outcome, ToolContext};
use crate::core::event::{Event, ResultKind};
use crate::core::message::ToolCall;
use crate::core::pool::{EarlyCall, Pool};
use crate::extras::checkpoint::Checkpoints;
use crate::extras::hooks::{HookContext, PreToolDecision};
use crate::tools::support::files::resolve;
use serde_json::Value;

/// What a batch needs from the agent, borrowed for the length of the batch.
pub struct Batch<'a> {
    pub consent: &'a mut Consent,
    pub checkpoints: Option<&'a mut Checkpoints>,
    /// `None` runs every call inline (a sub-agent already runs on a pool worker).
    pub pool: Option<&'a Pool>,
    pub ctx: ToolContext,
    pub session_id: &'a str,
    /// Calls the loop guard refused, by position: they are answered without running.
    pub guarded: Vec<Option<Outcome>>,
    /// Read-only calls already started while the reply streamed.
    pub early: Vec<EarlyCall>,
}

impl Batch<'_> {
    pub fn run(
        mut self,
        calls: &[ToolCall],
        on_event: &mut dyn FnMut(Event),
        ask: &mut dyn FnMut(&str, &str) -> Answer,
    ) -> Vec<Outcome> {
        let mut refusals = Vec::with_capacity(calls.len());
        let guarded = std::mem::take(&mut self.guarded);
        for (call, guarded) in calls.iter().zip(guarded) {
            let name = &call.name;
            let summary = dispatch::summary(name, &call.arguments);
            on_event(Event::ToolCall {
                name,
                summary: &summary,
            });
            // A repeat or a hook veto is answered without asking the user anything.
            let refusal = match guarded {
                Some(repeated) => Some(repeated),
                None => match self.pre_tool_hooks(call, on_event) {
                    Some(blocked) => Some(blocked),
                    None => self.settle_consent(call, &summary, on_event, ask),
                },
            };
            refusals.push(refusal);
        }
        let allowed: Vec<&ToolCall> = (calls.iter().zip(&refusals))
            .filter(|(_, refusal)| refusal.is_none())
            .map(|(call, _)| call)
            .collect();
        let mark = self.checkpoint(&allowed, on_event);
        let mut ran = self.run_allowed(&allowed).into_iter();
        if let (Some(checkpoints), Some(mark)) = (self.checkpoints.as_deref_mut(), mark) {
            // A failed edit changed nothing: it must not become an /undo step.
            let _ = checkpoints.forget_unchanged(mark);
        }
        let mut outcomes: Vec<Outcome> = Vec::with_capacity(calls.len());
        let mut kinds = Vec::with_capacity(calls.len());
        for (call, refused) in calls.iter().zip(refusals) {
            let (outcome, kind) = match refused {
                Some(refused) => (refused, ResultKind::Refused),
                None => {
                    let ran = ran.next().unwrap_or_else(|| Outcome::text("[interrupted]"));
                    let outcome = self.post_tool_hooks(call, ran, on_event);
                    let failed = outcome.text.starts_with("Error");
                    (
                        outcome,
                        if failed {
                            ResultKind::Failed
                        } else {
                            ResultKind::Ran
                        },
                    )
                }
            };
            outcomes.push(outcome);
            kinds.push(kind);
        }
        for ((call, outcome), kind) in calls.iter().zip(&outcomes).zip(kinds) {
            let (name, text) = (&call.name, &outcome.text);
            on_event(Event::ToolResult { name, text, kind });
        }
        outcomes
    }

    /// Outcomes of the allowed calls, in their order: an early call's result where the same
    /// call already started while the reply streamed, the rest run now.
    fn run_allowed(&mut self, allowed: &[&ToolCall]) -> Vec<Outcome> {
        let mut early: Vec<Option<EarlyCall>> = std::mem::take(&mut self.early)
            .into_iter()
            .map(Some)
            .collect();
        let started: Vec<Option<EarlyCall>> = (allowed.iter())
            .map(|call| {
                let (name, arguments) = (&call.name, &call.arguments);
                let same = |e: &Option<EarlyCall>| {
                    e.as_ref()
                        .is_some_and(|e| e.call.name == *name && e.call.arguments == *arguments)
                };
                early.iter().position(same).and_then(|at| early[at].take())
            })
            .collect();
        let rest: Vec<&ToolCall> = (allowed.iter().zip(&started))
            .filter(|(_, started)| started.is_none())
            .map(|(call, _)| *call)
            .collect();
        let mut ran_now = match (self.pool, rest.len()) {
            (Some(pool), 2..) => pool.run_batch(&rest, &self.ctx),
            _ => (rest.iter())
                .map(|c| dispatch::run(&c.name, &c.arguments, &self.ctx))
                .collect(),
        }
        .into_iter();
        let lost = || Outcome::text("Error: the tool call did not return a result");
        (started.into_iter())
            .map(|started| match started {
                Some(early) => early
                    .result
                    .recv()
                    .map_or_else(|_| lost(), |(_, outcome)| outcome),
                None => ran_now.next().unwrap_or_else(lost),
            })
            .collect()
    }

    /// Run the PreToolUse hooks; `Some` is the refusal the model reads when one vetoes.
    fn pre_tool_hooks(&self, call: &ToolCall, on_event: &mut dyn FnMut(Event)) -> Option<Outcome> {
        let hooks = &self.ctx.hooks;
        if hooks.count() == 0 {
            return None;
        }
        let (name, input) = (&call.name, parse_input(call));
        let mut warnings = Vec::new();
        let decision = hooks.pre_tool_use(&self.hook_context(), name, &input, &mut warnings);
        warnings.iter().for_each(|w| on_event(Event::Notice(w)));
        match decision {
            PreToolDecision::Allow => None,
            PreToolDecision::Block(reason) => {
                Some(Outcome::text(format!("Blocked by a hook: {reason}")))
            }
        }
    }

    /// Run the PostToolUse hooks; what they print is added to the result for the model.
    fn post_tool_hooks(
        &self,
        call: &ToolCall,
        mut outcome: Outcome,
        on_event: &mut dyn FnMut(Event),
    ) -> Outcome {
        let hooks = &self.ctx.hooks;
        if hooks.count() == 0 {
            return outcome;
        }
        let (name, input) = (&call.name, parse_input(call));
        let mut warnings = Vec::new();
        let said = hooks.post_tool_use(
            &self.hook_context(),
            name,
            &input,
            &outcome.text,
            &mut warnings,
        );
        warnings.iter().for_each(|w| on_event(Event::Notice(w)));
        if let Some(said) = said {
            outcome.text.push_str(&format!("\n\n[hook] {said}"));
        }
        outcome
    }

    fn hook_context(&self) -> HookContext<'_> {
        HookContext {
            session_id: self.session_id,
            cwd: &self.ctx.cwd,
        }
    }

    /// `None` when the call may run; otherwise the result the model reads instead.
    fn settle_consent(
        &mut self,
        call: &ToolCall,
        summary: &str,
        on_event: &mut dyn FnMut(Event),
        ask: &mut dyn FnMut(&str, &str) -> Answer,
    ) -> Option<Outcome> {
        let name = call.name.as_str();
        let verdict = (self.consent).verdict_for_call(name, &call.arguments);
        if matches!(verdict, Verdict::Ask | Verdict::AskEachTime(_))
            && let Some(preview) = crate::tools::preview::preview(name, &call.arguments, &self.ctx)
        {
            on_event(Event::Proposed {
                name,
                preview: &preview,
            });
        }
        match verdict {
            Verdict::Run => None,
            Verdict::Refuse(text) => Some(Outcome::text(text)),
            // The warning rides in the summary so the question shows it; "always" is not
            // saved: a destructive command is asked about every time.
            Verdict::AskEachTime(why) => {
                let summary = format!("{summary} -- {why}; asked every time");
                match ask(name, &summary) {
                    Answer::Once | Answer::Always => None,
                    Answer::Deny => Some(Outcome::text(Consent::denial(name))),
                }
            }
            Verdict::Ask => match ask(name, summary) {
                Answer::Once => None,
                Answer::Always => {
                    if let Err(e) = self.consent.allow_always(name) {
                        let notice = format!("could not save the permission: {e}");
                        on_event(Event::Notice(&notice));
                    }
                    None
                }
                Answer::Deny => Some(Outcome::text(Consent::denial(name))),
            },
        }
    }

    /// Record what each allowed call may change, before it runs. Returns the stack height to
    /// compare against afterwards. A file that cannot be recorded still gets edited: the user
    /// is told that this change cannot be undone.
    fn checkpoint(
        &mut self,
        allowed: &[&ToolCall],
        on_event: &mut dyn FnMut(Event),
    ) -> Option<usize> {
        let checkpoints = self.checkpoints.as_deref_mut()?;
        let mark = checkpoints.len();
        for call in allowed {
            let args = parse_input(call);
            let text = |key: &str| {
                args.get(key)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            let recorded = match call.name.as_str() {
                "write_file" | "edit_file" if !text("file_path").is_empty() => {
                    checkpoints.record(&resolve(&self.ctx.cwd, &text("file_path")))
                }
                "bash" => checkpoints.record_bash(&text("command")),
                "agent" => checkpoints.record_bash(&format!("a sub-agent: {}", text("task"))),
                _ => Ok(()),
            };
            if let Err(e) = recorded {
                let notice = format!("/undo will not cover this {}: {e}", call.name);
                on_event(Event::Notice(&notice));
            }
        }
        Some(mark)
    }
}

/// The call's arguments as hooks and checkpoints see them (`{}` when they are not JSON).
fn parse_input(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::Object(Default::default()))
}
