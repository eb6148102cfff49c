//! What a session spends and which model it talks to: usage, cost, the budget, fallbacks,
//! and the builder methods that set prices and a trace.
//!
//! Part of `Llm` (see `llm.rs`); nothing here sends a request.

use super::Llm;
use crate::core::config::Config;
use crate::core::event::Error;
use crate::core::message::Message;
use crate::core::message::{Reply, Usage};
use crate::core::prompt;
use crate::extras::cost::{Ledger, PriceTable};
use crate::extras::trace::Trace;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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

    /// The same session on another model: a fresh connection and adaptations; the ledger is
    /// the same one (shared, not copied), so `/tokens` counts every request of the session,
    /// each priced at the model that made it, and a request still in flight on the old
    /// model is not lost.
    pub fn with_model(&self, model: &str) -> Llm {
        let config = Config {
            model: model.to_string(),
            ..self.config.clone()
        };
        let mut llm = Llm::new(config);
        llm.prices = self.prices.clone();
        llm.trace = self.trace.clone();
        llm.ledger = Arc::clone(&self.ledger);
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

    /// Dollars spent so far by priced requests (a lower bound when some price is unknown).
    pub fn dollars(&self) -> f64 {
        self.ledger().dollars()
    }

    /// What the session cost, or `None` when some request's price is unknown.
    pub fn total_dollars(&self) -> Option<f64> {
        self.ledger().total_dollars()
    }

    /// Models of this session whose price is unknown for some request.
    pub fn unpriced_models(&self) -> Vec<String> {
        self.ledger().unpriced_models()
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

    /// `--max-cost` at start: refuse to begin a session whose spending cannot be counted.
    /// Every model it may use (the configured one and the fallbacks) needs a price, unless the
    /// provider reports each request's cost (OpenRouter), which is known only after a reply.
    pub fn check_budget_can_be_kept(&self, pricing_file: &Path) -> Result<(), Error> {
        if self.config.max_cost.is_none() || reports_cost(&self.config.base_url) {
            return Ok(());
        }
        let models = std::iter::once(&self.config.model).chain(&self.config.fallback_models);
        match models.into_iter().find(|m| self.prices.price(m).is_none()) {
            Some(model) => Err(Error::Usage(unknown_price(model, pricing_file))),
            None => Ok(()),
        }
    }

    /// `--max-cost` before each request: refuse once the budget is spent, or once what was
    /// spent is unknown (a reply reported no cost and its model has no price, or `/model`
    /// chose a model of unknown price).
    pub(super) fn check_budget(&self) -> Result<(), Error> {
        let Some(budget) = self.config.max_cost else {
            return Ok(());
        };
        let ledger = self.ledger();
        let model = self.model();
        let unknown = ledger.unpriced_models();
        if let Some(unpriced) = unknown.first() {
            return Err(Error::Budget(format!(
                "--max-cost cannot be kept: what {unpriced}'s requests cost is unknown \
                 (its price is not in the table and the provider reported none)"
            )));
        }
        if self.prices.price(&model).is_none() && !reports_cost(&self.config.base_url) {
            let file = "~/.corecoder/pricing.json";
            return Err(Error::Budget(unknown_price(&model, Path::new(file))));
        }
        match ledger.dollars() >= budget {
            true => Err(Error::Budget(format!(
                "${:.4} spent of the ${budget:.4} allowed (--max-cost)",
                ledger.dollars()
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

/// Whether the provider at `base_url` puts each request's cost in its usage (OpenRouter does,
/// in every reply, as `usage.cost` in credits, which are US$).
pub fn reports_cost(base_url: &str) -> bool {
    let host = crate::core::http::host(base_url).to_ascii_lowercase();
    host == "openrouter.ai" || host.ends_with(".openrouter.ai")
}

/// Why `--max-cost` cannot be kept for `model`, and how to fix it.
fn unknown_price(model: &str, pricing_file: &Path) -> String {
    format!(
        "--max-cost cannot be kept for {model}: its price is unknown. Add it to {} as \
         {{\"{model}\": [INPUT, OUTPUT]}} (US$ per million tokens), or run without --max-cost",
        pricing_file.display()
    )
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
        prompt_tokens: prompt::estimate_messages(messages) as u64,
        completion_tokens: completion
            .iter()
            .map(|t| prompt::estimate_text(t))
            .sum::<usize>() as u64,
        cached_tokens: 0,
        cost: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only OpenRouter's own host counts, not a name that merely contains it.
    #[test]
    fn only_openrouter_reports_cost() {
        assert!(reports_cost("https://openrouter.ai/api/v1"));
        assert!(reports_cost("https://eu.OpenRouter.ai/api/v1"));
        assert!(!reports_cost("https://openrouter.ai.example.com/v1"));
        assert!(!reports_cost("https://example.com/openrouter.ai/v1"));
        assert!(!reports_cost("https://api.openai.com/v1"));
    }
}
