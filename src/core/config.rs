//! The config struct: where the model is, the key, which model, the limits and the timeouts.
//! Built once before the first turn, then only read; `Config::default()` is the documented
//! defaults. Nothing here reads a variable, file or flag (`app/variables.rs` does).

use serde::Serialize;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub api_key: Option<String>,
    /// Where the key came from (`OPENAI_API_KEY`, `--api-key`, `CORECODER_API_KEY in ./.env`),
    /// so a rejected key names what to check. Empty when unknown (the library).
    pub api_key_from: String,
    pub base_url: String,
    pub model: String,
    pub max_tokens: u32,
    pub temperature: f64,
    pub max_context: u32,
    /// Longest wait for a `data:` event (`: ping` does not count); then the stream is retried.
    pub idle_timeout: Duration,
    /// How long one reply may take in all, however steadily it trickles; then the run fails.
    pub request_timeout: Duration,
    /// Models to switch to, in order, when the current one keeps failing.
    pub fallback_models: Vec<String>,
    /// Dollars the session may spend; checked before every request.
    pub max_cost: Option<f64>,
    /// `tool_choice` sent with every request that offers tools; `None` sends nothing.
    pub tool_choice: Option<ToolChoice>,
    pub dialect: Dialect,
}

/// The API the provider speaks: chat completions (the core's), or one in `extras/dialect.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Chat,
    Anthropic,
    Responses,
}

/// `CORECODER_TOOL_CHOICE`: llama-cpp-python's function-calling handler streams a tool call
/// only when one tool is named (`auto` and `required` make it fail: docs/providers.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoice {
    Auto,
    /// Every reply must call a tool: the model can never answer, so a task ends at the round cap.
    Required,
    #[serde(rename = "none")]
    NoCalls,
    /// Every reply calls this tool (sent in each dialect's shape, not as serialised here).
    Tool(String),
}

/// With no key: a starting point for embedding programs.
impl Default for Config {
    fn default() -> Config {
        Config {
            api_key: None,
            api_key_from: String::new(),
            base_url: "https://api.openai.com/v1".to_string(),
            model: "gpt-5.5".to_string(),
            max_tokens: 4096,
            temperature: 0.0,
            max_context: 128_000,
            idle_timeout: Duration::from_secs(300),
            request_timeout: Duration::from_secs(1800),
            fallback_models: Vec::new(),
            max_cost: None,
            tool_choice: None,
            dialect: Dialect::Chat,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_documented_ones() {
        let config = Config::default();
        assert_eq!(config.base_url, "https://api.openai.com/v1");
        assert_eq!(
            (config.model.as_str(), config.max_tokens),
            ("gpt-5.5", 4096)
        );
        assert_eq!(config.max_context, 128_000);
        assert_eq!(config.idle_timeout, Duration::from_secs(300));
        assert_eq!(config.request_timeout, Duration::from_secs(1800));
        assert_eq!(
            (config.api_key, config.max_cost, config.tool_choice),
            (None, None, None)
        );
    }
}
