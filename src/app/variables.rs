//! The `CORECODER_*` variables read into a `Config`: each over its `Config::default()` value.
//! The binary lays its flags and `.env` over them (`flags.rs`, `resolve.rs`); an embedding
//! program calls `config_from_env` or builds a `Config` itself. Nothing here opens a file or
//! reads a flag; every bad value becomes `Error::Usage` naming its variable.

use crate::core::config::{Config, ToolChoice};
use crate::core::event::Error;
use crate::tools::support::text::comma_list;
use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

/// Variables by name: the process's, or the binary's merge of them with `.env`.
type Vars = HashMap<String, String>;

/// The library's entry point: the process's variables, no flags. (A `.env` file is the
/// binary's business, read under the project's trust in `resolve.rs`.)
pub fn config_from_env() -> Result<Config, Error> {
    config_from(&std::env::vars().collect())
}

/// The variables in `env`, each over its default. A blank name, list, budget or choice
/// counts as unset; a blank count or timeout is an error.
pub fn config_from(env: &Vars) -> Result<Config, Error> {
    let text = |names: &[&str]| {
        (names.iter()).find_map(|name| env.get(*name).filter(|v| !v.trim().is_empty()).cloned())
    };
    let default = Config::default();
    let url = text(&["OPENAI_BASE_URL", "CORECODER_BASE_URL"]);
    Ok(Config {
        api_key: text(&["CORECODER_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY"]),
        base_url: url.unwrap_or(default.base_url),
        model: text(&["CORECODER_MODEL"]).unwrap_or(default.model),
        max_tokens: env_number(env, "CORECODER_MAX_TOKENS", default.max_tokens)?,
        temperature: env_number(env, "CORECODER_TEMPERATURE", default.temperature)?,
        max_context: env_number(env, "CORECODER_MAX_CONTEXT", default.max_context)?,
        idle_timeout: seconds(env, "CORECODER_IDLE_TIMEOUT", default.idle_timeout)?,
        request_timeout: seconds(env, "CORECODER_REQUEST_TIMEOUT", default.request_timeout)?,
        fallback_models: comma_list(&text(&["CORECODER_FALLBACK_MODELS"]).unwrap_or_default()),
        max_cost: (text(&["CORECODER_MAX_COST"]).map(|t| dollars("CORECODER_MAX_COST", &t)))
            .transpose()?,
        tool_choice: (text(&["CORECODER_TOOL_CHOICE"]).map(|t| tool_choice(&t))).transpose()?,
        ..default
    })
}

/// The choice `CORECODER_TOOL_CHOICE` names.
fn tool_choice(text: &str) -> Result<ToolChoice, Error> {
    match text.trim() {
        "auto" => Ok(ToolChoice::Auto),
        "required" => Ok(ToolChoice::Required),
        "none" => Ok(ToolChoice::NoCalls),
        other => Err(Error::Usage(format!(
            "CORECODER_TOOL_CHOICE: '{other}' is not auto, required or none"
        ))),
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

/// The variable `name` in whole seconds, at least one; `default` when it is not set.
fn seconds(env: &Vars, name: &str, default: Duration) -> Result<Duration, Error> {
    Ok(Duration::from_secs(
        env_number(env, name, default.as_secs())?.max(1),
    ))
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
    fn variables_are_read_over_the_defaults() {
        let env = |pairs: &[(&str, &str)]| -> Vars {
            (pairs.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let config = config_from(&env(&[
            ("CORECODER_FALLBACK_MODELS", " a, ,b "),
            ("CORECODER_IDLE_TIMEOUT", "0"),
            ("CORECODER_MODEL", " "),
        ]))
        .unwrap();
        assert_eq!(config.fallback_models, ["a", "b"]);
        assert_eq!(config.idle_timeout, Duration::from_secs(1));
        assert_eq!(config.model, "gpt-5.5");
        let err = config_from(&env(&[("CORECODER_MAX_COST", "-1")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "CORECODER_MAX_COST: '-1' is not an amount of dollars"
        );
    }

    #[test]
    fn no_variables_are_the_defaults() {
        assert_eq!(config_from(&Vars::new()).unwrap(), Config::default());
    }
}
