//! What a session spends and which model it talks to: usage, cost, the budget, fallbacks,
//! and the builder methods that set prices and a trace.
//!
//! Part of `Llm` (see `llm.rs`); nothing here sends a request.

use super::Llm;
use crate::config::Config;
use crate::context;
use crate::cost::{Ledger, PriceTable};
use crate::error::Error;
use crate::message::Message;
use crate::sse::{Reply, Usage};
use crate::trace::Trace;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

impl Llm {
    /// Write every request and stream line to `trace` (the agent adds tool calls).
    pub fn with_trace(mut self, trace: Trace) -> Llm {
        self.trace = Some(Arc::new(trace));
        self
    }

    pub fn trace(&self) -> Option<&Trace> {
        self.trace.as_deref()
    }

    /// Price requests with this table (the built-in one plus `~/.corecoder/pricing.json`).
    pub fn with_prices(mut self, prices: PriceTable) -> Llm {
        self.prices = Arc::new(prices);
        self
    }

    /// The same session on another model: a fresh connection and adaptations; the ledger
    /// carries over, so what was spent stays priced at the model that spent it.
    pub fn with_model(&self, model: &str) -> Llm {
        let config = Config {
            model: model.to_string(),
            ..self.config.clone()
        };
        let mut llm = Llm::new(config);
        llm.prices = self.prices.clone();
        llm.trace = self.trace.clone();
        llm.ledger = Mutex::new(self.ledger());
        llm.estimated = AtomicBool::new(self.estimated.load(Ordering::Relaxed));
        llm
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Tokens used by every request of this session so far (sub-agents and summaries included).
    pub fn usage(&self) -> Usage {
        self.ledger().usage()
    }

    /// Dollars spent so far by priced requests.
    pub fn dollars(&self) -> f64 {
        self.ledger().dollars()
    }

    /// Tokens and dollars so far, as one line (`/tokens`, the end of a `-p` run).
    pub fn cost_summary(&self) -> String {
        let summary = self.ledger().summary();
        match self.estimated.load(Ordering::Relaxed) {
            true => format!("{summary} (partly estimated: the provider did not report usage)"),
            false => summary,
        }
    }

    pub(super) fn ledger(&self) -> Ledger {
        self.ledger.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// `--max-cost`: refuse a request once the session has spent the budget.
    pub(super) fn check_budget(&self) -> Result<(), Error> {
        let (Some(budget), spent) = (self.config.max_cost, self.ledger().dollars()) else {
            return Ok(());
        };
        match spent >= budget {
            true => Err(Error::Budget(format!(
                "${spent:.4} spent of the ${budget:.4} allowed (--max-cost)"
            ))),
            false => Ok(()),
        }
    }

    /// Move to the next model of `CORECODER_FALLBACK_MODELS`, for the rest of the session.
    pub(super) fn switch_to_fallback(&self) -> Option<String> {
        let next = self
            .config
            .fallback_models
            .get(self.fallbacks_used.fetch_add(1, Ordering::Relaxed))?;
        if let Ok(mut model) = self.model.lock() {
            *model = next.clone();
        }
        Some(next.clone())
    }

    /// The model requests go to now (the configured one, or a fallback after failures).
    pub fn model(&self) -> String {
        self.model
            .lock()
            .map(|m| m.clone())
            .unwrap_or_else(|_| self.config.model.clone())
    }

    /// Add this reply's usage to the session totals, estimating when the provider sent none.
    pub(super) fn count_usage(&self, reply: &Reply, messages: &[Message]) {
        let usage = reply.usage.clone().unwrap_or_else(|| {
            self.estimated.store(true, Ordering::Relaxed);
            estimate_usage(reply, messages)
        });
        if let Ok(mut ledger) = self.ledger.lock() {
            ledger.record(&self.prices, &self.model(), &usage);
        }
    }
}

/// The same per-content-type estimate compaction uses, for providers that report no usage.
fn estimate_usage(reply: &Reply, messages: &[Message]) -> Usage {
    let arguments: String = reply
        .tool_calls
        .iter()
        .map(|c| c.arguments.as_str())
        .collect();
    let completion = [&reply.text, &reply.reasoning, &arguments];
    Usage {
        prompt_tokens: context::estimate_messages(messages) as u64,
        completion_tokens: completion
            .iter()
            .map(|t| context::estimate_text(t))
            .sum::<usize>() as u64,
        cached_tokens: 0,
    }
}
