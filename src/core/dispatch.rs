//! The eight built-in tools: their schemas, the one `match` that dispatches a call, and which
//! calls may start before the reply has finished streaming.
//!
//! The agent loop hands a call here (inline, or from a pool worker) and gets back an `Outcome`:
//! the text the model will read, plus an `Effect` the loop applies on the main thread in call
//! order (a new working directory, a new todo list). Tools never touch the history and never
//! return an `Error`: every failure is text for the model.

use crate::core::consent::{Consent, Verdict};
use crate::core::llm::Llm;
use crate::extras::account::Account;
use crate::extras::hooks::Hooks;
use crate::extras::instructions::Instructions;
use crate::extras::mcp::Servers;
use crate::extras::sandbox::ShellSafety;
use crate::tools::support::text::{echo, truncate_middle};
use crate::tools::{agent, bash, edit_file, glob, grep, read_file, todo_write, write_file};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

/// Most characters of any failure text: a backstop for echoes `echo` does not cover (a serde
/// error quoting a value, an MCP server's error).
const MAX_FAILURE_CHARS: usize = 2000;

/// Everything a tool may look at while it runs. Cloned into each pool job.
#[derive(Clone)]
pub struct ToolContext {
    /// The session's tracked working directory when this call started.
    pub cwd: PathBuf,
    /// Only the `agent` tool uses these: a sub-agent shares the connection, usage and consent.
    pub llm: Arc<Llm>,
    /// The session's ledger, trace and fallback, shared with sub-agents.
    pub account: Account,
    pub consent: Consent,
    /// Set by Ctrl+C; long-running tools poll it and stop early.
    pub cancel: Arc<AtomicBool>,
    /// Handed on to sub-agents, so project rules bind them too.
    pub instructions: Option<Instructions>,
    /// The session's hooks; sub-agents run them too.
    pub hooks: Arc<Hooks>,
    /// MCP servers whose tools join ours as `mcp__SERVER__TOOL`.
    pub mcp: Arc<Servers>,
    /// The bash tool's sandbox and environment filter; sub-agents keep them.
    pub shell: ShellSafety,
    /// Reading threads still running, blocked ones included (`bounded`); shared by sub-agents.
    pub reads_running: Arc<AtomicUsize>,
}

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub text: String,
    pub effect: Effect,
}

/// A change to session state, applied by the loop after the batch, in call order.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    None,
    ChangeDir(PathBuf),
    SetTodos(Vec<todo_write::Todo>),
}

impl Outcome {
    pub fn text(text: impl Into<String>) -> Outcome {
        Outcome {
            text: text.into(),
            effect: Effect::None,
        }
    }
}

/// Which tools a model is offered. Sub-agents get no `agent` tool, so they cannot recurse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSet {
    All,
    WithoutAgent,
}

pub fn schemas(set: ToolSet) -> Vec<Value> {
    let mut list = vec![
        bash::schema(),
        read_file::schema(),
        write_file::schema(),
        edit_file::schema(),
        glob::schema(),
        grep::schema(),
        todo_write::schema(),
    ];
    if set == ToolSet::All {
        list.push(agent::schema());
    }
    list
}

/// Mutating tools need consent, and so does every MCP tool (we cannot know what it does);
/// read-only ones always run. (An unknown name is not run at all: `run` answers it.)
pub fn needs_consent(name: &str) -> bool {
    matches!(name, "bash" | "write_file" | "edit_file" | "agent") || name.starts_with("mcp__")
}

/// Tools that only look: they may start before the reply has finished streaming.
pub fn is_read_only(name: &str) -> bool {
    matches!(name, "read_file" | "glob" | "grep")
}

/// What an MCP server says about one of its tools (`annotations.readOnlyHint` in `tools/list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerHint {
    ReadOnly,
    Unmarked,
}

/// May this call start while the reply still streams, before the batch settles consent? Our
/// read-only tools may: they need no consent. An MCP tool may only when its server marks it
/// read-only *and* consent would run it without asking anyway (`--yes`, or "always" for this
/// tool), never in plan mode or where it would be asked about or refused. The MCP spec says
/// annotations are untrusted hints, so a hint alone must never let a call skip consent: it
/// only lets a call the user already allowed start sooner. (PreToolUse hooks, which must see
/// every call before it runs, turn early start off altogether: `Agent::prepare_early_start`;
/// a call the loop guard will refuse is not started either: `Agent::start_early`.)
pub fn may_start_early(name: &str, hint: ServerHint, consent: &Consent) -> bool {
    if is_read_only(name) {
        return true;
    }
    let allowed = consent.verdict(name) == Verdict::Run;
    name.starts_with("mcp__") && hint == ServerHint::ReadOnly && allowed
}

/// The short form of a call shown to the user: `bash(cargo test)`'s `cargo test`.
pub fn summary(name: &str, arguments: &str) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let key = match name {
        "bash" => "command",
        "glob" | "grep" => "pattern",
        "agent" => "task",
        _ => "file_path",
    };
    let text = match (name, args.get(key).and_then(Value::as_str)) {
        ("agent", None) => {
            let count = args
                .get("tasks")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            format!("team of {count}")
        }
        ("todo_write", _) => {
            let count = args
                .get("tasks")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            format!("{count} tasks")
        }
        (_, Some(text)) => text.to_string(),
        // MCP tools and the like: the first text argument says the most.
        (_, None) => (args.as_object().into_iter().flatten())
            .find_map(|(_, value)| value.as_str().map(String::from))
            .unwrap_or_default(),
    };
    let line = text.lines().next().unwrap_or("");
    match line.chars().count() > 80 || text.contains('\n') {
        true => format!("{}…", line.chars().take(80).collect::<String>()),
        false => line.to_string(),
    }
}

/// Run one call. `arguments` is the raw JSON text the model streamed. A panic in a tool is
/// caught here, so it is a failed call on every path (inline, pool worker, sub-agent), never
/// the end of the session.
pub fn run(name: &str, arguments: &str, ctx: &ToolContext) -> Outcome {
    caught(name, || dispatch(name, arguments, ctx))
}

/// `call()`, or the failed call the model reads if it panics. (The panic's message still goes
/// to stderr through the default hook, so a bug is seen; the session goes on.)
fn caught(name: &str, call: impl FnOnce() -> Outcome) -> Outcome {
    catch_unwind(AssertUnwindSafe(call)).unwrap_or_else(|panic| {
        let why = (panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let name = echo(name);
        Outcome::text(format!("Error executing {name}: panicked: {}", echo(&why)))
    })
}

fn dispatch(name: &str, arguments: &str, ctx: &ToolContext) -> Outcome {
    let args: Value = match serde_json::from_str(arguments) {
        Ok(value) => value,
        Err(e) => return bad_arguments(name, &format!("invalid JSON ({e})")),
    };
    // One arm per tool, so a debugger can step straight into the one that runs.
    let result = match name {
        "bash" => parse(name, args).map(|a| bash::run(a, ctx)),
        "read_file" => parse(name, args).map(|a| read_file::run(a, ctx)),
        "write_file" => parse(name, args).map(|a| write_file::run(a, ctx)),
        "edit_file" => parse(name, args).map(|a| edit_file::run(a, ctx)),
        "glob" => parse(name, args).map(|a| glob::run(a, ctx)),
        "grep" => parse(name, args).map(|a| grep::run(a, ctx)),
        "todo_write" => parse(name, args).map(|a| todo_write::run(a, ctx)),
        "agent" => parse(name, args).map(|a| agent::run(a, ctx)),
        _ if name.starts_with("mcp__") => Ok(ctx.mcp.call(name, arguments).map(Outcome::text)),
        _ => return Outcome::text(format!("Error: unknown tool '{}'", echo(name))),
    };
    match result {
        Err(bad) => bad,
        Ok(Ok(outcome)) => outcome,
        Ok(Err(failure)) => {
            let failure = truncate_middle(&failure, MAX_FAILURE_CHARS);
            Outcome::text(format!("Error executing {}: {failure}", echo(name)))
        }
    }
}

/// Arguments that do not fit the schema are the model's mistake, told apart from a failure
/// while running so it knows to fix the call rather than the world.
fn parse<T: DeserializeOwned>(name: &str, args: Value) -> Result<T, Outcome> {
    serde_json::from_value(args).map_err(|e| bad_arguments(name, &e.to_string()))
}

fn bad_arguments(name: &str, why: &str) -> Outcome {
    let (name, why) = (echo(name), truncate_middle(why, MAX_FAILURE_CHARS));
    Outcome::text(format!("Error: bad arguments for {name}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(name: &str, arguments: &str) -> String {
        run(
            name,
            arguments,
            &crate::tools::test_support::test_context(&std::env::temp_dir()),
        )
        .text
    }

    #[test]
    fn failures_are_results_that_say_whose_fault_they_are() {
        let invalid = check("read_file", "{\"file_path\": ");
        assert!(invalid.starts_with("Error: bad arguments for read_file: invalid JSON"));
        let missing = check("bash", "{}");
        assert!(
            missing.starts_with("Error: bad arguments for bash:"),
            "{missing}"
        );
        assert!(missing.contains("command"), "{missing}");
        assert_eq!(check("teleport", "{}"), "Error: unknown tool 'teleport'");
    }

    #[test]
    fn a_panicking_tool_is_a_failed_call() {
        let outcome = caught("grep", || panic!("index out of bounds"));
        assert_eq!(
            outcome.text,
            "Error executing grep: panicked: index out of bounds"
        );
        // A panic on a reading thread comes back to the tool's thread and is caught the same.
        let ctx = crate::tools::test_support::test_context(&std::env::temp_dir());
        let limit = std::time::Duration::from_secs(5);
        let outcome = caught("read_file", || {
            crate::tools::support::bounded::off_thread(
                &ctx.cancel,
                &ctx.reads_running,
                limit,
                |_| -> Outcome { panic!("boom {}", 7) },
            )
            .unwrap()
        });
        assert_eq!(outcome.text, "Error executing read_file: panicked: boom 7");
    }

    #[test]
    fn echoes_of_huge_arguments_are_capped() {
        let huge = "p".repeat(1_000_000);
        assert_eq!(echo("short"), "short");
        let shown = echo(&huge);
        assert!(shown.len() < 300, "{}", shown.len());
        assert!(shown.contains("[1000000 characters]"), "{shown}");
        for (name, arguments) in [
            ("read_file", json!({"file_path": huge}).to_string()),
            ("grep", json!({"pattern": huge}).to_string()),
            ("grep", json!({"pattern": "x", "path": huge}).to_string()),
            ("glob", json!({"pattern": huge}).to_string()),
            ("glob", json!({"pattern": "*", "path": huge}).to_string()),
            (
                "write_file",
                json!({"file_path": huge, "content": ""}).to_string(),
            ),
            (
                "read_file",
                json!({"file_path": "a", "offset": huge}).to_string(),
            ),
            (huge.as_str(), "{}".to_string()),
        ] {
            let text = check(name, &arguments);
            assert!(text.len() < 2500, "{}: {}", echo(name), echo(&text));
        }
    }

    #[test]
    fn summaries_are_one_short_line() {
        assert_eq!(summary("bash", r#"{"command":"cargo test"}"#), "cargo test");
        assert_eq!(summary("read_file", r#"{"file_path":"a.rs"}"#), "a.rs");
        assert_eq!(summary("bash", r#"{"command":"a\nb"}"#), "a…");
        assert_eq!(summary("todo_write", r#"{"tasks":[{},{}]}"#), "2 tasks");
        assert_eq!(summary("glob", "not json"), "");
    }

    #[test]
    fn an_mcp_hint_starts_a_call_early_only_where_consent_would_run_it() {
        use crate::core::consent::{Mode, Plan};
        use ServerHint::{ReadOnly, Unmarked};
        let tool = "mcp__web__search";
        let yes = Consent::new(Mode::AllowAll);
        assert!(may_start_early(tool, ReadOnly, &yes));
        assert!(!may_start_early(tool, Unmarked, &yes));
        let mut ask = Consent::new(Mode::Ask);
        assert!(!may_start_early(tool, ReadOnly, &ask));
        ask.allow_always(tool).unwrap();
        assert!(may_start_early(tool, ReadOnly, &ask));
        assert!(!may_start_early("mcp__web__fetch", ReadOnly, &ask));
        // Plan mode and `-p` without `--yes` refuse MCP tools: no hint changes that.
        let mut plan = Consent::new(Mode::AllowAll);
        plan.plan = Plan::On;
        assert!(!may_start_early(tool, ReadOnly, &plan));
        assert!(!may_start_early(
            tool,
            ReadOnly,
            &Consent::new(Mode::ReadOnly)
        ));
        // A hint counts only for MCP tools; our own read-only tools need none.
        assert!(!may_start_early("bash", ReadOnly, &yes));
        assert!(may_start_early(
            "grep",
            Unmarked,
            &Consent::new(Mode::ReadOnly)
        ));
    }

    #[test]
    fn schemas_name_every_tool_once() {
        let names: Vec<String> = schemas(ToolSet::All)
            .iter()
            .map(|s| s["function"]["name"].as_str().unwrap_or("").to_string())
            .collect();
        let want = [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "grep",
            "todo_write",
            "agent",
        ];
        assert_eq!(names, want);
        assert_eq!(schemas(ToolSet::WithoutAgent).len(), 7);
    }
}
