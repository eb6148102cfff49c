//! What the session spends and what the wire carried: prices, the ledger of every request,
//! `--max-cost`, the fallback model in use, and the `--trace` file.
//!
//! The LLM client reports here through the `Extras` seam it is handed per call: it checks the
//! budget before a request, asks which model to use, counts each reply and traces what it
//! sent and read. `Account::default()` has the built-in prices, an empty ledger, no trace and
//! no fallback taken. Nothing here sends a request or decides to retry one.

use crate::core::config::Config;
use crate::core::consent::Plan;
use crate::core::event::{Error, Event};
use crate::core::message::{Message, Reply, Usage};
use crate::core::prompt;
use crate::extras::cost::ledger::Ledger;
use crate::extras::cost::{self, PriceTable};
use crate::extras::trace::{Tee, Trace};
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Shared by the main agent, its sub-agents and the `Llm` a `/model` switch makes: cloning
/// shares the same ledger, trace and fallback state.
#[derive(Clone)]
pub struct Account {
    prices: Arc<PriceTable>,
    /// Every request of the session, priced at the model it used.
    ledger: Arc<Mutex<Ledger>>,
    /// `--trace FILE`: requests and stream lines are written there.
    trace: Option<Arc<Trace>>,
    /// How many of `CORECODER_FALLBACK_MODELS` were taken, and the one in use.
    fallback: Arc<Mutex<(usize, Option<String>)>>,
    /// Some reply came without usage, so its tokens were estimated; the summary says so.
    estimated: Arc<AtomicBool>,
}

impl Default for Account {
    fn default() -> Account {
        Account {
            prices: Arc::new(PriceTable::builtin()),
            ledger: Arc::default(),
            trace: None,
            fallback: Arc::default(),
            estimated: Arc::default(),
        }
    }
}

impl Account {
    /// Price requests with this table (the built-in one plus `~/.corecoder/pricing.json`).
    pub fn with_prices(mut self, prices: PriceTable) -> Account {
        self.prices = Arc::new(prices);
        self
    }

    /// Write every request and stream line to `trace` (the agent adds tool calls).
    pub fn with_trace(mut self, trace: Trace) -> Account {
        self.trace = Some(Arc::new(trace));
        self
    }

    pub fn trace(&self) -> Option<&Trace> {
        self.trace.as_deref()
    }

    /// `--trace`: a 200 that was not an event stream, whole (`client/not_a_stream.rs`).
    pub fn trace_not_a_stream(&self, content_type: &str, body: &str) {
        if let Some(trace) = &self.trace {
            let fields = json!({"content_type": content_type, "body": body});
            trace.record("not_a_stream", fields);
        }
    }

    /// `--trace`: the request about to be sent, whole.
    pub fn trace_request(&self, url: &str, body: &[Arc<str>]) {
        if let Some(trace) = &self.trace {
            let body = body.concat();
            let body: Value = serde_json::from_str(&body).unwrap_or_else(|_| Value::from(body));
            trace.record("request", json!({"url": url, "body": body}));
        }
    }

    /// `--trace`: a task the user gave, and whether plan mode was on for it (`/plan`), which
    /// `--replay` gives again.
    pub fn trace_task(&self, task: &str, plan: Plan) {
        if let Some(trace) = &self.trace {
            trace.record("task", json!({"text": task, "plan": plan == Plan::On}));
        }
    }

    /// `--trace`: an answer that was not a 200, with its whole body.
    pub fn trace_failure(&self, status: u16, body: &str) {
        if let Some(trace) = &self.trace {
            trace.record("http_error", json!({"status": status, "body": body}));
        }
    }

    /// The body reader the SSE parser reads through: every line it takes goes to the trace.
    pub fn tee<'a>(&'a self, body: &'a mut dyn BufRead) -> Tee<'a> {
        Tee::new(body, self.trace.as_deref())
    }

    /// The model requests go to now: the configured one, or a fallback after failures.
    pub fn model(&self, config: &Config) -> String {
        let fallback = self.fallback.lock().ok().and_then(|f| f.1.clone());
        fallback.unwrap_or_else(|| config.model.clone())
    }

    /// Move to the next model of `CORECODER_FALLBACK_MODELS`, for the rest of the session.
    fn switch_to_fallback(&self, config: &Config) -> Option<String> {
        let mut fallback = self.fallback.lock().ok()?;
        let next = config.fallback_models.get(fallback.0)?.clone();
        *fallback = (fallback.0 + 1, Some(next.clone()));
        Some(next)
    }

    /// Out of retries (or not served) on the model in use: the next fallback model from now
    /// on, and the user is told; `Err` with `why` when none is left.
    pub fn fall_back(
        &self,
        config: &Config,
        why: String,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<(), Error> {
        let Some(model) = self.switch_to_fallback(config) else {
            return Err(Error::Api(why));
        };
        on_event(Event::Fallback {
            model: &model,
            why: &why,
        });
        Ok(())
    }

    /// `/model`: the chosen model from now on, and every fallback may be taken again.
    pub fn forget_fallback(&self) {
        if let Ok(mut fallback) = self.fallback.lock() {
            *fallback = (0, None);
        }
    }

    /// Add this reply's usage to the session totals, estimating when the provider sent none.
    pub fn count(&self, model: &str, reply: &Reply, messages: &[Message]) {
        let usage = match &reply.usage {
            Some(usage) => cost::believable(usage, || {
                self.estimated.store(true, Ordering::Relaxed);
                estimate_usage(reply, messages)
            }),
            None => {
                self.estimated.store(true, Ordering::Relaxed);
                estimate_usage(reply, messages)
            }
        };
        if let Ok(mut ledger) = self.ledger.lock() {
            ledger.record(&self.prices, model, &usage);
        }
    }

    fn ledger(&self) -> Ledger {
        self.ledger.lock().map(|l| l.clone()).unwrap_or_default()
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

    /// `--max-cost` at start: refuse to begin a session whose spending cannot be counted.
    /// Every model it may use (the configured one and the fallbacks) needs a price, unless the
    /// provider reports each request's cost (OpenRouter), which is known only after a reply.
    pub fn check_budget_can_be_kept(&self, config: &Config, file: &Path) -> Result<(), Error> {
        if config.max_cost.is_none() || reports_cost(&config.base_url) {
            return Ok(());
        }
        let models = std::iter::once(&config.model).chain(&config.fallback_models);
        match models.into_iter().find(|m| self.prices.price(m).is_none()) {
            Some(model) => Err(Error::Usage(unknown_price(model, file))),
            None => Ok(()),
        }
    }

    /// `--max-cost` before each request: refuse once the budget is spent, or once what was
    /// spent is unknown (a reply reported no cost and its model has no price, or `/model`
    /// chose a model of unknown price).
    pub fn check_budget(&self, config: &Config) -> Result<(), Error> {
        let Some(budget) = config.max_cost else {
            return Ok(());
        };
        let ledger = self.ledger();
        let model = self.model(config);
        if let Some(unpriced) = ledger.unpriced_models().first() {
            return Err(Error::Budget(format!(
                "--max-cost cannot be kept: what {unpriced}'s requests cost is unknown \
                 (its price is not in the table and the provider reported none)"
            )));
        }
        if self.prices.price(&model).is_none() && !reports_cost(&config.base_url) {
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
}

/// Whether the provider at `base_url` puts each request's cost in its usage (OpenRouter does,
/// in every reply, as `usage.cost` in credits, which are US$).
pub fn reports_cost(base_url: &str) -> bool {
    let host = crate::tools::support::net::host(base_url).to_ascii_lowercase();
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
            .map(|t| crate::tools::support::tokens::estimate_text(t))
            .sum::<usize>() as u64,
        cached_tokens: 0,
        cache_write_tokens: 0,
        cost: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sub-agent's clone counts into the same ledger and takes the same fallback; `/model`
    /// makes every fallback available again.
    #[test]
    fn a_clone_shares_the_ledger_and_the_fallback() {
        let config = Config {
            fallback_models: vec!["spare".to_string()],
            ..Config::default()
        };
        let (account, unrelated) = (Account::default(), Account::default());
        let sub_agent = account.clone();
        let reply = Reply {
            usage: Some(Usage {
                prompt_tokens: 10,
                completion_tokens: 2,
                cached_tokens: 0,
                cache_write_tokens: 0,
                cost: None,
            }),
            ..Reply::default()
        };
        sub_agent.count("gpt-4o", &reply, &[]);
        assert_eq!(account.usage().prompt_tokens, 10);
        assert_eq!(unrelated.usage().prompt_tokens, 0);
        assert_eq!(
            sub_agent.switch_to_fallback(&config).as_deref(),
            Some("spare")
        );
        assert_eq!(account.model(&config), "spare");
        assert_eq!(account.switch_to_fallback(&config), None);
        account.forget_fallback();
        assert_eq!(account.model(&config), config.model);
    }

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
