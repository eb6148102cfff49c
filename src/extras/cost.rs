//! Honest cost: what one request costs in US dollars, and what cannot be known.
//!
//! `Ledger::record` (in `cost/ledger.rs`) asks `dollars_for` after every request it counts:
//! the provider's own figure if the reply carried one (OpenRouter's `usage.cost`), else the
//! price of the request's model from the built-in table (`cost/prices.rs`, each row naming its
//! source), overridden or extended by `~/.corecoder/pricing.json`.
//!
//! Tokens read from a cache are billed at the model's cached rate, tokens written to one
//! (Anthropic's prompt caching) at 1.25× input. What it does *not* do: fetch prices from the
//! network, model tiers that depend on prompt length, batch or peak/off-peak discounts, another
//! cache-write rate than 1.25×, or guess a price for a model it does not know. An unknown model
//! is reported as "price unknown", never as free.

pub(crate) mod ledger;
mod prices;

use crate::core::event::Event;
use crate::core::message::{Message, Reply, Usage};
use crate::tools::support::files;
use serde::Deserialize;
use std::path::Path;

/// No request uses more tokens than this (a hundred times the largest window). A count above it,
/// negative or fractional (`tokens::reported` makes those `u64::MAX`) is not believed.
pub(crate) const MOST_TOKENS: u64 = 100_000_000;
/// Nor costs more US$ than this (a provider-reported `usage.cost`).
const MOST_DOLLARS: f64 = 1_000.0;

/// The figures in `usage` no request could have: what the notice names.
pub(crate) fn impossible(usage: &Usage) -> Vec<&'static str> {
    let counts = [
        ("prompt_tokens", usage.prompt_tokens),
        ("completion_tokens", usage.completion_tokens),
        ("cached_tokens", usage.cached_tokens),
        ("cache_write_tokens", usage.cache_write_tokens),
    ];
    let absurd = counts.into_iter().filter(|(_, count)| *count > MOST_TOKENS);
    let mut names: Vec<&str> = absurd.map(|(name, _)| name).collect();
    if usage
        .cost
        .is_some_and(|cost| !(0.0..=MOST_DOLLARS).contains(&cost))
    {
        names.push("cost");
    }
    names
}

/// `usage` with each impossible figure replaced: a count by `estimate`'s (0 for the cache's),
/// a cost by none (the table prices the tokens). Counted and priced, never as given.
pub(crate) fn believable(usage: &Usage, estimate: impl FnOnce() -> Usage) -> Usage {
    if impossible(usage).is_empty() {
        return usage.clone();
    }
    let guess = estimate();
    let pick = |given: u64, guessed: u64| if given > MOST_TOKENS { guessed } else { given };
    let prompt_tokens = pick(usage.prompt_tokens, guess.prompt_tokens);
    Usage {
        prompt_tokens,
        completion_tokens: pick(usage.completion_tokens, guess.completion_tokens),
        cached_tokens: pick(usage.cached_tokens, 0).min(prompt_tokens),
        cache_write_tokens: pick(usage.cache_write_tokens, 0).min(prompt_tokens),
        cost: usage
            .cost
            .filter(|cost| (0.0..=MOST_DOLLARS).contains(cost)),
    }
}

/// The reply's usage if it is believable; else a notice saying which figures were not, and
/// `None` (so the estimate is not calibrated on them either).
pub(crate) fn believed<'a>(
    usage: Option<&'a Usage>,
    on_event: &mut dyn FnMut(Event),
) -> Option<&'a Usage> {
    let names = impossible(usage?);
    if names.is_empty() {
        return usage;
    }
    on_event(Event::Notice(&format!(
        "the provider reported an impossible token count ({}: negative, fractional or over \
         {MOST_TOKENS}); corecoder's estimate is counted and priced instead",
        names.join(", ")
    )));
    None
}

/// US$ per million tokens. `cached_input: None` bills cached tokens at the full input price.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Price {
    pub(crate) input: f64,
    pub(crate) output: f64,
    pub(crate) cached_input: Option<f64>,
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

/// Model names (lower case) and their prices.
#[derive(Debug, Clone)]
pub(crate) struct PriceTable {
    entries: Vec<(String, Price)>,
}

impl PriceTable {
    pub(crate) fn builtin() -> PriceTable {
        let entries =
            prices::BUILTIN_PRICES
                .iter()
                .map(|&(name, input, output, cached_input, _source)| {
                    (name.to_string(), Price::new(input, output, cached_input))
                });
        PriceTable {
            entries: entries.collect(),
        }
    }

    /// builtin + `~/.corecoder/pricing.json` overrides/additions. Missing file: no warning.
    /// Unreadable/invalid file or entry: the table still works, and the warning says what was ignored.
    pub(crate) fn with_overrides(file: &Path) -> (PriceTable, Option<String>) {
        let mut table = PriceTable::builtin();
        let text = match files::read_settings_text(file) {
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

    /// Lookup by the model part of the name: everything up to the last '/' is a provider
    /// (`openrouter/openai/gpt-4o` and OpenRouter's `openai/gpt-4o` → `gpt-4o`), case-insensitive;
    /// exact name first, then the longest table key that the name starts with followed by '-',
    /// ':' or '@' (`gpt-4o-2024-08-06` → `gpt-4o`; OpenRouter's `:free` and `:nitro` variants get
    /// the paid row, an upper bound). Last, dots as dashes: OpenRouter writes
    /// `anthropic/claude-sonnet-4.6` for Anthropic's `claude-sonnet-4-6`.
    pub(crate) fn price(&self, model: &str) -> Option<Price> {
        let bare = model.rsplit('/').next().unwrap_or(model).to_lowercase();
        self.lookup(&bare).or_else(|| match bare.contains('.') {
            true => self.lookup(&bare.replace('.', "-")),
            false => None,
        })
    }

    fn lookup(&self, bare: &str) -> Option<Price> {
        if let Some((_, price)) = self.entries.iter().find(|(name, _)| name == bare) {
            return Some(*price);
        }
        self.entries
            .iter()
            .filter(|(name, _)| is_variant_of(bare, name))
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
/// Tokens written to the cache (Anthropic's) cost a quarter more than input: 1.25×, its rate.
pub(crate) fn request_cost(price: &Price, usage: &Usage) -> f64 {
    // A provider that reports more cached than prompt tokens must not make the cost negative.
    let cached = usage.cached_tokens.min(usage.prompt_tokens);
    let uncached = usage.prompt_tokens - cached;
    let written = usage.cache_write_tokens.min(uncached);
    let cached_rate = price.cached_input.unwrap_or(price.input);
    (uncached as f64 * price.input
        + written as f64 * price.input * 0.25
        + cached as f64 * cached_rate
        + usage.completion_tokens as f64 * price.output)
        / 1e6
}

/// The dollars of one request: the provider's own figure when it reports a sane one
/// (OpenRouter's `usage.cost`), else the table's price, else `None` (unknown).
pub(crate) fn dollars_for(table: &PriceTable, model: &str, usage: &Usage) -> Option<f64> {
    // A negative or infinite figure is not a bill: fall back to the table.
    let reported = usage.cost.filter(|cost| cost.is_finite() && *cost >= 0.0);
    reported.or_else(|| Some(request_cost(&table.price(model)?, usage)))
}

/// What `reply` to `messages` used, by the same per-content-type estimate compaction uses:
/// for a reply without usage, with an impossible one, or cut off before its usage came.
pub(crate) fn estimate(reply: &Reply, messages: &[Message]) -> Usage {
    let arguments: String = reply
        .tool_calls
        .iter()
        .map(|c| c.arguments.as_str())
        .collect();
    let completion = [&reply.text, &reply.reasoning, &arguments];
    Usage {
        prompt_tokens: crate::core::prompt::estimate_messages(messages) as u64,
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

    #[test]
    fn impossible_figures_are_replaced_and_named() {
        let given = Usage {
            prompt_tokens: u64::MAX,
            completion_tokens: 7,
            cached_tokens: 200_000_000,
            cache_write_tokens: 0,
            cost: Some(-1.0),
        };
        assert_eq!(
            impossible(&given),
            ["prompt_tokens", "cached_tokens", "cost"]
        );
        let estimate = || Usage {
            prompt_tokens: 1_000,
            completion_tokens: 99,
            ..Usage::default()
        };
        let believed = believable(&given, estimate);
        assert_eq!(
            believed,
            Usage {
                prompt_tokens: 1_000,
                completion_tokens: 7,
                ..Usage::default()
            }
        );
        let sane = usage(10, 2, 3);
        assert_eq!(believable(&sane, || unreachable!()), sane);
    }

    pub(super) fn price(input: f64, output: f64, cached_input: Option<f64>) -> Price {
        Price::new(input, output, cached_input)
    }

    pub(super) fn usage(prompt_tokens: u64, cached_tokens: u64, completion_tokens: u64) -> Usage {
        Usage {
            prompt_tokens,
            completion_tokens,
            cached_tokens,
            cache_write_tokens: 0,
            cost: None,
        }
    }

    pub(super) fn table_with(rows: &[(&str, Price)]) -> PriceTable {
        let mut table = PriceTable {
            entries: Vec::new(),
        };
        for (name, price) in rows {
            table.set(name, *price);
        }
        table
    }

    pub(super) fn close(a: f64, b: f64) -> bool {
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

    /// Every model CoreCoder 0.8.0 prices (corecoder/llm.py `_PRICING`), and the names a
    /// CoreCoder user brings (issue 17), have a row.
    #[test]
    fn builtin_table_prices_every_model_corecoder_prices() {
        let corecoder = [
            "gpt-5.5",
            "gpt-5.4",
            "gpt-5.4-mini",
            "gpt-5.4-nano",
            "o4-mini",
            "gpt-4.1",
            "gpt-4.1-mini",
            "gpt-4.1-nano",
            "gpt-4o",
            "gpt-4o-mini",
            "deepseek-chat",
            "deepseek-reasoner",
            "claude-opus-4-6",
            "claude-sonnet-4-6",
            "claude-haiku-4-5",
            "qwen3-max",
            "qwen3-plus",
            "qwen-max",
            "kimi-k3",
            "kimi-k2.5",
        ];
        let table = PriceTable::builtin();
        let missing: Vec<&str> = corecoder
            .into_iter()
            .filter(|model| table.price(model).is_none())
            .collect();
        assert!(missing.is_empty(), "no price for {missing:?}");
        assert_eq!(table.price("gpt-4o"), Some(price(2.5, 10.0, Some(1.25))));
        assert_eq!(
            table.price("claude-sonnet-4-6").map(|p| p.output),
            Some(15.0)
        );
        // DeepSeek's documented aliases cost what the model they name costs.
        assert_eq!(table.price("deepseek-chat"), table.price("deepseek-flash"));
        assert_eq!(
            table.price("deepseek-reasoner"),
            table.price("deepseek-flash")
        );
    }

    /// The families the issue names, current and previous, each have rows.
    #[test]
    fn builtin_table_covers_the_models_still_widely_served() {
        let table = PriceTable::builtin();
        for model in [
            "o1",
            "o3",
            "o3-mini",
            "gpt-5",
            "gpt-5-mini",
            "claude-opus-4-5",
            "claude-sonnet-4-5",
            "gemini-2.5-pro",
            "gemini-2.5-flash",
            "gemini-3.1-pro-preview",
            "kimi-k2.6",
            "glm-4.6",
            "glm-4.7",
            "glm-5",
            "qwen3.5-plus",
            "qwen-plus",
            "qwen3-coder-plus",
        ] {
            assert!(table.price(model).is_some(), "{model}");
        }
    }

    /// Each row: one name, lower case (lookup lowercases), finite non-negative rates, a source
    /// that says when it was read, and a cached rate no dearer than the input rate.
    #[test]
    fn builtin_rows_are_unique_sane_and_sourced() {
        let rows = prices::BUILTIN_PRICES;
        for (n, &(name, input, output, cached, source)) in rows.iter().enumerate() {
            assert_eq!(name, name.to_lowercase(), "{name}");
            assert!(rows[..n].iter().all(|row| row.0 != name), "{name} twice");
            let rates = [input, output, cached.unwrap_or(0.0)];
            assert!(rates.iter().all(|r| r.is_finite() && *r >= 0.0), "{name}");
            assert!(cached.unwrap_or(input) <= input, "{name}");
            assert!(source.contains("20"), "{name}: {source} has no date");
        }
        assert!(rows.len() >= 100, "{} rows", rows.len());
    }

    /// OpenRouter's `vendor/model` names match by their model part; its dotted Claude
    /// versions match Anthropic's dashed ones.
    #[test]
    fn openrouter_names_match_by_their_model_part() {
        let table = PriceTable::builtin();
        let pairs = [
            ("openai/gpt-4o", "gpt-4o"),
            ("openai/gpt-4o-mini", "gpt-4o-mini"),
            ("anthropic/claude-sonnet-4.6", "claude-sonnet-4-6"),
            ("anthropic/claude-opus-4.5", "claude-opus-4-5"),
            ("google/gemini-2.5-pro", "gemini-2.5-pro"),
            ("deepseek/deepseek-chat", "deepseek-chat"),
            ("qwen/qwen3-max", "qwen3-max"),
            ("moonshotai/kimi-k2.5", "kimi-k2.5"),
            ("z-ai/glm-4.6", "glm-4.6"),
            ("openai/gpt-4.1:free", "gpt-4.1"),
        ];
        for (openrouter, ours) in pairs {
            assert_eq!(table.price(openrouter), table.price(ours), "{openrouter}");
            assert!(table.price(ours).is_some(), "{ours}");
        }
        assert_eq!(table.price("vendor/unknown-9.9"), None);
    }

    /// Anthropic's cache writes: 1.25× input; its reads at the table's cached rate (0.1×).
    #[test]
    fn cache_writes_cost_a_quarter_more_than_input() {
        let sonnet = price(2.0, 10.0, Some(0.2));
        let wrote = Usage {
            cache_write_tokens: 1_500,
            ..usage(1_800, 0, 64)
        };
        // 300 * 2 + 1500 * 2 * 1.25 + 64 * 10 = 600 + 3750 + 640.
        assert!(close(request_cost(&sonnet, &wrote), 4_990.0 / 1e6));
        let read = usage(1_812, 1_800, 89);
        // 12 * 2 + 1800 * 0.2 + 89 * 10 = 24 + 360 + 890.
        assert!(close(request_cost(&sonnet, &read), 1_274.0 / 1e6));
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
