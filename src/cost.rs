//! Honest cost: what the session's requests cost in US dollars, and what it cannot know.
//!
//! After every completed request the LLM client calls `Ledger::record` with the model that
//! request used and its `Usage`; `/tokens` and the end of a `-p` run print `Ledger::summary`.
//! Prices come from a built-in table, overridden or extended by `~/.corecoder/pricing.json`.
//!
//! What it does *not* do: fetch prices from the network, model tiers that depend on prompt
//! length, batch or peak/off-peak discounts, cache-write surcharges, or guess a price for a model
//! it does not know. An unknown model is reported as "price unknown", never as free.

use crate::sse::Usage;
use serde::Deserialize;
use std::path::Path;

/// US$ per million tokens. `cached_input: None` bills cached tokens at the full input price.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cached_input: Option<f64>,
}

impl Price {
    fn new(input: f64, output: f64, cached_input: Option<f64>) -> Price {
        Price {
            input,
            output,
            cached_input,
        }
    }
}

// Built-in prices, (model, input, output, cached input) in US$ per million tokens, standard tier,
// shortest-context band. Taken on 2026-11-29 from the stored copies of these pages (the date
// after a source is when that copy, or the page quoting it, says it was read):
// - OpenAI: developers.openai.com/api/docs/models/<model> (gpt-6.2-sol, gpt-6-luna,
//   gpt-5.6-luna) and /api/docs/pricing as quoted by the LiteLLM GPT-6 Astra and GPT-6.1 Sol
//   posts (2026-09/10) and TokenMix/morphllm (2026-06) for the GPT-5.5 and GPT-5.4 rows.
// - Anthropic: platform.claude.com/docs/en/about-claude/pricing and the model overview pages;
//   Sonnet 5.5's cache-read cut to $0.10 (2026-10-07) as reported by claudit v1.9.2.
// - DeepSeek: api-docs.deepseek.com/quick_start/pricing (2026-10-27), PEAK rates; off-peak is
//   half, so these are an upper bound.
// - Moonshot: platform.kimi.ai/docs/pricing/chat-k3 (2026-07); kimi-k3.1-pro as relayed by
//   docs.apiyi.com, which states it matches the official price (2026-10-25).
// - Zhipu: Z.AI pay-per-use rates as quoted by docs.wolffi.sh and Codeep v2.20.0 (2026-08).
// - MiniMax: platform.minimax.io/docs/guides/pricing-paygo (first band, up to 512K, 2026-09-11).
// - Qwen: qwen3.7-plus as quoted by apidog.com (2026-06); no cache-hit price was found, so its
//   cached tokens are billed at the full input price.
// Prices change often: `~/.corecoder/pricing.json` overrides any row and adds new models.
const BUILTIN_PRICES: &[(&str, f64, f64, Option<f64>)] = &[
    ("gpt-6.2-sol", 2.00, 10.00, Some(0.10)),
    ("gpt-6.1-sol", 2.00, 10.00, Some(0.10)),
    ("gpt-6-sol", 2.00, 10.00, Some(0.20)),
    ("gpt-6-astra", 10.00, 50.00, Some(1.00)),
    ("gpt-6-luna", 0.10, 0.50, Some(0.01)),
    ("gpt-5.6-terra", 2.00, 12.00, Some(0.20)),
    ("gpt-5.6-luna", 0.20, 1.20, Some(0.02)),
    ("gpt-5.5", 5.00, 30.00, Some(0.50)),
    ("gpt-5.5-pro", 30.00, 180.00, None),
    ("gpt-5.4", 2.50, 15.00, Some(0.25)),
    ("gpt-5.4-pro", 30.00, 180.00, None),
    ("gpt-5.4-mini", 0.75, 4.50, Some(0.075)),
    ("gpt-5.4-nano", 0.20, 1.25, Some(0.02)),
    ("claude-fable-5-1", 10.00, 50.00, Some(0.25)),
    ("claude-opus-5-5", 4.00, 20.00, Some(0.20)),
    ("claude-opus-5", 5.00, 25.00, Some(0.50)),
    ("claude-sonnet-5-5", 2.00, 10.00, Some(0.10)),
    ("claude-sonnet-5", 2.00, 10.00, Some(0.20)),
    ("claude-haiku-5-5", 0.10, 0.50, Some(0.01)),
    ("claude-haiku-4-5", 1.00, 5.00, Some(0.10)),
    ("deepseek-flash", 0.30, 1.20, Some(0.006)),
    ("deepseek-v4-flash", 0.30, 1.20, Some(0.006)),
    ("deepseek-v4-pro", 1.32, 3.96, Some(0.044)),
    ("kimi-k3", 3.00, 15.00, Some(0.30)),
    ("kimi-k3.1-pro", 2.00, 10.00, Some(0.20)),
    ("glm-5.3", 1.40, 4.40, Some(0.26)),
    ("glm-5.2", 1.40, 4.40, Some(0.26)),
    ("glm-5.1", 1.40, 4.40, Some(0.26)),
    ("glm-5", 1.00, 3.20, Some(0.20)),
    ("glm-5-turbo", 1.20, 4.00, Some(0.24)),
    ("minimax-m3", 0.30, 1.20, Some(0.06)),
    ("minimax-m2.7", 0.30, 1.20, Some(0.06)),
    ("minimax-m2.7-highspeed", 0.60, 2.40, Some(0.06)),
    ("qwen3.7-plus", 0.40, 1.60, None),
];

/// Model names (lower case) and their prices.
#[derive(Debug, Clone)]
pub struct PriceTable {
    entries: Vec<(String, Price)>,
}

impl PriceTable {
    pub fn builtin() -> PriceTable {
        let entries = BUILTIN_PRICES
            .iter()
            .map(|&(name, input, output, cached_input)| {
                (name.to_string(), Price::new(input, output, cached_input))
            });
        PriceTable {
            entries: entries.collect(),
        }
    }

    /// builtin + `~/.corecoder/pricing.json` overrides/additions. Missing file: no warning.
    /// Unreadable/invalid file or entry: the table still works, and the warning says what was ignored.
    pub fn with_overrides(file: &Path) -> (PriceTable, Option<String>) {
        let mut table = PriceTable::builtin();
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return (table, None),
            Err(err) => {
                let warning = format!(
                    "{}: unreadable ({err}); using built-in prices",
                    file.display()
                );
                return (table, Some(warning));
            }
        };
        let map: serde_json::Map<String, serde_json::Value> = match serde_json::from_str(&text) {
            Ok(map) => map,
            Err(err) => {
                let warning = format!(
                    "{}: not a JSON object of model prices ({err}); using built-in prices",
                    file.display()
                );
                return (table, Some(warning));
            }
        };
        let mut ignored = Vec::new();
        for (name, value) in map {
            match parse_entry(value) {
                Some(price) => table.set(&name, price),
                None => ignored.push(format!("\"{name}\"")),
            }
        }
        let warning = (!ignored.is_empty()).then(|| {
            format!(
                "{}: ignored {} (expected [input, output] or {{\"input\": …, \"output\": …, \"cached_input\": …}}, US$ per million tokens)",
                file.display(),
                ignored.join(", ")
            )
        });
        (table, warning)
    }

    /// Lookup: strip a `provider/` prefix (everything up to the last '/', e.g. `openrouter/openai/gpt-4o` → `gpt-4o`),
    /// case-insensitive; exact name first, then the longest table key that the model name starts with
    /// followed by '-' or ':' or '@' (so `gpt-4o-2024-08-06` → `gpt-4o`, but `gpt-4o-mini` must match its own entry `gpt-4o-mini` first).
    pub fn price(&self, model: &str) -> Option<Price> {
        let bare = model.rsplit('/').next().unwrap_or(model).to_lowercase();
        if let Some((_, price)) = self.entries.iter().find(|(name, _)| *name == bare) {
            return Some(*price);
        }
        self.entries
            .iter()
            .filter(|(name, _)| is_variant_of(&bare, name))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, price)| *price)
    }

    /// Replaces the entry with the same (case-insensitive) name, or adds one.
    fn set(&mut self, name: &str, price: Price) {
        let name = name.to_lowercase();
        match self.entries.iter_mut().find(|(known, _)| *known == name) {
            Some(entry) => entry.1 = price,
            None => self.entries.push((name, price)),
        }
    }
}

/// `gpt-4o-2024-08-06`, `qwen3-max:latest` and `claude-opus-5@20260724` are variants of the
/// key before the separator; `gpt-4oo` is not a variant of `gpt-4o`.
fn is_variant_of(model: &str, key: &str) -> bool {
    model
        .strip_prefix(key)
        .and_then(|rest| rest.chars().next())
        .is_some_and(|separator| matches!(separator, '-' | ':' | '@'))
}

/// The two shapes pricing.json accepts for one model.
#[derive(Deserialize)]
#[serde(untagged)]
enum PriceEntry {
    Pair(f64, f64),
    Full(FullEntry),
}

// deny_unknown_fields: a typo such as "cache_input" must be reported, not silently dropped.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FullEntry {
    input: f64,
    output: f64,
    cached_input: Option<f64>,
}

fn parse_entry(value: serde_json::Value) -> Option<Price> {
    let (input, output, cached_input) = match serde_json::from_value(value).ok()? {
        PriceEntry::Pair(input, output) => (input, output, None),
        PriceEntry::Full(full) => (full.input, full.output, full.cached_input),
    };
    let price = Price::new(input, output, cached_input);
    let rates = [price.input, price.output, price.cached_input.unwrap_or(0.0)];
    rates
        .iter()
        .all(|rate| rate.is_finite() && *rate >= 0.0)
        .then_some(price)
}

/// Dollars for one request: (prompt - cached) * input + cached * (cached_input or input) + completion * output, / 1e6.
pub fn request_cost(price: &Price, usage: &Usage) -> f64 {
    // A provider that reports more cached than prompt tokens must not make the cost negative.
    let cached = usage.cached_tokens.min(usage.prompt_tokens);
    let uncached = usage.prompt_tokens - cached;
    let cached_rate = price.cached_input.unwrap_or(price.input);
    (uncached as f64 * price.input
        + cached as f64 * cached_rate
        + usage.completion_tokens as f64 * price.output)
        / 1e6
}

/// Running totals for a session (shared by sub-agents and summary calls: the caller wraps it in a Mutex).
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    usage: Usage,
    dollars: f64,
    priced_requests: u64,
    unpriced_models: Vec<String>,
}

impl Ledger {
    /// Account one request at the model it used. Unknown model: tokens count, dollars don't, and the model is remembered as unpriced.
    pub fn record(&mut self, table: &PriceTable, model: &str, usage: &Usage) {
        self.usage.prompt_tokens += usage.prompt_tokens;
        self.usage.completion_tokens += usage.completion_tokens;
        self.usage.cached_tokens += usage.cached_tokens;
        // Priced now, at this request's model: a later model switch never re-prices it.
        match table.price(model) {
            Some(price) => {
                self.dollars += request_cost(&price, usage);
                self.priced_requests += 1;
            }
            None if !self.unpriced_models.iter().any(|known| known == model) => {
                self.unpriced_models.push(model.to_string());
            }
            None => {}
        }
    }

    pub fn usage(&self) -> Usage {
        self.usage.clone()
    }

    pub fn dollars(&self) -> f64 {
        self.dollars
    }

    pub fn unpriced_models(&self) -> Vec<String> {
        self.unpriced_models.clone()
    }

    /// One line for `/tokens` and the end of a `-p` run, e.g.
    /// `tokens: 12,345 prompt (2,000 cached) + 678 completion · $0.0421` and, when some requests were
    /// for unknown models, `· price unknown for foo-model` (if ALL were unknown: no dollar figure, only the note).
    pub fn summary(&self) -> String {
        let mut line = format!("tokens: {} prompt", thousands(self.usage.prompt_tokens));
        if self.usage.cached_tokens > 0 {
            line += &format!(" ({} cached)", thousands(self.usage.cached_tokens));
        }
        line += &format!(" + {} completion", thousands(self.usage.completion_tokens));
        if self.priced_requests > 0 || self.unpriced_models.is_empty() {
            line += &format!(" · {}", format_dollars(self.dollars));
        }
        if !self.unpriced_models.is_empty() {
            line += &format!(" · price unknown for {}", self.unpriced_models.join(", "));
        }
        line
    }
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

    fn price(input: f64, output: f64, cached_input: Option<f64>) -> Price {
        Price::new(input, output, cached_input)
    }

    fn usage(prompt_tokens: u64, cached_tokens: u64, completion_tokens: u64) -> Usage {
        Usage {
            prompt_tokens,
            completion_tokens,
            cached_tokens,
        }
    }

    fn table_with(rows: &[(&str, Price)]) -> PriceTable {
        let mut table = PriceTable {
            entries: Vec::new(),
        };
        for (name, price) in rows {
            table.set(name, *price);
        }
        table
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// A fresh directory under the system temp dir, unique per test.
    fn temp_dir(test: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("corecoder-cost-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        dir
    }

    #[test]
    fn lookup_strips_provider_prefixes_and_ignores_case() {
        let gpt4o = price(2.5, 10.0, Some(1.25));
        let table = table_with(&[("gpt-4o", gpt4o)]);
        assert_eq!(table.price("openrouter/openai/gpt-4o"), Some(gpt4o));
        assert_eq!(table.price("openai/GPT-4o"), Some(gpt4o));
        assert_eq!(table.price("GPT-4O"), Some(gpt4o));
    }

    #[test]
    fn lookup_finds_dated_and_tagged_variants() {
        let gpt4o = price(2.5, 10.0, Some(1.25));
        let table = table_with(&[("gpt-4o", gpt4o)]);
        assert_eq!(table.price("gpt-4o-2024-08-06"), Some(gpt4o));
        assert_eq!(table.price("gpt-4o:latest"), Some(gpt4o));
        assert_eq!(table.price("gpt-4o@2024"), Some(gpt4o));
        assert_eq!(table.price("gpt-4oo"), None);
        assert_eq!(table.price("gpt-4"), None);
    }

    #[test]
    fn lookup_prefers_the_exact_entry_then_the_longest_prefix() {
        let gpt4o = price(2.5, 10.0, None);
        let mini = price(0.15, 0.6, None);
        // The short key comes first on purpose: order in the table must not matter.
        let table = table_with(&[("gpt-4o", gpt4o), ("gpt-4o-mini", mini)]);
        assert_eq!(table.price("gpt-4o-mini"), Some(mini));
        assert_eq!(table.price("gpt-4o-mini-2024-07-18"), Some(mini));
        assert_eq!(table.price("gpt-4o-2024-08-06"), Some(gpt4o));
    }

    #[test]
    fn builtin_table_prices_the_default_model_and_its_relatives() {
        let table = PriceTable::builtin();
        assert_eq!(table.price("gpt-5.5"), Some(price(5.0, 30.0, Some(0.5))));
        assert_eq!(table.price("gpt-5.5-pro").map(|p| p.input), Some(30.0));
        assert_eq!(
            table.price("gpt-5.5-2026-04-23").map(|p| p.input),
            Some(5.0)
        );
        assert_eq!(table.price("claude-opus-5-5").map(|p| p.input), Some(4.0));
        assert_eq!(table.price("claude-opus-5").map(|p| p.input), Some(5.0));
        assert_eq!(table.price("MiniMax-M3").map(|p| p.output), Some(1.2));
        assert_eq!(table.price("no-such-model"), None);
    }

    #[test]
    fn request_cost_bills_cached_tokens_at_the_cached_rate() {
        let with_cache = price(2.0, 10.0, Some(0.2));
        // 800 uncached * 2 + 200 cached * 0.2 + 100 completion * 10 = 1600 + 40 + 1000.
        assert!(close(
            request_cost(&with_cache, &usage(1_000, 200, 100)),
            2_640.0 / 1e6
        ));
        let without_cache = price(2.0, 10.0, None);
        assert!(close(
            request_cost(&without_cache, &usage(1_000, 200, 100)),
            3_000.0 / 1e6
        ));
        // More cached than prompt tokens (a confused provider) never goes negative.
        assert!(request_cost(&with_cache, &usage(10, 50, 0)) >= 0.0);
    }

    #[test]
    fn ledger_prices_each_request_at_its_own_model() {
        let cheap = price(1.0, 2.0, None);
        let dear = price(10.0, 20.0, None);
        let table = table_with(&[("cheap", cheap), ("dear", dear)]);
        let first = usage(1_000, 0, 100);
        let second = usage(2_000, 500, 300);
        let mut ledger = Ledger::default();
        ledger.record(&table, "cheap", &first);
        ledger.record(&table, "openrouter/dear", &second);
        let expected = request_cost(&cheap, &first) + request_cost(&dear, &second);
        assert!(close(ledger.dollars(), expected));
        assert_eq!(ledger.usage(), usage(3_000, 500, 400));
        assert!(ledger.unpriced_models().is_empty());
    }

    #[test]
    fn unknown_models_count_tokens_but_not_dollars() {
        let table = table_with(&[("known", price(1.0, 2.0, None))]);
        let mut ledger = Ledger::default();
        ledger.record(&table, "foo-model", &usage(1_000, 0, 10));
        ledger.record(&table, "foo-model", &usage(1_000, 0, 10));
        assert_eq!(ledger.dollars(), 0.0);
        assert_eq!(ledger.unpriced_models(), vec!["foo-model".to_string()]);
        assert_eq!(
            ledger.summary(),
            "tokens: 2,000 prompt + 20 completion · price unknown for foo-model"
        );
        ledger.record(&table, "known", &usage(1_000_000, 0, 0));
        assert_eq!(
            ledger.summary(),
            "tokens: 1,002,000 prompt + 20 completion · $1.00 · price unknown for foo-model"
        );
    }

    #[test]
    fn summary_uses_thousands_separators() {
        let table = table_with(&[("m", price(2.5, 10.0, Some(0.25)))]);
        let mut ledger = Ledger::default();
        ledger.record(&table, "m", &usage(12_345, 2_000, 678));
        // 10,345 * 2.5 + 2,000 * 0.25 + 678 * 10 = 33,142.5 millionths of a dollar.
        assert_eq!(
            ledger.summary(),
            "tokens: 12,345 prompt (2,000 cached) + 678 completion · $0.0331"
        );
        assert_eq!(
            Ledger::default().summary(),
            "tokens: 0 prompt + 0 completion · $0.0000"
        );
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567_890), "1,234,567,890");
    }

    #[test]
    fn pricing_json_accepts_both_shapes_and_overrides_builtin_rows() {
        let dir = temp_dir("shapes");
        let file = dir.join("pricing.json");
        let json = r#"{
            "my-local-model": [0.5, 1.5],
            "GPT-5.5": {"input": 4.0, "output": 24.0, "cached_input": 0.4},
            "other": {"input": 1.0, "output": 2.0}
        }"#;
        std::fs::write(&file, json).expect("write pricing.json");
        let (table, warning) = PriceTable::with_overrides(&file);
        assert_eq!(warning, None);
        assert_eq!(table.price("my-local-model"), Some(price(0.5, 1.5, None)));
        assert_eq!(table.price("gpt-5.5"), Some(price(4.0, 24.0, Some(0.4))));
        assert_eq!(table.price("other"), Some(price(1.0, 2.0, None)));
        // Rows the file does not mention keep their built-in price.
        assert_eq!(
            table.price("gpt-5.4"),
            PriceTable::builtin().price("gpt-5.4")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn pricing_json_problems_leave_a_working_table_and_a_warning() {
        let dir = temp_dir("problems");
        let missing = dir.join("missing.json");
        let (table, warning) = PriceTable::with_overrides(&missing);
        assert_eq!(warning, None);
        assert!(table.price("gpt-5.5").is_some());

        let broken = dir.join("broken.json");
        std::fs::write(&broken, "{ not json").expect("write broken file");
        let (table, warning) = PriceTable::with_overrides(&broken);
        assert!(table.price("gpt-5.5").is_some());
        let warning = warning.expect("a warning for invalid JSON");
        assert!(warning.contains("broken.json"), "{warning}");
        assert!(warning.contains("built-in prices"), "{warning}");

        let partly = dir.join("partly.json");
        let json = r#"{"good": [1, 2], "typo": {"input": 1, "output": 2, "cache_input": 0.1},
                       "negative": [-1, 2], "short": [1]}"#;
        std::fs::write(&partly, json).expect("write partly valid file");
        let (table, warning) = PriceTable::with_overrides(&partly);
        assert_eq!(table.price("good"), Some(price(1.0, 2.0, None)));
        assert_eq!(table.price("typo"), None);
        let warning = warning.expect("a warning for bad entries");
        for name in ["\"typo\"", "\"negative\"", "\"short\""] {
            assert!(warning.contains(name), "{warning}");
        }
        assert!(!warning.contains("\"good\""), "{warning}");

        // A directory cannot be read as a file: unreadable, not missing.
        let (table, warning) = PriceTable::with_overrides(&dir);
        assert!(table.price("gpt-5.5").is_some());
        assert!(warning.is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
