//! The config struct: where the model is, the key, which model, the limits and the timeouts.
//! Built once before the first turn, then only read by every request of the session.
//! `Config::from_vars` reads the `CORECODER_*` variables (the binary lays its flags and `.env`
//! over them in `app/`); nothing here opens a file, parses a flag or opens a connection.

use crate::core::event::Error;
use crate::tools::support::text::comma_list;
use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

/// Where the model is and how to ask it. Shared by every request of a session.
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
    /// How long a stream may go without a `data:` event before it counts as broken (and is
    /// retried); comments such as `: ping` do not count.
    pub idle_timeout: Duration,
    /// How long one reply may take in all, however steadily it trickles; then the run fails.
    pub request_timeout: Duration,
    /// Models to switch to, in order, when the current one keeps failing.
    pub fallback_models: Vec<String>,
    /// Dollars the session may spend; checked before every request.
    pub max_cost: Option<f64>,
    /// `tool_choice` sent with every request that offers tools; `None` sends nothing.
    pub tool_choice: Option<ToolChoice>,
}

/// `CORECODER_TOOL_CHOICE`: some servers (llama-cpp-python's function-calling handler) call
/// no tool unless asked to with `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolChoice {
    Auto,
    /// Every reply must call a tool: the model can never answer, so a task ends at the round cap.
    Required,
    /// The model may not call tools.
    NoCalls,
}

impl ToolChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "required",
            ToolChoice::NoCalls => "none",
        }
    }

    /// The choice `CORECODER_TOOL_CHOICE` names.
    fn from_var(text: &str) -> Result<ToolChoice, Error> {
        match text.trim() {
            "auto" => Ok(ToolChoice::Auto),
            "required" => Ok(ToolChoice::Required),
            "none" => Ok(ToolChoice::NoCalls),
            other => Err(Error::Usage(format!(
                "CORECODER_TOOL_CHOICE: '{other}' is not auto, required or none"
            ))),
        }
    }
}

/// The documented defaults, with no key: a starting point for embedding programs. (With no
/// variables there is nothing to be bad, so `from_vars` cannot fail.)
impl Default for Config {
    fn default() -> Config {
        Config::from_vars(&HashMap::new()).expect("the defaults are valid")
    }
}

impl Config {
    /// The library's entry point: the process's variables, no flags. (A `.env` file is the
    /// binary's business, read under the project's trust in `app/resolve.rs`.)
    pub fn from_env() -> Result<Config, Error> {
        Config::from_vars(&std::env::vars().collect())
    }

    /// The variables in `env`, each over its default. A blank name, list, budget or choice
    /// counts as unset; a blank count or timeout is an error.
    pub fn from_vars(env: &HashMap<String, String>) -> Result<Config, Error> {
        let text = |names: &[&str]| {
            (names.iter()).find_map(|name| env.get(*name).filter(|v| !v.trim().is_empty()).cloned())
        };
        let url = text(&["OPENAI_BASE_URL", "CORECODER_BASE_URL"]);
        Ok(Config {
            api_key: text(&["CORECODER_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY"]),
            api_key_from: String::new(),
            base_url: url.unwrap_or_else(|| "https://api.openai.com/v1".to_string()),
            model: text(&["CORECODER_MODEL"]).unwrap_or_else(|| "gpt-5.5".to_string()),
            max_tokens: env_number(env, "CORECODER_MAX_TOKENS", 4096)?,
            temperature: env_number(env, "CORECODER_TEMPERATURE", 0.0)?,
            max_context: env_number(env, "CORECODER_MAX_CONTEXT", 128_000)?,
            idle_timeout: seconds(env, "CORECODER_IDLE_TIMEOUT", 300)?,
            request_timeout: seconds(env, "CORECODER_REQUEST_TIMEOUT", 1800)?,
            fallback_models: comma_list(&text(&["CORECODER_FALLBACK_MODELS"]).unwrap_or_default()),
            max_cost: (text(&["CORECODER_MAX_COST"]).map(|t| dollars("CORECODER_MAX_COST", &t)))
                .transpose()?,
            tool_choice: (text(&["CORECODER_TOOL_CHOICE"]).map(|t| ToolChoice::from_var(&t)))
                .transpose()?,
        })
    }
}

/// A budget in dollars: a number that is not negative. (`--max-cost` reads it the same way.)
pub fn dollars(name: &str, text: &str) -> Result<f64, Error> {
    let value: f64 = number(name, text.trim())?;
    match value.is_finite() && value >= 0.0 {
        true => Ok(value),
        false => Err(Error::Usage(format!(
            "{name}: '{text}' is not an amount of dollars"
        ))),
    }
}

/// Variables by name: the process's, or the binary's merge of them with `.env`.
type Vars = HashMap<String, String>;

/// The variable `name` in whole seconds, at least one; `default` when it is not set.
fn seconds(env: &Vars, name: &str, default: u64) -> Result<Duration, Error> {
    Ok(Duration::from_secs(env_number(env, name, default)?.max(1)))
}

/// The variable `name` as a number; `default` when it is not set.
fn env_number<T: FromStr>(env: &Vars, name: &str, default: T) -> Result<T, Error> {
    let text = env.get(name);
    text.map_or(Ok(default), |text| number(name, text.trim()))
}

/// `text` as a number, or a usage error naming `name` (a variable or a flag).
pub fn number<T: FromStr>(name: &str, text: &str) -> Result<T, Error> {
    (text.parse()).map_err(|_| Error::Usage(format!("{name}: '{text}' is not a valid number")))
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

    #[test]
    fn variables_are_read_over_the_defaults() {
        let env = |pairs: &[(&str, &str)]| -> Vars {
            (pairs.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let config = Config::from_vars(&env(&[
            ("CORECODER_FALLBACK_MODELS", " a, ,b "),
            ("CORECODER_IDLE_TIMEOUT", "0"),
            ("CORECODER_MODEL", " "),
        ]))
        .unwrap();
        assert_eq!(config.fallback_models, ["a", "b"]);
        assert_eq!(config.idle_timeout, Duration::from_secs(1));
        assert_eq!(config.model, "gpt-5.5");
        let err = Config::from_vars(&env(&[("CORECODER_MAX_COST", "-1")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "CORECODER_MAX_COST: '-1' is not an amount of dollars"
        );
    }
}
