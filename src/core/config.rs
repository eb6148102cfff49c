//! Configuration: command-line flags over environment variables over a `.env` file.
//!
//! Runs once, before the first turn. It only reads and validates; it opens no connection, and
//! the only file it writes is the trust record when `--trust-project` asks for it. Every bad
//! value becomes `Error::Usage` naming the flag or variable. Where the variables come from (the
//! environment, and as much of `.env` as the project's trust allows) is `config/resolve.rs`.

use crate::core::event::Error;
use crate::extras::sandbox::{Sandbox, ShellSafety};
use crate::extras::trust::{Project, Trust};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

mod help;
mod resolve;
pub use help::HELP;
pub use resolve::{Launch, from_command_line, read_again};

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
}

/// What the user asked the binary to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    Help,
    Version,
    Run(Box<RunOptions>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    pub config: Config,
    pub prompt: Option<String>,
    pub approve_all: bool,
    pub max_rounds: u32,
    pub demo: bool,
    pub resume: Option<Resume>,
    /// `-m` was given: a resumed session keeps this model rather than its own.
    pub model_from_flag: bool,
    pub output: OutputFormat,
    /// `--trace FILE`: requests, stream lines and tool calls as JSON lines.
    pub trace: Option<PathBuf>,
    /// `--sandbox` and `CORECODER_ENV_ALLOW`, for the bash tool.
    pub shell: ShellSafety,
    /// Destructive commands `--yes` may run, by name (`--allow-destructive`).
    pub allow_destructive: Vec<String>,
    /// `--trust-project`: trust the project's files as they are, and remember it.
    pub trust_project: bool,
    /// The project's hooks, MCP and `.env` files, and whether they are trusted.
    pub project: Project,
    /// The arguments and environment the process started with, to read them again.
    pub launch: Launch,
}

/// How `-p` reports: plain text, one JSON object at the end, or one JSON event per line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

/// Which earlier session to continue.
#[derive(Debug, Clone, PartialEq)]
pub enum Resume {
    /// `-r ID`
    Id(String),
    /// `-c`: the most recent session started in this directory.
    LatestHere,
}

/// The documented defaults, with no key: a starting point for embedding programs.
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
        }
    }
}

impl Config {
    /// Read the configuration from variables only (the library entry point; no flags), by
    /// the same rules as the binary: an untrusted `.env` cannot redirect the key.
    pub fn from_env() -> Result<Config, Error> {
        match resolve::resolve(Launch::variables_only(), Trust::Untrusted)? {
            Invocation::Run(run) => Ok(run.config),
            _ => Err(Error::Usage("no configuration".to_string())),
        }
    }
}

/// Flags override variables: build the config from `env`, then apply the flags on top.
pub fn parse(args: Vec<OsString>, env: &HashMap<String, String>) -> Result<Invocation, Error> {
    use lexopt::prelude::*;
    let mut config = config_from(env)?;
    let mut run = RunOptions {
        config: config.clone(),
        prompt: None,
        approve_all: false,
        max_rounds: 50,
        demo: false,
        resume: None,
        model_from_flag: false,
        output: OutputFormat::Text,
        trace: None,
        shell: ShellSafety::from_env(env).map_err(Error::Usage)?,
        allow_destructive: destructive_names("CORECODER_ALLOW_DESTRUCTIVE", env)?,
        trust_project: false,
        project: Project::default(),
        launch: Launch::default(),
    };
    // Which name the base URL came from, so a bad one is reported under it.
    let mut url_from = (["OPENAI_BASE_URL", "CORECODER_BASE_URL"].iter())
        .find(|name| env.get(**name).is_some_and(|v| !v.trim().is_empty()))
        .map_or("the default base URL", |name| *name);
    let mut parser = lexopt::Parser::from_args(args);
    while let Some(arg) = parser.next().map_err(usage)? {
        match arg {
            Short('h') | Long("help") => return Ok(Invocation::Help),
            Short('v') | Long("version") => return Ok(Invocation::Version),
            Short('p') | Long("prompt") => run.prompt = Some(text_value(&mut parser, "--prompt")?),
            Short('y') | Long("yes") => run.approve_all = true,
            Short('m') | Long("model") => {
                config.model = text_value(&mut parser, "--model")?;
                run.model_from_flag = true;
            }
            Long("base-url") => {
                config.base_url = text_value(&mut parser, "--base-url")?;
                url_from = "--base-url";
            }
            Long("api-key") => config.api_key = Some(text_value(&mut parser, "--api-key")?),
            Long("max-rounds") => {
                let text = text_value(&mut parser, "--max-rounds")?;
                run.max_rounds = number("--max-rounds", &text)?;
            }
            Long("sandbox") => {
                let text = text_value(&mut parser, "--sandbox")?;
                let why = |why| Error::Usage(format!("--sandbox: {why}"));
                run.shell.sandbox = Sandbox::parse(&text).map_err(why)?;
            }
            Long("add-dir") => {
                let dir = text_value(&mut parser, "--add-dir")?;
                run.shell.added_dirs.push(PathBuf::from(dir));
            }
            Long("allow-destructive") => {
                let text = text_value(&mut parser, "--allow-destructive")?;
                let names = [("--allow-destructive".to_string(), text)].into();
                run.allow_destructive = destructive_names("--allow-destructive", &names)?;
            }
            Long("demo") => run.demo = true,
            Long("trust-project") => run.trust_project = true,
            Long("trace") => run.trace = Some(PathBuf::from(text_value(&mut parser, "--trace")?)),
            Long("max-cost") => {
                let text = text_value(&mut parser, "--max-cost")?;
                config.max_cost = Some(dollars("--max-cost", &text)?);
            }
            Long("output-format") => {
                run.output = match text_value(&mut parser, "--output-format")?.as_str() {
                    "text" => OutputFormat::Text,
                    "json" => OutputFormat::Json,
                    "stream-json" => OutputFormat::StreamJson,
                    other => {
                        let why =
                            format!("--output-format: '{other}' is not text, json or stream-json");
                        return Err(Error::Usage(why));
                    }
                };
            }
            Short('r') | Long("resume") => {
                run.resume = Some(Resume::Id(text_value(&mut parser, "--resume")?));
            }
            Short('c') | Long("continue") => run.resume = Some(Resume::LatestHere),
            Value(v) => {
                let hint = "put the task after -p, e.g. corecoder -p \"fix the bug\"";
                let v = v.to_string_lossy();
                return Err(Error::Usage(format!("unexpected argument '{v}': {hint}")));
            }
            _ => return Err(usage(arg.unexpected())),
        }
    }
    check_base_url(&config.base_url, url_from)?;
    run.config = config;
    check_run(&run)?;
    Ok(Invocation::Run(Box::new(run)))
}

/// A base URL the HTTP client can use: `http://` or `https://` and a host. (Without this a
/// typo surfaced as "API error: http: invalid format" after a zero-token summary.)
fn check_base_url(url: &str, from: &str) -> Result<(), Error> {
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

/// Combinations of flags that would do nothing useful, or spend money on nothing.
fn check_run(run: &RunOptions) -> Result<(), Error> {
    let why = if run.prompt.as_deref().is_some_and(|p| p.trim().is_empty()) {
        "-p: the task is empty (give it as -p \"TEXT\", or -p - to read it from stdin)"
    } else if run.max_rounds == 0 {
        "--max-rounds: must be at least 1"
    } else if run.output != OutputFormat::Text && run.prompt.is_none() {
        "--output-format works only with -p (the interactive session prints for a person)"
    } else {
        return Ok(());
    };
    Err(Error::Usage(why.to_string()))
}

fn config_from(env: &HashMap<String, String>) -> Result<Config, Error> {
    let first = |names: &[&str]| {
        names
            .iter()
            .find_map(|name| env.get(*name).filter(|v| !v.trim().is_empty()).cloned())
    };
    let idle_secs: u64 = env_number(env, "CORECODER_IDLE_TIMEOUT", "300")?;
    let request_secs: u64 = env_number(env, "CORECODER_REQUEST_TIMEOUT", "1800")?;
    Ok(Config {
        api_key: first(&["CORECODER_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY"]),
        api_key_from: String::new(),
        base_url: first(&["OPENAI_BASE_URL", "CORECODER_BASE_URL"])
            .unwrap_or_else(|| "https://api.openai.com/v1".to_string()),
        model: first(&["CORECODER_MODEL"]).unwrap_or_else(|| "gpt-5.5".to_string()),
        max_tokens: env_number(env, "CORECODER_MAX_TOKENS", "4096")?,
        temperature: env_number(env, "CORECODER_TEMPERATURE", "0")?,
        max_context: env_number(env, "CORECODER_MAX_CONTEXT", "128000")?,
        idle_timeout: Duration::from_secs(idle_secs.max(1)),
        request_timeout: Duration::from_secs(request_secs.max(1)),
        fallback_models: first(&["CORECODER_FALLBACK_MODELS"])
            .map(|list| {
                list.split(',')
                    .map(|m| m.trim().to_string())
                    .filter(|m| !m.is_empty())
                    .collect()
            })
            .unwrap_or_default(),
        max_cost: match first(&["CORECODER_MAX_COST"]) {
            Some(text) => Some(dollars("CORECODER_MAX_COST", &text)?),
            None => None,
        },
        tool_choice: match first(&["CORECODER_TOOL_CHOICE"]) {
            Some(text) => Some(tool_choice(&text)?),
            None => None,
        },
    })
}

/// A budget in dollars: a number that is not negative.
fn dollars(name: &str, text: &str) -> Result<f64, Error> {
    let value: f64 = number(name, text.trim())?;
    match value.is_finite() && value >= 0.0 {
        true => Ok(value),
        false => Err(Error::Usage(format!(
            "{name}: '{text}' is not an amount of dollars"
        ))),
    }
}

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

/// The comma-separated list in `env[name]`, each a name `danger::destructive_names` knows.
fn destructive_names(name: &str, env: &HashMap<String, String>) -> Result<Vec<String>, Error> {
    let known = crate::tools::support::danger::destructive_names();
    let text = env.get(name).map_or("", String::as_str);
    let names: Vec<String> = (text.split(','))
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
        .collect();
    match names.iter().find(|n| !known.contains(&n.as_str())) {
        Some(unknown) => Err(Error::Usage(format!(
            "{name}: '{unknown}' is not one of {}",
            known.join(", ")
        ))),
        None => Ok(names),
    }
}

fn env_number<T: std::str::FromStr>(
    env: &HashMap<String, String>,
    name: &str,
    default: &str,
) -> Result<T, Error> {
    let text = env.get(name).map(String::as_str).unwrap_or(default);
    number(name, text.trim())
}

fn text_value(parser: &mut lexopt::Parser, flag: &str) -> Result<String, Error> {
    let value = parser
        .value()
        .map_err(|_| Error::Usage(format!("{flag} needs a value")))?;
    value
        .into_string()
        .map_err(|_| Error::Usage(format!("{flag}: the value is not valid UTF-8")))
}

fn number<T: std::str::FromStr>(name: &str, text: &str) -> Result<T, Error> {
    text.parse()
        .map_err(|_| Error::Usage(format!("{name}: '{text}' is not a valid number")))
}

fn usage(e: lexopt::Error) -> Error {
    Error::Usage(format!("{e} (see corecoder --help)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(args: &[&str], env: &[(&str, &str)]) -> Result<Invocation, String> {
        let args = args.iter().map(OsString::from).collect();
        let env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parse(args, &env).map_err(|e| e.to_string())
    }

    fn run_options(args: &[&str], env: &[(&str, &str)]) -> RunOptions {
        match check(args, env) {
            Ok(Invocation::Run(run)) => *run,
            other => panic!("expected a run, got {other:?}"),
        }
    }

    #[test]
    fn defaults_and_key_precedence() {
        let run = run_options(&[], &[("OPENAI_API_KEY", "b"), ("DEEPSEEK_API_KEY", "c")]);
        assert_eq!(run.config.api_key.as_deref(), Some("b"));
        assert_eq!(run.config.model, "gpt-5.5");
        assert_eq!(run.config.base_url, "https://api.openai.com/v1");
        assert_eq!((run.config.max_tokens, run.max_rounds), (4096, 50));
        let run = run_options(&[], &[("CORECODER_API_KEY", "a"), ("OPENAI_API_KEY", "b")]);
        assert_eq!(run.config.api_key.as_deref(), Some("a"));
    }

    #[test]
    fn flags_override_variables() {
        let env = [
            ("CORECODER_MODEL", "env-model"),
            ("OPENAI_BASE_URL", "http://x"),
        ];
        let run = run_options(
            &["-m", "flag-model", "-p", "hi", "-y", "--max-rounds", "3"],
            &env,
        );
        assert_eq!(run.config.model, "flag-model");
        assert_eq!(run.config.base_url, "http://x");
        assert_eq!(run.prompt.as_deref(), Some("hi"));
        assert!(run.approve_all);
        assert_eq!(run.max_rounds, 3);
    }

    #[test]
    fn bad_input_names_the_culprit() {
        let err = check(&[], &[("CORECODER_MAX_TOKENS", "abc")]).unwrap_err();
        assert!(err.contains("CORECODER_MAX_TOKENS"), "{err}");
        assert!(
            check(&["--frobnicate"], &[])
                .unwrap_err()
                .contains("--frobnicate")
        );
        assert!(check(&["--model"], &[]).unwrap_err().contains("--model"));
        assert!(
            check(&["--max-rounds", "x"], &[])
                .unwrap_err()
                .contains("--max-rounds")
        );
        assert!(check(&["stray"], &[]).unwrap_err().contains("stray"));
        let err = check(&[], &[("OPENAI_BASE_URL", "api.deepseek.com")]).unwrap_err();
        assert!(
            err.starts_with("OPENAI_BASE_URL: 'api.deepseek.com'"),
            "{err}"
        );
        let err = check(&["--base-url", "ftp://x/v1"], &[]).unwrap_err();
        assert!(err.starts_with("--base-url: 'ftp://x/v1'"), "{err}");
        let err = check(&[], &[("CORECODER_TOOL_CHOICE", "always")]).unwrap_err();
        assert!(
            err.contains("CORECODER_TOOL_CHOICE") && err.contains("always"),
            "{err}"
        );
        let run = run_options(&[], &[("CORECODER_TOOL_CHOICE", "auto")]);
        assert_eq!(run.config.tool_choice, Some(ToolChoice::Auto));
    }

    #[test]
    fn add_dir_repeats_and_has_no_variable() {
        let run = run_options(&["--add-dir", "a", "--add-dir", "../b"], &[]);
        let want = [PathBuf::from("a"), PathBuf::from("../b")];
        assert_eq!(run.shell.added_dirs, want);
        let run = run_options(
            &[],
            &[("CORECODER_ADD_DIR", "/"), ("CORECODER_ADD_DIRS", "/")],
        );
        assert!(run.shell.added_dirs.is_empty());
    }

    #[test]
    fn destructive_opt_in_by_name() {
        let run = run_options(
            &[],
            &[("CORECODER_ALLOW_DESTRUCTIVE", "git-reset-hard, git-clean")],
        );
        assert_eq!(run.allow_destructive, ["git-reset-hard", "git-clean"]);
        let run = run_options(&["--allow-destructive", "rm-git-dir"], &[]);
        assert_eq!(run.allow_destructive, ["rm-git-dir"]);
        let err = check(&["--allow-destructive", "rm-rf-root"], &[]).unwrap_err();
        assert!(
            err.contains("rm-rf-root") && err.contains("git-push-force"),
            "{err}"
        );
    }
}
