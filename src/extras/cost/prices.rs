//! The built-in price table: one row per model, each naming the source it was taken from.
//!
//! `PriceTable::builtin` (in `cost.rs`) reads these rows once when a session starts; lookup,
//! `~/.corecoder/pricing.json` overrides and the ledger live there. This file is data only: it
//! does not fetch anything, and a price here is never newer than the date of its source.
//!
//! Prices are US$ per million tokens: (model, input, output, cached input, source), standard
//! tier, shortest-context band (Gemini Pro, Qwen and MiniMax charge more for long prompts), no
//! batch or off-peak discount. `None` for cached input bills cached tokens at the input price,
//! an upper bound. Prices change often: `~/.corecoder/pricing.json` overrides any row.

/// One row: model (lower case), input, output, cached input, source.
pub(super) type Row = (&'static str, f64, f64, Option<f64>, &'static str);

// The sources, each with the date its copy was read (or the date the copy says it was written).
/// OpenAI's model and pricing pages, as stored and as quoted by the LiteLLM GPT-6 posts
/// (2026-09/10) and TokenMix/morphllm (2026-06).
pub(super) const OPENAI: &str = "developers.openai.com/api/docs/pricing, read 2026-11-29";
/// Anthropic's pricing page and model overviews; Sonnet 5.5's cache-read cut (2026-10-07)
/// as reported by claudit v1.9.2.
pub(super) const ANTHROPIC: &str =
    "platform.claude.com/docs/en/about-claude/pricing, read 2026-11-29";
/// DeepSeek's pricing page, PEAK rates (off-peak is half, so these are an upper bound).
pub(super) const DEEPSEEK: &str = "api-docs.deepseek.com/quick_start/pricing, 2026-10-27";
/// `deepseek-chat` and `deepseek-reasoner`: DeepSeek's pricing page documented them as the
/// non-thinking and thinking modes of `deepseek-v4-flash` (the names were retired on
/// 2026-07-24); its current page bills `deepseek-v4-flash` at `deepseek-flash`'s price. So a
/// server that still takes the old names is priced as `deepseek-flash`, not at the 2025 V3/R1
/// prices CoreCoder 0.8 still lists ($0.27/$1.10 and $0.55/$2.19).
pub(super) const DEEPSEEK_ALIAS: &str =
    "api-docs.deepseek.com/quick_start/pricing footnote (1), 2026-05 and 2026-10-27";
pub(super) const MOONSHOT: &str =
    "platform.kimi.ai/docs/pricing/chat-k3, 2026-07 (k3.1-pro via docs.apiyi.com, 2026-10-25)";
pub(super) const ZAI: &str =
    "Z.AI pay-per-use rates via docs.wolffi.sh and Codeep v2.20.0, 2026-08";
pub(super) const MINIMAX: &str =
    "platform.minimax.io/docs/guides/pricing-paygo, first band, 2026-09-11";
/// LiteLLM's `model_prices_and_context_window.json` as shipped in the `litellm` 1.110.2 wheel on
/// PyPI (the same file as BerriAI/litellm's); the first band of a tiered price.
pub(super) const LITELLM: &str =
    "LiteLLM 1.110.2 model_prices_and_context_window.json, read 2026-12-01";
/// CoreCoder 0.8.0's own `_PRICING` (corecoder/llm.py in the PyPI wheel; its rows were last
/// changed 2026-04-07). Used only where no other source lists the model.
pub(super) const CORECODER: &str = "CoreCoder 0.8.0 corecoder/llm.py, rows of 2026-04-07";

pub(super) const BUILTIN_PRICES: &[Row] = &[
    // OpenAI, current.
    ("gpt-6.2-sol", 2.00, 10.00, Some(0.10), OPENAI),
    ("gpt-6.1-sol", 2.00, 10.00, Some(0.10), OPENAI),
    ("gpt-6-sol", 2.00, 10.00, Some(0.20), OPENAI),
    ("gpt-6-astra", 10.00, 50.00, Some(1.00), OPENAI),
    ("gpt-6-luna", 0.10, 0.50, Some(0.01), OPENAI),
    ("gpt-5.6-terra", 2.00, 12.00, Some(0.20), OPENAI),
    ("gpt-5.6-luna", 0.20, 1.20, Some(0.02), OPENAI),
    ("gpt-5.5", 5.00, 30.00, Some(0.50), OPENAI),
    ("gpt-5.5-pro", 30.00, 180.00, None, OPENAI),
    ("gpt-5.4", 2.50, 15.00, Some(0.25), OPENAI),
    ("gpt-5.4-pro", 30.00, 180.00, None, OPENAI),
    ("gpt-5.4-mini", 0.75, 4.50, Some(0.075), OPENAI),
    ("gpt-5.4-nano", 0.20, 1.25, Some(0.02), OPENAI),
    // OpenAI, earlier generations still served.
    ("gpt-5.3-codex", 1.75, 14.00, Some(0.175), LITELLM),
    ("gpt-5.2", 1.75, 14.00, Some(0.175), LITELLM),
    ("gpt-5.2-pro", 21.00, 168.00, None, LITELLM),
    ("gpt-5.1", 1.25, 10.00, Some(0.125), LITELLM),
    ("gpt-5", 1.25, 10.00, Some(0.125), LITELLM),
    ("gpt-5-pro", 15.00, 120.00, None, LITELLM),
    ("gpt-5-mini", 0.25, 2.00, Some(0.025), LITELLM),
    ("gpt-5-nano", 0.05, 0.40, Some(0.005), LITELLM),
    ("gpt-4.1", 2.00, 8.00, Some(0.50), LITELLM),
    ("gpt-4.1-mini", 0.40, 1.60, Some(0.10), LITELLM),
    ("gpt-4.1-nano", 0.10, 0.40, Some(0.025), LITELLM),
    ("gpt-4o", 2.50, 10.00, Some(1.25), LITELLM),
    ("gpt-4o-mini", 0.15, 0.60, Some(0.075), LITELLM),
    ("o1", 15.00, 60.00, Some(7.50), LITELLM),
    ("o1-pro", 150.00, 600.00, None, LITELLM),
    ("o3", 2.00, 8.00, Some(0.50), LITELLM),
    ("o3-pro", 20.00, 80.00, None, LITELLM),
    ("o3-mini", 1.10, 4.40, Some(0.55), LITELLM),
    ("o4-mini", 1.10, 4.40, Some(0.275), LITELLM),
    // Anthropic, current.
    ("claude-fable-5-1", 10.00, 50.00, Some(0.25), ANTHROPIC),
    ("claude-opus-5-5", 4.00, 20.00, Some(0.20), ANTHROPIC),
    ("claude-opus-5", 5.00, 25.00, Some(0.50), ANTHROPIC),
    ("claude-sonnet-5-5", 2.00, 10.00, Some(0.10), ANTHROPIC),
    ("claude-sonnet-5", 2.00, 10.00, Some(0.20), ANTHROPIC),
    ("claude-haiku-5-5", 0.10, 0.50, Some(0.01), ANTHROPIC),
    ("claude-haiku-4-5", 1.00, 5.00, Some(0.10), ANTHROPIC),
    // Anthropic, Claude 4.x.
    ("claude-opus-4-8", 5.00, 25.00, Some(0.50), LITELLM),
    ("claude-opus-4-7", 5.00, 25.00, Some(0.50), LITELLM),
    ("claude-opus-4-6", 5.00, 25.00, Some(0.50), LITELLM),
    ("claude-opus-4-5", 5.00, 25.00, Some(0.50), LITELLM),
    ("claude-sonnet-4-6", 3.00, 15.00, Some(0.30), LITELLM),
    ("claude-sonnet-4-5", 3.00, 15.00, Some(0.30), LITELLM),
    // Google Gemini, as its OpenAI-compatible endpoint names them (AI Studio prices).
    ("gemini-4-argon", 2.00, 10.00, Some(0.10), LITELLM),
    ("gemini-4-hydrogen", 1.50, 7.50, Some(0.075), LITELLM),
    ("gemini-pro-latest", 2.00, 12.00, Some(0.20), LITELLM),
    ("gemini-flash-latest", 0.75, 3.75, Some(0.075), LITELLM),
    ("gemini-flash-lite-latest", 0.30, 2.50, Some(0.03), LITELLM),
    ("gemini-3.8-flash", 0.75, 3.75, Some(0.075), LITELLM),
    ("gemini-3.7-flash", 0.75, 3.75, Some(0.075), LITELLM),
    ("gemini-3.6-flash", 0.75, 3.75, Some(0.075), LITELLM),
    ("gemini-3.5-flash", 1.50, 9.00, Some(0.15), LITELLM),
    ("gemini-3.5-flash-lite", 0.30, 2.50, Some(0.03), LITELLM),
    ("gemini-3.1-pro-preview", 2.00, 12.00, Some(0.20), LITELLM),
    ("gemini-3.1-flash-lite", 0.25, 1.50, Some(0.025), LITELLM),
    ("gemini-3-flash-preview", 0.50, 3.00, Some(0.05), LITELLM),
    ("gemini-2.5-pro", 1.25, 10.00, Some(0.125), LITELLM),
    ("gemini-2.5-flash", 0.30, 2.50, Some(0.03), LITELLM),
    ("gemini-2.5-flash-lite", 0.10, 0.40, Some(0.01), LITELLM),
    // DeepSeek.
    ("deepseek-flash", 0.30, 1.20, Some(0.006), DEEPSEEK),
    ("deepseek-v4-flash", 0.30, 1.20, Some(0.006), DEEPSEEK),
    ("deepseek-v4-pro", 1.32, 3.96, Some(0.044), DEEPSEEK),
    ("deepseek-chat", 0.30, 1.20, Some(0.006), DEEPSEEK_ALIAS),
    ("deepseek-reasoner", 0.30, 1.20, Some(0.006), DEEPSEEK_ALIAS),
    // Moonshot Kimi.
    ("kimi-k3", 3.00, 15.00, Some(0.30), MOONSHOT),
    ("kimi-k3.1-pro", 2.00, 10.00, Some(0.20), MOONSHOT),
    ("kimi-k3.1-pro-highspeed", 4.00, 20.00, Some(0.20), LITELLM),
    ("kimi-k2.7-code", 0.95, 4.00, Some(0.19), LITELLM),
    ("kimi-k2.6", 0.95, 4.00, Some(0.16), LITELLM),
    ("kimi-k2.5", 0.60, 3.00, Some(0.10), LITELLM),
    // Zhipu GLM.
    ("glm-5.3", 1.40, 4.40, Some(0.26), ZAI),
    ("glm-5.3-flash", 0.15, 0.50, Some(0.03), LITELLM),
    ("glm-5.2", 1.40, 4.40, Some(0.26), ZAI),
    ("glm-5.1", 1.40, 4.40, Some(0.26), ZAI),
    ("glm-5", 1.00, 3.20, Some(0.20), ZAI),
    ("glm-5-turbo", 1.20, 4.00, Some(0.24), ZAI),
    ("glm-5-code", 1.20, 5.00, Some(0.30), LITELLM),
    ("glm-4.7", 0.60, 2.20, Some(0.11), LITELLM),
    ("glm-4.7-flash", 0.00, 0.00, Some(0.00), LITELLM),
    ("glm-4.6", 0.60, 2.20, Some(0.11), LITELLM),
    ("glm-4.5", 0.60, 2.20, None, LITELLM),
    ("glm-4.5-air", 0.20, 1.10, None, LITELLM),
    // MiniMax.
    ("minimax-m3", 0.30, 1.20, Some(0.06), MINIMAX),
    ("minimax-m2.7", 0.30, 1.20, Some(0.06), MINIMAX),
    ("minimax-m2.7-highspeed", 0.60, 2.40, Some(0.06), MINIMAX),
    ("minimax-m2.5", 0.30, 1.20, Some(0.03), LITELLM),
    // Alibaba Qwen (Model Studio international; the first band of a tiered price). CoreCoder
    // 0.8 lists qwen3-max and qwen-max at $0.78/$3.90, which no Model Studio page we found shows.
    ("qwen3.8-max", 2.00, 6.00, Some(0.25), LITELLM),
    ("qwen3.8-flash", 0.15, 0.47, Some(0.016), LITELLM),
    ("qwen3.7-max", 2.50, 7.50, Some(0.50), LITELLM),
    ("qwen3.7-plus", 0.40, 1.60, Some(0.08), LITELLM),
    ("qwen3.5-plus", 0.40, 2.40, None, LITELLM),
    ("qwen3-max", 1.20, 6.00, None, LITELLM),
    ("qwen3-coder-plus", 1.00, 5.00, Some(0.10), LITELLM),
    ("qwen3-coder-flash", 0.30, 1.50, Some(0.08), LITELLM),
    ("qwen3-plus", 0.26, 0.78, None, CORECODER),
    ("qwen-max", 1.60, 6.40, None, LITELLM),
    ("qwen-plus", 0.40, 1.20, None, LITELLM),
    ("qwen-flash", 0.05, 0.40, None, LITELLM),
    ("qwen-turbo", 0.05, 0.20, None, LITELLM),
];
