//! The command line: what the user asked the binary to do, as `Invocation` and `RunOptions`.
//!
//! `parse` lays the flags over a `Config` built from the variables it is given (the real
//! environment completed by `.env`, which `resolve.rs` assembles) and checks combinations
//! that would do nothing useful. Runs once at start-up (again after the trust question); it
//! only reads and validates, and every bad value becomes `Error::Usage` naming the flag.

use crate::app::variables::{
    self, check_base_url, config_from, destructive_names, dollars, number,
};
use crate::core::config::Config;
use crate::core::event::Error;
use crate::extras::sandbox::{Sandbox, ShellSafety};
use crate::extras::trace::replay::OnDivergence;
use crate::extras::trust::Project;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

/// What the user asked the binary to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    Help,
    Version,
    Run(Box<RunOptions>),
}

/// One run as the user asked for it: the core's `Config`, and what only the binary and the
/// extras read (task, consent, round cap, output, trace, sandbox, destructive opt-ins, trust).
#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    pub config: Config,
    pub prompt: Option<String>,
    pub(crate) approve_all: bool,
    pub(crate) max_rounds: u32,
    pub demo: bool,
    pub acp: bool,
    pub(crate) resume: Option<Resume>,
    /// `-m` was given: a resumed session keeps this model rather than its own.
    pub(crate) model_from_flag: bool,
    pub(crate) output: OutputFormat,
    /// `--trace FILE`: requests, stream lines and tool calls as JSON lines.
    pub trace: Option<PathBuf>,
    /// `--replay FILE` (and `--replay-loose`): run a traced session again, offline.
    pub replay: Option<Replay>,
    /// `--sandbox` and `CORECODER_ENV_ALLOW`, for the bash tool.
    pub(crate) shell: ShellSafety,
    /// Destructive commands `--yes` may run, by name (`--allow-destructive`).
    pub(crate) allow_destructive: Vec<String>,
    /// `--trust-project`: trust the project's files as they are, and remember it.
    pub(crate) trust_project: bool,
    /// The project's hooks, MCP and `.env` files, and whether they are trusted.
    pub project: Project,
    /// The arguments and environment the process started with, to read them again.
    pub(crate) launch: Launch,
}

/// How `-p` reports: plain text, one JSON object at the end, or one JSON event per line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

/// `--replay FILE`: the trace to run again, and whether to go on past a difference.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    pub(crate) file: PathBuf,
    pub(crate) on_divergence: OnDivergence,
}

/// Which earlier session to continue.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Resume {
    /// `-r ID`
    Id(String),
    /// `-c`: the most recent session started in this directory.
    LatestHere,
}

/// What the process was started with: its arguments and environment, read once. Kept because
/// `secrets::hide_from_children` then wipes their secret parts from the process itself, and
/// the trust question reads the configuration again. `Debug` shows no values: they hold keys.
#[derive(Clone, PartialEq, Default)]
pub(crate) struct Launch {
    pub(crate) args: Vec<OsString>,
    pub(crate) env: HashMap<String, String>,
}

impl Launch {
    /// The process's arguments and environment, now.
    pub(crate) fn capture() -> Launch {
        Launch {
            args: std::env::args_os().skip(1).collect(),
            env: std::env::vars().collect(),
        }
    }
}

impl fmt::Debug for Launch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (args, vars) = (self.args.len(), self.env.len());
        write!(f, "Launch {{ {args} arguments, {vars} variables }}")
    }
}

/// Flags override variables: build the config from `env`, then apply the flags on top.
pub(crate) fn parse(args: Vec<OsString>, env: &variables::Vars) -> Result<Invocation, Error> {
    use lexopt::prelude::*;
    let mut config = config_from(env)?;
    let mut run = RunOptions {
        config: config.clone(),
        prompt: None,
        approve_all: false,
        max_rounds: 50,
        demo: false,
        acp: false,
        resume: None,
        model_from_flag: false,
        output: OutputFormat::Text,
        trace: None,
        replay: None,
        shell: ShellSafety::from_env(env).map_err(Error::Usage)?,
        allow_destructive: destructive_names("CORECODER_ALLOW_DESTRUCTIVE", env)?,
        trust_project: false,
        project: Project::default(),
        launch: Launch::default(),
    };
    let (mut provider, mut url_flag, mut key_flag) = (None, false, false);
    let (mut replay, mut loose) = (None, false);
    let mut parser = lexopt::Parser::from_args(args);
    loop {
        one_dash_long(&mut parser)?;
        let Some(arg) = parser.next().map_err(usage)? else {
            break;
        };
        match arg {
            Short('h') | Long("help") => return Ok(Invocation::Help),
            Short('v') | Long("version") => return Ok(Invocation::Version),
            Short('p') | Long("prompt") => run.prompt = Some(text_value(&mut parser, "--prompt")?),
            Short('y') | Long("yes") => run.approve_all = true,
            Short('m') | Long("model") => {
                config.model = not_blank(&mut parser, "--model", "model name")?;
                run.model_from_flag = true;
            }
            Long("base-url") => {
                config.base_url = text_value(&mut parser, "--base-url")?;
                url_flag = true;
            }
            Long("api-key") => {
                config.api_key = Some(not_blank(&mut parser, "--api-key", "key")?);
                key_flag = true;
            }
            Long("provider") => provider = Some(text_value(&mut parser, "--provider")?),
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
            Long("acp") => run.acp = true,
            Long("trust-project") => run.trust_project = true,
            Long("trace") => run.trace = Some(PathBuf::from(text_value(&mut parser, "--trace")?)),
            Long("replay") => replay = Some(PathBuf::from(text_value(&mut parser, "--replay")?)),
            Long("replay-loose") => loose = true,
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
                        let why = "is not text, json or stream-json";
                        return Err(Error::Usage(format!("--output-format: '{other}' {why}")));
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
    let flagged = variables::Flagged {
        url: url_flag,
        key: key_flag,
        model: run.model_from_flag,
    };
    let url_from = variables::settle_dialect(&mut config, env, provider.as_deref(), flagged)?;
    check_base_url(&config.base_url, url_from)?;
    run.config = config;
    run.replay = replay_of(replay, loose)?;
    check_run(&run)?;
    Ok(Invocation::Run(Box::new(run)))
}

/// `--replay FILE`, stopping at a difference unless `--replay-loose` came too (alone it is a
/// usage error: it would replay nothing).
fn replay_of(file: Option<PathBuf>, loose: bool) -> Result<Option<Replay>, Error> {
    let on_divergence = match loose {
        true => OnDivergence::GoOn,
        false => OnDivergence::Stop,
    };
    match file {
        Some(file) => Ok(Some(Replay {
            file,
            on_divergence,
        })),
        None if loose => Err(Error::Usage(
            "--replay-loose works only with --replay FILE".to_string(),
        )),
        None => Ok(None),
    }
}

/// Combinations of flags that would do nothing useful, or spend money on nothing.
fn check_run(run: &RunOptions) -> Result<(), Error> {
    let replaying = run.replay.is_some();
    let why = if run.prompt.as_deref().is_some_and(|p| p.trim().is_empty()) {
        "-p: the task is empty (give it as -p \"TEXT\", or -p - to read it from stdin)"
    } else if run.max_rounds == 0 {
        "--max-rounds: must be at least 1"
    } else if run.output != OutputFormat::Text && (run.prompt.is_none() || replaying) {
        "--output-format works only with -p, and not with --replay"
    } else if replaying && (run.demo || run.resume.is_some()) {
        "--replay starts from the trace: not with --demo, -r or -c"
    } else if run.demo && (run.prompt.is_some() || run.resume.is_some()) {
        "--demo runs its own offline task: not with -p, -r or -c"
    } else {
        return Ok(());
    };
    Err(Error::Usage(why.to_string()))
}

fn text_value(parser: &mut lexopt::Parser, flag: &str) -> Result<String, Error> {
    let value = (parser.value()).map_err(|_| Error::Usage(format!("{flag} needs a value")))?;
    let not_utf8 = |_| Error::Usage(format!("{flag}: the value is not valid UTF-8"));
    value.into_string().map_err(not_utf8)
}

/// The value of `--model` or `--api-key`, which may not be blank (`--model ""` was sent).
fn not_blank(parser: &mut lexopt::Parser, flag: &str, what: &str) -> Result<String, Error> {
    let text = text_value(parser, flag)?;
    match text.trim().is_empty() {
        true => Err(Error::Usage(format!("{flag}: the {what} is empty"))),
        false => Ok(text),
    }
}

/// The long flags but help and version (`-help` is `-h`), for `-yes`: lexopt reads `-y -e -s`.
const LONG_FLAGS: &str = "prompt yes model base-url api-key provider max-rounds sandbox add-dir \
    allow-destructive demo acp trust-project trace replay replay-loose max-cost output-format \
    resume continue";

/// The next argument (not a flag's value: those are taken already) is a long flag given one
/// dash (`-yes`, `-model=x`): a usage error naming its two-dash form.
fn one_dash_long(parser: &mut lexopt::Parser) -> Result<(), Error> {
    let raw = parser.try_raw_args();
    let Some(arg) = raw.as_ref().and_then(|raw| raw.peek()?.to_str()) else {
        return Ok(());
    };
    let one_dash = arg.strip_prefix('-').filter(|rest| !rest.starts_with('-'));
    let name = one_dash.and_then(|rest| rest.split('=').next());
    match name.filter(|name| LONG_FLAGS.split_whitespace().any(|flag| flag == *name)) {
        Some(name) => Err(Error::Usage(format!(
            "unknown option '{arg}': a long option takes two dashes: --{name} \
             (see corecoder --help)"
        ))),
        None => Ok(()),
    }
}

fn usage(e: lexopt::Error) -> Error {
    Error::Usage(format!("{e} (see corecoder --help)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::ToolChoice;

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
    fn the_provider_flag_and_the_base_url_choose_the_dialect() {
        use crate::core::config::Dialect;
        let env = [("OPENAI_API_KEY", "sk-o"), ("ANTHROPIC_API_KEY", "sk-a")];
        let config = |args: &[&str]| match check(args, &env) {
            Ok(Invocation::Run(run)) => run.config,
            other => panic!("{other:?}"),
        };
        let named = config(&["--provider", "anthropic"]);
        assert_eq!(named.dialect, Dialect::Anthropic);
        assert_eq!(named.api_key.as_deref(), Some("sk-a"));
        assert_eq!(named.base_url, "https://api.anthropic.com");
        let by_url = config(&["--base-url", "https://api.anthropic.com", "-m", "claude-x"]);
        assert_eq!(
            (by_url.dialect, by_url.model.as_str()),
            (Dialect::Anthropic, "claude-x")
        );
        let keyed = config(&["--api-key", "sk-flag", "--provider", "anthropic"]);
        assert_eq!(keyed.api_key.as_deref(), Some("sk-flag"));
        assert_eq!(
            config(&["--provider", "openai"]).api_key.as_deref(),
            Some("sk-o")
        );
        let responses = config(&["--provider", "responses"]);
        assert_eq!(responses.dialect, Dialect::Responses);
        assert_eq!(responses.api_key.as_deref(), Some("sk-o"));
        assert_eq!(responses.base_url, "https://api.openai.com/v1");
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
        let err = check(&[], &[("CORECODER_TOOL_CHOICE", "read file")]).unwrap_err();
        assert!(
            err.contains("CORECODER_TOOL_CHOICE") && err.contains("'read file'"),
            "{err}"
        );
        let run = run_options(&[], &[("CORECODER_TOOL_CHOICE", "auto")]);
        assert_eq!(run.config.tool_choice, Some(ToolChoice::Auto));
        let run = run_options(&[], &[("CORECODER_TOOL_CHOICE", "read_file")]);
        let named = Some(ToolChoice::Tool("read_file".to_string()));
        assert_eq!(run.config.tool_choice, named);
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
    fn replay_loose_goes_with_replay_in_either_order() {
        let want = |on_divergence| {
            let file = PathBuf::from("t.jsonl");
            Some(Replay {
                file,
                on_divergence,
            })
        };
        assert_eq!(
            run_options(&["--replay", "t.jsonl"], &[]).replay,
            want(OnDivergence::Stop)
        );
        let loose = run_options(&["--replay-loose", "--replay", "t.jsonl"], &[]);
        assert_eq!(loose.replay, want(OnDivergence::GoOn));
        let err = check(&["--replay-loose"], &[]).unwrap_err();
        assert!(err.contains("--replay FILE"), "{err}");
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

    /// `LONG_FLAGS` is every long flag `--help` names but `--help` and `--version`.
    #[test]
    fn the_one_dash_check_knows_every_long_flag() {
        let help = crate::app::help::HELP;
        let named = (help.split(|c: char| c.is_whitespace() || c == ','))
            .filter_map(|word| word.strip_prefix("--"))
            .filter(|name| {
                name.len() > 1 && name.chars().all(|c| c.is_ascii_lowercase() || c == '-')
            });
        let mut named: Vec<&str> = named.filter(|n| !["help", "version"].contains(n)).collect();
        named.sort();
        named.dedup();
        let mut known: Vec<&str> = LONG_FLAGS.split_whitespace().collect();
        known.sort();
        assert_eq!(named, known);
        let err = check(&["-yes"], &[]).unwrap_err();
        assert!(err.starts_with("unknown option '-yes': a long option takes two dashes: --yes"));
        assert!(matches!(check(&["-help"], &[]), Ok(Invocation::Help)));
    }
}
