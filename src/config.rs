//! Configuration: command-line flags over environment variables over a `.env` file.
//!
//! Runs once, before the first turn. It only reads and validates; it opens no connection and
//! creates no file. Every bad value becomes `Error::Usage` naming the flag or variable.

use crate::error::Error;
use crate::sandbox::{self, Sandbox, ShellSafety};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the model is and how to ask it. Shared by every request of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub api_key: Option<String>,
    pub base_url: String,
    pub model: String,
    pub max_tokens: u32,
    pub temperature: f64,
    pub max_context: u32,
    /// How long a stream may stay silent before it counts as broken (and is retried).
    pub idle_timeout: Duration,
    /// Models to switch to, in order, when the current one keeps failing.
    pub fallback_models: Vec<String>,
    /// Dollars the session may spend; checked before every request.
    pub max_cost: Option<f64>,
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

pub const HELP: &str = "\
corecoder - a minimal AI coding agent for any OpenAI-compatible model

Usage: corecoder [OPTIONS]

  -p, --prompt TEXT     run one task non-interactively; the answer goes to stdout
  -y, --yes             allow mutating tools (bash, write_file, edit_file, agent) without asking
  -m, --model NAME      model name                     [env CORECODER_MODEL, default gpt-5.5]
      --base-url URL    OpenAI-compatible base URL     [env OPENAI_BASE_URL or CORECODER_BASE_URL]
      --api-key KEY     API key  [env CORECODER_API_KEY, OPENAI_API_KEY or DEEPSEEK_API_KEY]
      --max-rounds N    cap on tool-call rounds per task [default 50]
      --max-cost USD    stop before a request once this much is spent [env CORECODER_MAX_COST]
      --output-format F with -p: text (default), json (one object at the end) or stream-json
      --trace FILE      write every request, stream line and tool call to FILE as JSON lines
  -r, --resume ID       continue a saved session (see /sessions)
  -c, --continue        continue the most recent session started in this directory
      --sandbox MODE    where bash may write: off, read-only, workspace-write (Linux
                        Landlock; cwd and temp dir only)  [env CORECODER_SANDBOX, default off]
      --allow-destructive NAMES  let --yes run these destructive commands, comma-separated:
                        git-push-force, git-reset-hard, git-clean, git-discard,
                        git-branch-delete, git-stash-clear, rm-git-dir, find-delete
                        [env CORECODER_ALLOW_DESTRUCTIVE, never from .env]. Interactive
                        sessions ask instead; catastrophic commands (rm -rf ~, mkfs,
                        curl | sh, ...) never run.
      --demo            run the offline demo (also the default when no API key is set)
  -v, --version         print the version
  -h, --help            print this help

Environment: CORECODER_MAX_TOKENS (4096), CORECODER_TEMPERATURE (0), CORECODER_MAX_CONTEXT
(128000), CORECODER_IDLE_TIMEOUT (seconds, 300), CORECODER_FALLBACK_MODELS (m1,m2: models to
switch to when the current one keeps failing). A .env file in the current directory or the
nearest parent (not $HOME or above) is read without overriding the environment.
bash never sees variables named like *KEY*, *SECRET*, *TOKEN* or *PASSWORD*, except those
listed in CORECODER_ENV_ALLOW=NAME1,NAME2.

Exit codes: 0 done, 1 API failure, 2 usage error, 3 round cap reached, 4 budget spent,
5 stopped for repeating the same call, 130 interrupted.
";

/// The documented defaults, with no key: a starting point for embedding programs.
impl Default for Config {
    fn default() -> Config {
        Config {
            api_key: None,
            base_url: "https://api.openai.com/v1".to_string(),
            model: "gpt-5.5".to_string(),
            max_tokens: 4096,
            temperature: 0.0,
            max_context: 128_000,
            idle_timeout: Duration::from_secs(300),
            fallback_models: Vec::new(),
            max_cost: None,
        }
    }
}

impl Config {
    /// Read the configuration from variables only (the library entry point; no flags).
    pub fn from_env() -> Result<Config, Error> {
        config_from(&environment())
    }
}

/// The binary's entry point: the real environment plus `.env`, then the flags.
pub fn from_command_line() -> Result<Invocation, Error> {
    parse(std::env::args_os().skip(1).collect(), &environment())
}

/// The process environment, completed (never overridden) by the nearest `.env` file.
fn environment() -> HashMap<String, String> {
    let mut env: HashMap<String, String> = std::env::vars().collect();
    let home = env.get("HOME").cloned().unwrap_or_default();
    if let Ok(cwd) = std::env::current_dir()
        && let Some(text) = find_dotenv(&cwd, Path::new(&home))
    {
        // A repository's `.env` must not widen what tools may do: opting in to destructive
        // commands is the user's own word (flag or real environment).
        let pairs = parse_dotenv(&text).into_iter();
        for (key, value) in pairs.filter(|(key, _)| key != "CORECODER_ALLOW_DESTRUCTIVE") {
            env.entry(key).or_insert(value);
        }
    }
    env
}

/// The nearest `.env` at or above `start`, stopping before `home` (a `.env` in the home
/// directory is usually some other tool's).
fn find_dotenv(start: &Path, home: &Path) -> Option<String> {
    for dir in start.ancestors() {
        if !home.as_os_str().is_empty() && dir == home {
            return None;
        }
        if let Ok(text) = std::fs::read_to_string(dir.join(".env")) {
            return Some(text);
        }
    }
    None
}

/// `KEY=VALUE` lines; `export ` prefixes, `#` comments and surrounding quotes allowed.
pub fn parse_dotenv(text: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let line = line.strip_prefix("export ").unwrap_or(line);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            let value = value.trim();
            let unquoted = [('"', '"'), ('\'', '\'')]
                .iter()
                .find_map(|(open, close)| value.strip_prefix(*open)?.strip_suffix(*close))
                .unwrap_or(value);
            pairs.push((key.trim().to_string(), unquoted.to_string()));
        }
    }
    pairs
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
        shell: shell_from(env)?,
        allow_destructive: destructive_names("CORECODER_ALLOW_DESTRUCTIVE", env)?,
    };
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
            Long("base-url") => config.base_url = text_value(&mut parser, "--base-url")?,
            Long("api-key") => config.api_key = Some(text_value(&mut parser, "--api-key")?),
            Long("max-rounds") => {
                let text = text_value(&mut parser, "--max-rounds")?;
                run.max_rounds = number("--max-rounds", &text)?;
            }
            Long("sandbox") => {
                let text = text_value(&mut parser, "--sandbox")?;
                run.shell.sandbox = sandbox_mode("--sandbox", &text)?;
            }
            Long("allow-destructive") => {
                let text = text_value(&mut parser, "--allow-destructive")?;
                let names = [("--allow-destructive".to_string(), text)].into();
                run.allow_destructive = destructive_names("--allow-destructive", &names)?;
            }
            Long("demo") => run.demo = true,
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
    run.config = config;
    Ok(Invocation::Run(Box::new(run)))
}

fn config_from(env: &HashMap<String, String>) -> Result<Config, Error> {
    let first = |names: &[&str]| {
        names
            .iter()
            .find_map(|name| env.get(*name).filter(|v| !v.trim().is_empty()).cloned())
    };
    let idle_secs: u64 = env_number(env, "CORECODER_IDLE_TIMEOUT", "300")?;
    Ok(Config {
        api_key: first(&["CORECODER_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY"]),
        base_url: first(&["OPENAI_BASE_URL", "CORECODER_BASE_URL"])
            .unwrap_or_else(|| "https://api.openai.com/v1".to_string()),
        model: first(&["CORECODER_MODEL"]).unwrap_or_else(|| "gpt-5.5".to_string()),
        max_tokens: env_number(env, "CORECODER_MAX_TOKENS", "4096")?,
        temperature: env_number(env, "CORECODER_TEMPERATURE", "0")?,
        max_context: env_number(env, "CORECODER_MAX_CONTEXT", "128000")?,
        idle_timeout: Duration::from_secs(idle_secs.max(1)),
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

fn shell_from(env: &HashMap<String, String>) -> Result<ShellSafety, Error> {
    let mode = env.get("CORECODER_SANDBOX").map_or("off", String::as_str);
    let allow = env.get("CORECODER_ENV_ALLOW").map_or("", String::as_str);
    Ok(ShellSafety {
        sandbox: sandbox_mode("CORECODER_SANDBOX", mode)?,
        env_allow: sandbox::parse_env_allow(allow),
    })
}

/// The comma-separated list in `env[name]`, each a name `danger::destructive_names` knows.
fn destructive_names(name: &str, env: &HashMap<String, String>) -> Result<Vec<String>, Error> {
    let known = crate::tools::danger::destructive_names();
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

fn sandbox_mode(name: &str, text: &str) -> Result<Sandbox, Error> {
    Sandbox::parse(text).map_err(|why| Error::Usage(format!("{name}: {why}")))
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

    #[test]
    fn dotenv_lines() {
        let text = "# c\nexport A=1\nB = \"two words\"\nC='3'\n\nnot a pair\n";
        let pairs = parse_dotenv(text);
        let want = [("A", "1"), ("B", "two words"), ("C", "3")];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(pairs, want);
    }
}
