//! How the history changes besides a plain append: every message also goes to the session
//! log, and compaction rewrites the history (and the log records it whole).
//!
//! Part of `Agent` (see `agent.rs`). Only these functions and the loop touch the history.

use super::{Agent, Event};
use crate::core::context::{self, Report, SummarySource, Tier};
use crate::core::http;
use crate::core::message::{self, Message};
use serde_json::json;

impl Agent {
    /// Shrink the history at `tier` (the summary is a model call of its own, counted in the
    /// cost like any other) and tell the user when anything changed.
    pub fn compact(&mut self, tier: Tier, on_event: &mut dyn FnMut(Event)) -> Report {
        let (llm, cancel, extras) = (self.llm.clone(), self.cancel.clone(), &self.extras);
        let mut summarise = |prompt: Vec<Message>| {
            (llm.complete(&prompt, extras, &cancel)).map_err(|e| e.to_string())
        };
        let report = context::compact(&mut self.history, tier, &mut summarise);
        self.estimator.reset();
        if report.after < report.before {
            self.log_whole_history();
            let mut notice = format!(
                "context {tier:?}: {} → {} tokens",
                report.before, report.after
            );
            if let SummarySource::Fallback(why) = &report.summary {
                notice.push_str(&format!(" (summary made without the model: {why})"));
            }
            on_event(Event::Notice(&notice));
        }
        report
    }

    /// The provider said the prompt does not fit: compact one tier harder, by its own count of
    /// the prompt where it gave one (our estimate said it fitted). False if nothing shrank,
    /// since sending the same bytes again would get the same answer.
    pub(super) fn compact_to_fit(
        &mut self,
        message: &str,
        on_event: &mut dyn FnMut(Event),
    ) -> bool {
        let said = http::overflow_numbers(message);
        if let Some(prompt) = said.prompt {
            self.estimator.calibrate(self.history.len(), prompt);
        }
        let configured = self.llm.config().max_context as usize;
        if said.limit.is_some() && self.max_context() < configured {
            let limit = self.max_context();
            let note = format!(
                "the provider allows about {limit} prompt tokens, not {configured}: compacting to fit"
            );
            on_event(Event::Notice(&note));
        }
        let tokens = self.estimator.estimate(&self.history);
        let tier = context::harder(context::tier_for(tokens, self.max_context()));
        let report = self.compact(tier, on_event);
        report.after < report.before
    }

    pub(super) fn max_context(&self) -> usize {
        self.llm.context_limit()
    }

    /// Every message joins the history here, and the session log at the same moment, so a
    /// crash loses at most the line being written.
    pub(super) fn push(&mut self, message: Message) {
        if let Some(log) = &mut self.log
            && let Err(e) = log.append(&message)
        {
            self.log_failure = Some(format!("the session log stopped: {e}"));
            self.log = None;
        }
        self.history.push(message);
    }

    /// A repair means a step lost a tool result (Ctrl+C, a crash, or a bug): the user and the
    /// trace hear of it, so a loop that drops results cannot hide behind the repair.
    pub(super) fn report_repairs(&self, changed: usize, on_event: &mut dyn FnMut(Event)) {
        if let Some(trace) = self.extras.account.trace() {
            trace.record("repair", json!({"changed": changed, "at": "request"}));
        }
        on_event(Event::Notice(&message::repair_notice(
            changed,
            "before a request",
        )));
    }

    /// The history was rewritten (repair, compaction, reset): the log records it whole.
    pub(super) fn log_whole_history(&mut self) {
        if let Some(log) = &mut self.log
            && let Err(e) = log.replace(&self.history)
        {
            self.log_failure = Some(format!("the session log stopped: {e}"));
            self.log = None;
        }
    }
}
