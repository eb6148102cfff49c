//! The `CORECODER_*` variables read into a `Config`: each over its `Config::default()` value.
//! The binary lays its flags and `.env` over them (`flags.rs`, `resolve.rs`); an embedding
//! program calls `config_from_env` or builds a `Config` itself. Nothing here opens a file or
//! reads a flag; every bad value, or number out of its range, becomes `Error::Usage` naming its
//! variable. Also the checks a value gets whether a variable or a flag gave it (`dollars`,
//! `check_base_url`, `destructive_names`).

use crate::core::config::{Config, Dialect, ToolChoice};
use crate::core::event::Error;
use crate::tools::support::text::comma_list;
use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

/// Variables by name: the process's, or the binary's merge of them with `.env`.
pub(crate) type Vars = HashMap<String, String>;

/// The library's entry point: the process's variables, no flags. (A `.env` file is the
/// binary's business, read under the project's trust in `resolve.rs`.)
pub fn config_from_env() -> Result<Config, Error> {
    config_from(&std::env::vars().collect())
}

/// The variables in `env`, each over its default. A blank name, list, budget or choice
/// counts as unset; a blank count or timeout is an error.
pub(crate) fn config_from(env: &Vars) -> Result<Config, Error> {
    let url = first(env, &names_for(Dialect::Chat).urls);
    let named = first(env, &["CORECODER_PROVIDER"]);
    let dialect = dialect(named.as_deref(), url.as_deref(), "CORECODER_PROVIDER")?;
    config_for(env, dialect)
}

/// The variables in `env` as `dialect` reads them: its key and base URL under its own names,
/// its own default URL and model.
pub(crate) fn config_for(env: &Vars, dialect: Dialect) -> Result<Config, Error> {
    let text = |names: &[&str]| first(env, names);
    let default = Config::default();
    let names = names_for(dialect);
    Ok(Config {
        api_key: text(&names.keys),
        base_url: text(&names.urls).unwrap_or(names.default_url.to_string()),
        model: text(&["CORECODER_MODEL"]).unwrap_or(names.default_model.to_string()),
        dialect,
        max_tokens: in_range(env, "CORECODER_MAX_TOKENS", default.max_tokens, MAX_TOKENS)?,
        temperature: in_range(
            env,
            "CORECODER_TEMPERATURE",
            default.temperature,
            TEMPERATURE,
        )?,
        max_context: in_range(
            env,
            "CORECODER_MAX_CONTEXT",
            default.max_context,
            MAX_CONTEXT,
        )?,
        idle_timeout: seconds(env, "CORECODER_IDLE_TIMEOUT", default.idle_timeout)?,
        request_timeout: seconds(env, "CORECODER_REQUEST_TIMEOUT", default.request_timeout)?,
        fallback_models: comma_list(&text(&["CORECODER_FALLBACK_MODELS"]).unwrap_or_default()),
        max_cost: (text(&["CORECODER_MAX_COST"]).map(|t| dollars("CORECODER_MAX_COST", &t)))
            .transpose()?,
        tool_choice: (text(&["CORECODER_TOOL_CHOICE"]).map(|t| tool_choice(&t))).transpose()?,
        ..default
    })
}

/// The first of `names` set to something that is not blank.
fn first(env: &Vars, names: &[&str]) -> Option<String> {
    (names.iter()).find_map(|name| env.get(*name).filter(|v| !v.trim().is_empty()).cloned())
}

/// Where a dialect looks for its key and base URL, and what it uses when they are unset.
pub(crate) struct Names {
    pub(crate) keys: Vec<&'static str>,
    pub(crate) urls: Vec<&'static str>,
    pub(crate) default_url: &'static str,
    pub(crate) default_model: &'static str,
}

/// The names each dialect reads. (`ANTHROPIC_*` only for the anthropic dialect: an OpenAI key
/// never goes to Anthropic, nor an Anthropic key to an OpenAI-compatible server.)
pub(crate) fn names_for(dialect: Dialect) -> Names {
    match dialect {
        Dialect::Anthropic => Names {
            keys: vec!["CORECODER_API_KEY", "ANTHROPIC_API_KEY"],
            urls: vec!["ANTHROPIC_BASE_URL", "CORECODER_BASE_URL"],
            default_url: "https://api.anthropic.com",
            default_model: "claude-sonnet-5-5",
        },
        Dialect::Chat | Dialect::Responses => Names {
            keys: vec!["CORECODER_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY"],
            urls: vec!["OPENAI_BASE_URL", "CORECODER_BASE_URL"],
            default_url: "https://api.openai.com/v1",
            default_model: "gpt-5.5",
        },
    }
}

/// The dialect `named` (by `CORECODER_PROVIDER` or `--provider`, which `from` says), else the
/// one the base URL makes unambiguous (`api.anthropic.com`), else chat completions.
pub(crate) fn dialect(
    named: Option<&str>,
    url: Option<&str>,
    from: &str,
) -> Result<Dialect, Error> {
    let host = url.map(crate::tools::support::net::host).unwrap_or("");
    match named.map(str::trim) {
        None if host.eq_ignore_ascii_case("api.anthropic.com") => Ok(Dialect::Anthropic),
        None | Some("openai") => Ok(Dialect::Chat),
        Some("anthropic") => Ok(Dialect::Anthropic),
        Some("responses") => Ok(Dialect::Responses),
        Some("litellm") => Err(Error::Usage(format!(
            "{from}: 'litellm' is CoreCoder's way to reach other providers; corecoder speaks \
             their APIs itself: openai (chat completions, any OpenAI-compatible server), \
             anthropic (the Messages API) or responses (OpenAI's Responses API)"
        ))),
        Some(other) => Err(Error::Usage(format!(
            "{from}: '{other}' is not openai, anthropic or responses"
        ))),
    }
}

/// Which of the dialect's settings a flag gave (`--base-url`, `--api-key`, `-m`).
pub(crate) struct Flagged {
    pub(crate) url: bool,
    pub(crate) key: bool,
    pub(crate) model: bool,
}

/// The dialect once the flags are read (`--provider`, else `CORECODER_PROVIDER`, else the one
/// the base URL, `--base-url`'s first, makes unambiguous); where it is another than the
/// variables chose, its key, URL and model are read again under its names, flags still
/// winning. Returns the name the base URL came from, so a bad one is reported under it.
pub(crate) fn settle_dialect(
    config: &mut Config,
    env: &Vars,
    provider: Option<&str>,
    flagged: Flagged,
) -> Result<&'static str, Error> {
    let dialect = match provider {
        Some(_) => dialect(provider, None, "--provider")?,
        None => {
            let url = Some(config.base_url.clone()).filter(|_| flagged.url);
            let url = url.or(first(env, &names_for(Dialect::Chat).urls));
            let named = first(env, &["CORECODER_PROVIDER"]);
            dialect(named.as_deref(), url.as_deref(), "CORECODER_PROVIDER")?
        }
    };
    if dialect != config.dialect {
        let read = config_for(env, dialect)?;
        if !flagged.url {
            config.base_url = read.base_url;
        }
        if !flagged.key {
            config.api_key = read.api_key;
        }
        if !flagged.model {
            config.model = read.model;
        }
        config.dialect = dialect;
    }
    let set = |name: &&str| env.get(*name).is_some_and(|v| !v.trim().is_empty());
    Ok(match flagged.url {
        true => "--base-url",
        false => (names_for(dialect).urls.into_iter().find(set)).unwrap_or("the default base URL"),
    })
}

/// The dialect as `--provider` names it (and a session records it).
pub(crate) fn provider_key(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Chat => "openai",
        Dialect::Anthropic => "anthropic",
        Dialect::Responses => "responses",
    }
}

/// The dialect as the banner and `/model` name it.
pub(crate) fn provider_name(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Chat => "openai (chat completions)",
        Dialect::Anthropic => "anthropic (Messages API)",
        Dialect::Responses => "responses (OpenAI Responses API)",
    }
}

/// The choice `CORECODER_TOOL_CHOICE` names: a mode, or a tool (`Extras::check_tool_choice`).
fn tool_choice(text: &str) -> Result<ToolChoice, Error> {
    match text.trim() {
        "auto" => Ok(ToolChoice::Auto),
        "required" => Ok(ToolChoice::Required),
        "none" => Ok(ToolChoice::NoCalls),
        name if !name.contains(char::is_whitespace) => Ok(ToolChoice::Tool(name.to_string())),
        other => Err(Error::Usage(format!(
            "CORECODER_TOOL_CHOICE: '{other}' is not auto, required, none or a tool's name"
        ))),
    }
}

/// A budget in dollars: a number that is not negative. (`--max-cost` reads it the same way.)
pub(crate) fn dollars(name: &str, text: &str) -> Result<f64, Error> {
    let value: f64 = number(name, text.trim())?;
    match value.is_finite() && value >= 0.0 {
        true => Ok(value),
        false => Err(Error::Usage(format!(
            "{name}: '{text}' is not an amount of dollars"
        ))),
    }
}

/// What a number may be, and how a message says it.
struct Range {
    low: f64,
    high: f64,
    said: &'static str,
}

const MAX_TOKENS: Range = Range {
    low: 1.0,
    high: f64::INFINITY,
    said: "at least 1",
};
const TEMPERATURE: Range = Range {
    low: 0.0,
    high: 2.0,
    said: "between 0 and 2",
};
/// The system prompt and the tools' definitions go with every request (about 6 KB of JSON):
/// in a smaller window every request would be compacted, and soon nothing would fit.
const MAX_CONTEXT: Range = Range {
    low: 4096.0,
    high: f64::INFINITY,
    said: "at least 4096",
};

/// The variable `name` as a number inside `range` (a value outside it would be sent and
/// refused by the provider, or, for the window, compact every request); `default` when unset.
fn in_range<T: FromStr + Into<f64> + Copy>(
    env: &Vars,
    name: &str,
    default: T,
    range: Range,
) -> Result<T, Error> {
    let value = env_number(env, name, default)?;
    let number: f64 = value.into();
    match number >= range.low && number <= range.high {
        true => Ok(value),
        false => Err(Error::Usage(format!(
            "{name}: '{}' is out of range: it must be {}",
            env.get(name).map_or("", |text| text.trim()),
            range.said
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
pub(crate) fn number<T: FromStr>(name: &str, text: &str) -> Result<T, Error> {
    (text.parse()).map_err(|_| Error::Usage(format!("{name}: '{text}' is not a valid number")))
}

/// A base URL the HTTP client can use: `http://` or `https://` and a host. (Without this a
/// typo surfaced as "API error: http: invalid format" after a zero-token summary.)
pub(crate) fn check_base_url(url: &str, from: &str) -> Result<(), Error> {
    let rest = (url.strip_prefix("https://"))
        .or_else(|| url.strip_prefix("http://"))
        .filter(|rest| !rest.is_empty() && !rest.starts_with('/'));
    match rest {
        Some(_) => Ok(()),
        None => Err(Error::Usage(format!(
            "{from}: '{url}' is not an http:// or https:// URL (e.g. https://api.openai.com/v1)"
        ))),
    }
}

/// The comma-separated list in `env[name]`, each a name `danger::destructive_names` knows.
pub(crate) fn destructive_names(name: &str, env: &Vars) -> Result<Vec<String>, Error> {
    let known = crate::tools::support::danger::destructive_names();
    let names = comma_list(env.get(name).map_or("", String::as_str));
    match names.iter().find(|n| !known.contains(&n.as_str())) {
        Some(unknown) => Err(Error::Usage(format!(
            "{name}: '{unknown}' is not one of {}",
            known.join(", ")
        ))),
        None => Ok(names),
    }
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

    /// `CORECODER_PROVIDER` names the dialect, else Anthropic's own host does; each dialect
    /// reads its key and base URL under its own names only.
    #[test]
    fn the_dialect_and_what_it_reads() {
        let env = |pairs: &[(&str, &str)]| -> Vars {
            (pairs.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let keys = [
            ("OPENAI_API_KEY", "sk-openai"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
        ];
        let chat = config_from(&env(&keys)).unwrap();
        assert_eq!(
            (chat.dialect, chat.api_key.as_deref()),
            (Dialect::Chat, Some("sk-openai"))
        );
        let named = [keys[0], keys[1], ("CORECODER_PROVIDER", "anthropic")];
        let anthropic = config_from(&env(&named)).unwrap();
        assert_eq!(anthropic.dialect, Dialect::Anthropic);
        assert_eq!(anthropic.api_key.as_deref(), Some("sk-ant"));
        assert_eq!(anthropic.base_url, "https://api.anthropic.com");
        assert_eq!(anthropic.model, "claude-sonnet-5-5");
        let by_url = [keys[0], ("OPENAI_BASE_URL", "https://API.anthropic.com/v1")];
        let inferred = config_from(&env(&by_url)).unwrap();
        assert_eq!(
            (inferred.dialect, inferred.api_key),
            (Dialect::Anthropic, None)
        );
        let own_url = [
            ("CORECODER_PROVIDER", "anthropic"),
            ("ANTHROPIC_BASE_URL", "http://proxy"),
        ];
        assert_eq!(
            config_from(&env(&own_url)).unwrap().base_url,
            "http://proxy"
        );
        let litellm = config_from(&env(&[("CORECODER_PROVIDER", "litellm")])).unwrap_err();
        let said = litellm.to_string();
        assert!(said.starts_with("CORECODER_PROVIDER: 'litellm'"), "{said}");
        assert!(
            ["openai", "anthropic", "responses"]
                .iter()
                .all(|d| said.contains(d))
        );
        let flagged = Flagged {
            url: false,
            key: false,
            model: false,
        };
        let mut config = config_from(&env(&keys)).unwrap();
        let flag = settle_dialect(&mut config, &env(&keys), Some("claude"), flagged).unwrap_err();
        assert_eq!(
            flag.to_string(),
            "--provider: 'claude' is not openai, anthropic or responses"
        );
    }

    #[test]
    fn numbers_outside_their_range_are_refused() {
        let one = |name: &str, value: &str| {
            let env = [(name.to_string(), value.to_string())].into();
            config_from(&env).map_err(|e| e.to_string())
        };
        let err = one("CORECODER_MAX_TOKENS", " 0 ").unwrap_err();
        assert_eq!(
            err,
            "CORECODER_MAX_TOKENS: '0' is out of range: it must be at least 1"
        );
        for bad in ["-0.1", "2.01", "inf", "NaN"] {
            assert!(one("CORECODER_TEMPERATURE", bad).is_err(), "{bad}");
        }
        assert_eq!(one("CORECODER_TEMPERATURE", "2").unwrap().temperature, 2.0);
        assert!(one("CORECODER_MAX_CONTEXT", "4095").is_err());
        assert_eq!(
            one("CORECODER_MAX_CONTEXT", "4096").unwrap().max_context,
            4096
        );
    }

    #[test]
    fn no_variables_are_the_defaults() {
        assert_eq!(config_from(&Vars::new()).unwrap(), Config::default());
    }
}
