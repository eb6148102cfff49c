//! What a session spent: tokens and dollars per request, summed for the session and per model.
//!
//! After every request the provider accepted the LLM client calls `Ledger::record` with the
//! model that request used, its `Usage` and whether the provider reported it (`Counted`: a reply
//! cut off by Ctrl+C or a broken stream is billed all the same, so it is counted, estimated);
//! `/tokens`, the end of a `-p` run and `--output-format json` read the totals. One ledger serves a whole session: sub-agents, summaries and `/model`
//! switches share it. It does not decide prices (`cost.rs` does) or enforce `--max-cost`
//! (`extras/account.rs` does).

use super::{PriceTable, dollars_for};
use crate::core::message::Usage;

/// Running totals for a session, and the same per model in the order they were first used
/// (shared by sub-agents, summaries and `/model` switches: the caller wraps it in a Mutex).
#[derive(Debug, Clone, Default)]
pub(crate) struct Ledger {
    total: Spend,
    models: Vec<(String, Spend)>,
    /// Requests counted from corecoder's estimate, not the provider's figures.
    unreported: u64,
    cut_off: u64,
}

/// Where a request's figures came from (`pub` only because `Ledger::record`, which takes it, is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counted {
    /// The provider's usage, as it reported it.
    Reported,
    /// corecoder's estimate: the reply carried no usage, or an impossible one.
    Unreported,
    /// corecoder's estimate of what was sent and what arrived: the reply was cut off (Ctrl+C,
    /// a broken stream) before the provider reported usage.
    CutOff,
}

/// What some requests used and cost.
#[derive(Debug, Clone, Default)]
struct Spend {
    usage: Usage,
    /// The dollars of the priced requests.
    dollars: f64,
    priced_requests: u64,
    unpriced_requests: u64,
}

impl Spend {
    fn add(&mut self, usage: &Usage, dollars: Option<f64>) {
        // Saturating: a provider's absurd count must not overflow (a panic in a debug build).
        let sum = |total: &mut u64, more: u64| *total = total.saturating_add(more);
        sum(&mut self.usage.prompt_tokens, usage.prompt_tokens);
        sum(&mut self.usage.completion_tokens, usage.completion_tokens);
        sum(&mut self.usage.cached_tokens, usage.cached_tokens);
        sum(&mut self.usage.cache_write_tokens, usage.cache_write_tokens);
        match dollars {
            Some(dollars) => {
                self.dollars += dollars;
                self.priced_requests += 1;
            }
            None => self.unpriced_requests += 1,
        }
    }

    /// `$0.0421`, `at least $0.0421` (some requests unpriced) or `price unknown`.
    fn dollars_text(&self) -> String {
        match (self.priced_requests, self.unpriced_requests) {
            (_, 0) => format_dollars(self.dollars),
            (0, _) => "price unknown".to_string(),
            _ => format!("at least {}", format_dollars(self.dollars)),
        }
    }
}

impl Ledger {
    /// Account one request at the model it used, priced now: a later `/model` switch never
    /// re-prices it. Unknown price: its tokens count, its dollars are unknown.
    pub(crate) fn record(
        &mut self,
        table: &PriceTable,
        model: &str,
        usage: &Usage,
        counted: Counted,
    ) {
        let dollars = dollars_for(table, model, usage);
        match counted {
            Counted::Reported => {}
            Counted::Unreported => self.unreported += 1,
            Counted::CutOff => self.cut_off += 1,
        }
        self.total.add(usage, dollars);
        match self.models.iter_mut().find(|(known, _)| known == model) {
            Some((_, spend)) => spend.add(usage, dollars),
            None => {
                let mut spend = Spend::default();
                spend.add(usage, dollars);
                self.models.push((model.to_string(), spend));
            }
        }
    }

    pub(crate) fn usage(&self) -> Usage {
        self.total.usage.clone()
    }

    /// How many requests were counted, and how many of them from corecoder's estimate.
    pub(crate) fn requests(&self) -> (u64, u64) {
        let all = self.total.priced_requests + self.total.unpriced_requests;
        (all, self.unreported + self.cut_off)
    }

    /// What the summary adds when some figures are estimates, e.g. `(partly estimated: 2 of 3
    /// requests were cut off before the provider reported usage)`; `None` when none is.
    pub(crate) fn estimates(&self) -> Option<String> {
        let (all, estimated) = self.requests();
        let some = |n: u64| match (n, n == all) {
            (1, true) => "1 request was".to_string(),
            (n, true) => format!("{n} requests were"),
            (1, false) => format!("1 of {all} requests was"),
            (n, false) => format!("{n} of {all} requests were"),
        };
        let mut why = Vec::new();
        if self.cut_off > 0 {
            let cut = some(self.cut_off);
            why.push(format!("{cut} cut off before the provider reported usage"));
        }
        if self.unreported > 0 {
            let without = some(self.unreported);
            why.push(format!("{without} answered without usable token counts"));
        }
        let how = if estimated == all {
            "estimated"
        } else {
            "partly estimated"
        };
        (!why.is_empty()).then(|| format!("({how}: {})", why.join("; ")))
    }

    /// Dollars of the priced requests (a lower bound when `total_dollars` is `None`).
    pub(crate) fn dollars(&self) -> f64 {
        self.total.dollars
    }

    /// What the whole session cost, or `None` when some request's price is unknown.
    pub(crate) fn total_dollars(&self) -> Option<f64> {
        (self.total.unpriced_requests == 0).then_some(self.total.dollars)
    }

    /// Models with at least one request whose price is unknown, in first-use order.
    pub(crate) fn unpriced_models(&self) -> Vec<String> {
        let unpriced = self.models.iter().filter(|(_, s)| s.unpriced_requests > 0);
        unpriced.map(|(model, _)| model.clone()).collect()
    }

    /// One line for `/tokens` and the end of a `-p` run, e.g.
    /// `tokens: 12,345 prompt (2,000 cached, 16% hit rate) + 678 completion · $0.0421` (the
    /// cached part when the provider reported one, the rate rounded down); one model of
    /// unknown price: `… · price unknown for foo-model`; after a `/model` switch every model is
    /// named: `… · at least $0.0011 (foo-model price unknown, gpt-5.5 $0.0011)`.
    pub(crate) fn summary(&self) -> String {
        let usage = &self.total.usage;
        let mut line = format!("tokens: {} prompt", thousands(usage.prompt_tokens));
        if let (true, Some(rate)) = (usage.cached_tokens > 0, cache_hit_rate(usage)) {
            let percent = (rate * 100.0).floor();
            let cached = thousands(usage.cached_tokens);
            line += &format!(" ({cached} cached, {percent}% hit rate)");
        }
        line += &format!(" + {} completion", thousands(usage.completion_tokens));
        match self.models.as_slice() {
            [(model, spend)] if spend.priced_requests == 0 => {
                line += &format!(" · price unknown for {model}");
            }
            [] | [_] => line += &format!(" · {}", self.total.dollars_text()),
            several => {
                let each: Vec<String> = (several.iter())
                    .map(|(model, spend)| format!("{model} {}", spend.dollars_text()))
                    .collect();
                line += &format!(" · {} ({})", self.total.dollars_text(), each.join(", "));
            }
        }
        line
    }
}

/// The share of the prompt tokens the provider served from its cache (cached ÷ prompt), `None`
/// before any prompt token; at most 1 even when a provider reports more cached than prompt.
pub(crate) fn cache_hit_rate(usage: &Usage) -> Option<f64> {
    let prompt = usage.prompt_tokens;
    (prompt > 0).then(|| usage.cached_tokens.min(prompt) as f64 / prompt as f64)
}

/// `12345` → `12,345`.
fn thousands(count: u64) -> String {
    let digits = count.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Cents hide what a short session costs, so small sums keep four decimals.
fn format_dollars(dollars: f64) -> String {
    let decimals = if dollars < 1.0 { 4 } else { 2 };
    format!("${dollars:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extras::cost::request_cost;
    use crate::extras::cost::tests::{close, price, table_with, usage};

    #[test]
    fn ledger_prices_each_request_at_its_own_model() {
        let cheap = price(1.0, 2.0, None);
        let dear = price(10.0, 20.0, None);
        let table = table_with(&[("cheap", cheap), ("dear", dear)]);
        let first = usage(1_000, 0, 100);
        let second = usage(2_000, 500, 300);
        let mut ledger = Ledger::default();
        ledger.record(&table, "cheap", &first, Counted::Reported);
        ledger.record(&table, "openrouter/dear", &second, Counted::Reported);
        let expected = request_cost(&cheap, &first) + request_cost(&dear, &second);
        assert!(close(ledger.dollars(), expected));
        assert_eq!(ledger.usage(), usage(3_000, 500, 400));
        assert!(ledger.unpriced_models().is_empty());
    }

    #[test]
    fn unknown_models_count_tokens_but_not_dollars() {
        let table = table_with(&[("known", price(1.0, 2.0, None))]);
        let mut ledger = Ledger::default();
        ledger.record(&table, "foo-model", &usage(1_000, 0, 10), Counted::Reported);
        ledger.record(&table, "foo-model", &usage(1_000, 0, 10), Counted::Reported);
        assert_eq!(ledger.dollars(), 0.0);
        assert_eq!(ledger.unpriced_models(), vec!["foo-model".to_string()]);
        assert_eq!(
            ledger.summary(),
            "tokens: 2,000 prompt + 20 completion · price unknown for foo-model"
        );
        ledger.record(&table, "known", &usage(1_000_000, 0, 0), Counted::Reported);
        assert_eq!(
            ledger.summary(),
            "tokens: 1,002,000 prompt + 20 completion · at least $1.00 (foo-model price unknown, known $1.00)"
        );
        assert_eq!(ledger.total_dollars(), None);
    }

    /// The `/model` case: both models are named, each with what it spent, in first-use order.
    #[test]
    fn a_session_over_several_models_prices_and_names_each() {
        let table = table_with(&[("a", price(1.0, 2.0, None)), ("b", price(10.0, 20.0, None))]);
        let mut ledger = Ledger::default();
        ledger.record(&table, "a", &usage(1_000_000, 0, 0), Counted::Reported);
        ledger.record(&table, "b", &usage(100_000, 0, 0), Counted::Reported);
        ledger.record(&table, "a", &usage(0, 0, 500_000), Counted::Reported);
        assert_eq!(ledger.total_dollars(), Some(3.0));
        assert_eq!(
            ledger.summary(),
            "tokens: 1,100,000 prompt + 500,000 completion · $3.00 (a $2.00, b $1.00)"
        );
    }

    /// OpenRouter's `usage.cost` wins over the table, and prices a model the table lacks.
    #[test]
    fn a_reported_cost_wins_over_the_table() {
        let table = table_with(&[("known", price(1.0, 2.0, None))]);
        let reported = |cost| Usage {
            cost: Some(cost),
            ..usage(1_000_000, 0, 0)
        };
        let mut ledger = Ledger::default();
        ledger.record(&table, "known", &reported(0.25), Counted::Reported);
        ledger.record(
            &table,
            "vendor/not-in-table",
            &reported(0.5),
            Counted::Reported,
        );
        assert_eq!(ledger.total_dollars(), Some(0.75));
        assert!(ledger.unpriced_models().is_empty());
        // Not a bill: the table's price is used, or the price is unknown.
        ledger.record(&table, "known", &reported(-1.0), Counted::Reported);
        ledger.record(
            &table,
            "vendor/not-in-table",
            &reported(f64::INFINITY),
            Counted::Reported,
        );
        assert!(close(ledger.dollars(), 1.75));
        assert_eq!(ledger.unpriced_models(), vec!["vendor/not-in-table"]);
    }

    #[test]
    fn summary_uses_thousands_separators() {
        let table = table_with(&[("m", price(2.5, 10.0, Some(0.25)))]);
        let mut ledger = Ledger::default();
        ledger.record(&table, "m", &usage(12_345, 2_000, 678), Counted::Reported);
        // 10,345 * 2.5 + 2,000 * 0.25 + 678 * 10 = 33,142.5 millionths of a dollar.
        assert_eq!(
            ledger.summary(),
            "tokens: 12,345 prompt (2,000 cached, 16% hit rate) + 678 completion · $0.0331"
        );
        assert_eq!(
            Ledger::default().summary(),
            "tokens: 0 prompt + 0 completion · $0.0000"
        );
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(u64::MAX), "18,446,744,073,709,551,615");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567_890), "1,234,567,890");
    }

    /// Cached ÷ prompt, rounded down in the line (99.9% is not everything); none before any
    /// prompt; a provider reporting more cached than prompt tokens reads as 100%, not more.
    #[test]
    fn the_hit_rate_is_cached_over_prompt_and_never_above_one() {
        assert_eq!(cache_hit_rate(&usage(0, 0, 0)), None);
        assert_eq!(cache_hit_rate(&usage(1_000, 0, 5)), Some(0.0));
        assert_eq!(cache_hit_rate(&usage(1_000, 250, 5)), Some(0.25));
        assert_eq!(cache_hit_rate(&usage(10, 50, 0)), Some(1.0));
        let table = table_with(&[("m", price(1.0, 1.0, None))]);
        let mut ledger = Ledger::default();
        ledger.record(&table, "m", &usage(1_000, 999, 0), Counted::Reported);
        assert!(ledger.summary().contains("(999 cached, 99% hit rate)"));
        ledger.record(&table, "m", &usage(1_000, 1_000, 0), Counted::Reported);
        assert!(ledger.summary().contains("(1,999 cached, 99% hit rate)"));
    }

    /// A hostile provider's counts near u64::MAX saturate instead of overflowing.
    #[test]
    fn absurd_counts_saturate() {
        let table = table_with(&[("m", price(1.0, 1.0, None))]);
        let mut ledger = Ledger::default();
        ledger.record(
            &table,
            "m",
            &usage(u64::MAX, u64::MAX, u64::MAX),
            Counted::Reported,
        );
        ledger.record(
            &table,
            "m",
            &usage(u64::MAX, u64::MAX, u64::MAX),
            Counted::Reported,
        );
        assert_eq!(ledger.usage(), usage(u64::MAX, u64::MAX, u64::MAX));
        assert!(
            ledger.summary().contains("100% hit rate"),
            "{}",
            ledger.summary()
        );
    }

    /// Which figures are estimates, and why, in the summary and the JSON's counts.
    #[test]
    fn estimated_requests_are_counted_and_said() {
        let table = table_with(&[("m", price(1.0, 1.0, None))]);
        let mut ledger = Ledger::default();
        assert_eq!(ledger.estimates(), None);
        ledger.record(&table, "m", &usage(1_000, 0, 10), Counted::Reported);
        assert_eq!((ledger.requests(), ledger.estimates()), ((1, 0), None));
        ledger.record(&table, "m", &usage(500, 0, 300), Counted::CutOff);
        ledger.record(&table, "m", &usage(500, 0, 300), Counted::CutOff);
        assert_eq!(ledger.requests(), (3, 2));
        let said =
            "(partly estimated: 2 of 3 requests were cut off before the provider reported usage)";
        assert_eq!(ledger.estimates().as_deref(), Some(said));
        ledger.record(&table, "m", &usage(10, 0, 1), Counted::Unreported);
        let said = "(partly estimated: 2 of 4 requests were cut off before the provider reported \
                    usage; 1 of 4 requests was answered without usable token counts)";
        assert_eq!(ledger.estimates().as_deref(), Some(said));

        let mut ledger = Ledger::default();
        ledger.record(&table, "m", &usage(500, 0, 300), Counted::CutOff);
        let said = "(estimated: 1 request was cut off before the provider reported usage)";
        assert_eq!(ledger.estimates().as_deref(), Some(said));
    }
}
