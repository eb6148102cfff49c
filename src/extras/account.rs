//! What the session spends and what the wire carried: prices, the ledger of every request,
//! `--max-cost`, the fallback model in use, and the `--trace` file.
//!
//! The LLM client reports here through the `Extras` seam it is handed per call: it checks the
//! budget before a request, asks which model to use, counts each reply and traces what it
//! sent and read, and counts a reply that was cut off (Ctrl+C, a broken stream) from what
//! arrived, which the provider bills all the same. `Account::default()` has the
//! built-in prices, an empty ledger, no trace and no fallback taken. Nothing here sends a
//! request or decides to retry one.

use crate::core::config::Config;
use crate::core::consent::Plan;
use crate::core::event::{Error, Event};
use crate::core::message::{Message, Reply, Usage};
use crate::extras::cost::ledger::{Counted, Ledger};
use crate::extras::cost::{self, PriceTable};
use crate::extras::trace::{Tee, Trace};
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::Path;
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
}

impl Default for Account {
    fn default() -> Account {
        Account {
            prices: Arc::new(PriceTable::builtin()),
            ledger: Arc::default(),
            trace: None,
            fallback: Arc::default(),
        }
    }
}

impl Account {
    /// Price requests with this table (the built-in one plus `~/.corecoder/pricing.json`).
    pub(crate) fn with_prices(mut self, prices: PriceTable) -> Account {
        self.prices = Arc::new(prices);
        self
    }

    /// Write every request and stream line to `trace` (the agent adds tool calls).
    pub(crate) fn with_trace(mut self, trace: Trace) -> Account {
        self.trace = Some(Arc::new(trace));
        self
    }

    pub(crate) fn trace(&self) -> Option<&Trace> {
        self.trace.as_deref()
    }

    /// `--trace`: a 200 that was not an event stream, whole (`client/not_a_stream.rs`).
    pub(crate) fn trace_not_a_stream(&self, content_type: &str, body: &str) {
        if let Some(trace) = &self.trace {
            let fields = json!({"content_type": content_type, "body": body});
            trace.record("not_a_stream", fields);
        }
    }

    /// `--trace`: the request about to be sent, whole.
    pub(crate) fn trace_request(&self, url: &str, body: &[Arc<str>]) {
        if let Some(trace) = &self.trace {
            let body = body.concat();
            let body: Value = serde_json::from_str(&body).unwrap_or_else(|_| Value::from(body));
            trace.record("request", json!({"url": url, "body": body}));
        }
    }

    /// `--trace`: a task the user gave, and whether plan mode was on for it (`/plan`), which
    /// `--replay` gives again.
    pub(crate) fn trace_task(&self, task: &str, plan: Plan) {
        if let Some(trace) = &self.trace {
            trace.record("task", json!({"text": task, "plan": plan == Plan::On}));
        }
    }

    /// `--trace`: an answer that was not a 200, with its whole body.
    pub(crate) fn trace_failure(&self, status: u16, body: &str) {
        if let Some(trace) = &self.trace {
            trace.record("http_error", json!({"status": status, "body": body}));
        }
    }

    /// The body reader the SSE parser reads through: every line it takes goes to the trace.
    pub(crate) fn tee<'a>(&'a self, body: &'a mut dyn BufRead) -> Tee<'a> {
        Tee::new(body, self.trace.as_deref())
    }

    /// The model requests go to now: the configured one, or a fallback after failures.
    pub(crate) fn model(&self, config: &Config) -> String {
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
    pub(crate) fn fall_back(
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
    pub(crate) fn forget_fallback(&self) {
        if let Ok(mut fallback) = self.fallback.lock() {
            *fallback = (0, None);
        }
    }

    /// Add this reply's usage to the session totals, estimating when the provider sent none.
    pub(crate) fn count(&self, model: &str, reply: &Reply, messages: &[Message]) {
        let (usage, counted) = match &reply.usage {
            Some(usage) if cost::impossible(usage).is_empty() => (usage.clone(), Counted::Reported),
            Some(usage) => {
                let believable = cost::believable(usage, || cost::estimate(reply, messages));
                (believable, Counted::Unreported)
            }
            None => (cost::estimate(reply, messages), Counted::Unreported),
        };
        self.record(model, &usage, counted);
    }

    /// Keep in `arrived` what `event` carries of a reply as it streams (text, reasoning, the
    /// arguments of calls already complete; not those of a call still streaming), for
    /// `cut_off`; and pass it on.
    pub(crate) fn saw(&self, arrived: &mut String, event: Event, on_event: &mut dyn FnMut(Event)) {
        match event {
            Event::Text(text) | Event::Reasoning(text) => arrived.push_str(text),
            Event::CallReady(call) => arrived.push_str(&call.arguments),
            _ => {}
        }
        on_event(event);
    }

    /// The reply began (the provider answered 200) and was cut off before its usage came:
    /// Ctrl+C, or a stream that broke. The request is billed all the same, so it is counted,
    /// estimated from what was sent (`messages`) and what `arrived`.
    pub(crate) fn cut_off(&self, config: &Config, messages: &[Message], arrived: &str) {
        let reply = Reply {
            text: arrived.to_string(),
            ..Reply::default()
        };
        let usage = cost::estimate(&reply, messages);
        self.record(&self.model(config), &usage, Counted::CutOff);
    }

    fn record(&self, model: &str, usage: &Usage, counted: Counted) {
        if let Ok(mut ledger) = self.ledger.lock() {
            ledger.record(&self.prices, model, usage, counted);
        }
    }

    fn ledger(&self) -> Ledger {
        self.ledger.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Tokens used by every request of this session so far (sub-agents and summaries included).
    pub(crate) fn usage(&self) -> Usage {
        self.ledger().usage()
    }

    /// Dollars spent so far by priced requests (a lower bound when some price is unknown).
    pub(crate) fn dollars(&self) -> f64 {
        self.ledger().dollars()
    }

    /// What the session cost, or `None` when some request's price is unknown.
    pub(crate) fn total_dollars(&self) -> Option<f64> {
        self.ledger().total_dollars()
    }

    /// Models of this session whose price is unknown for some request.
    pub(crate) fn unpriced_models(&self) -> Vec<String> {
        self.ledger().unpriced_models()
    }

    /// How many requests were counted, and how many of them from corecoder's estimate.
    pub(crate) fn requests(&self) -> (u64, u64) {
        self.ledger().requests()
    }

    /// Tokens and dollars so far, as one line (`/tokens`, the end of a `-p` run), saying which
    /// part is estimated and why.
    pub fn cost_summary(&self) -> String {
        let ledger = self.ledger();
        match ledger.estimates() {
            Some(estimates) => format!("{} {estimates}", ledger.summary()),
            None => ledger.summary(),
        }
    }

    /// `--max-cost` at start: refuse to begin a session whose spending cannot be counted.
    /// Every model it may use (the configured one and the fallbacks) needs a price, unless the
    /// provider reports each request's cost (OpenRouter), which is known only after a reply.
    pub(crate) fn check_budget_can_be_kept(
        &self,
        config: &Config,
        file: &Path,
    ) -> Result<(), Error> {
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
    pub(crate) fn check_budget(&self, config: &Config) -> Result<(), Error> {
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
pub(crate) fn reports_cost(base_url: &str) -> bool {
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

    /// What streamed is passed on unchanged and kept; a cut-off reply is counted at the model
    /// in use, from the history sent and what arrived, and said to be an estimate.
    #[test]
    fn a_cut_off_reply_is_counted_from_what_arrived() {
        let (account, mut arrived, mut shown) = (Account::default(), String::new(), 0);
        let mut on_event = |_: Event| shown += 1;
        let words = "word ".repeat(100);
        account.saw(&mut arrived, Event::Text(&words), &mut on_event);
        account.saw(&mut arrived, Event::Reasoning("hmm"), &mut on_event);
        account.saw(&mut arrived, Event::Notice("aside"), &mut on_event);
        assert_eq!((shown, arrived.len()), (3, 503));
        let history = [Message::user(&"a long question ".repeat(50))];
        account.cut_off(&Config::default(), &history, &arrived);
        let usage = account.usage();
        assert!(usage.prompt_tokens > 100, "{usage:?}");
        assert!(usage.completion_tokens > 100, "{usage:?}");
        assert_eq!(account.requests(), (1, 1));
        assert!(account.dollars() > 0.0);
        let said = "(estimated: 1 request was cut off before the provider reported usage)";
        assert!(account.cost_summary().ends_with(said));
    }
}
