//! The eight built-in tools: their schemas, the one `match` that dispatches a call, and the
//! pool of 8 worker threads that runs one reply's calls in parallel.
//!
//! The batch hands a call here (inline, or through the pool) and gets an `Outcome`
//! (`message.rs`). Tools never touch the history and never return an `Error`: every failure is
//! text for the model. MCP tools are reached through `ctx.mcp`. Consent is settled before;
//! nothing here asks.

use crate::core::message::{Outcome, ToolCall};
use crate::core::prompt::AgentKind;
use crate::tools::support::files::resolve;
use crate::tools::support::text::{echo, panic_message, truncate_middle};
use crate::tools::write_file;
use crate::tools::{ToolContext, agent, bash, edit_file, glob, grep, read_file, todo_write};
use crossbeam_channel::{Receiver, Sender};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

/// Most characters of any failure text: a backstop for echoes `echo` does not cover (a serde
/// error quoting a value, an MCP server's error).
const MAX_FAILURE_CHARS: usize = 2000;

pub(crate) fn schemas(kind: AgentKind) -> Vec<Value> {
    let mut list = vec![
        bash::schema(),
        read_file::schema(),
        write_file::schema(),
        edit_file::schema(),
        glob::schema(),
        grep::schema(),
        todo_write::schema(),
    ];
    if kind == AgentKind::Main {
        list.push(agent::schema());
    }
    list
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
        let (name, why) = (echo(name), echo(&panic_message(panic.as_ref())));
        Outcome::text(format!("Error executing {name}: panicked: {why}"))
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
        _ if name.starts_with("mcp__") => Ok(ctx
            .mcp
            .call(name, arguments, &ctx.cancel)
            .map(Outcome::text)),
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

// The pool: 8 workers that live with the agent, outcomes back in call order whatever order they
// finish in; calls that write the same file form one chain. Why not a scope per batch:
// DESIGN.md, "The pool".
const WORKERS: usize = 8;

pub(crate) struct Pool {
    /// `None` only while dropping: closing the channel is what stops the workers.
    jobs: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

/// A chain of calls that must run in order on one worker, each with its position in the batch.
struct Job {
    calls: Vec<(usize, ToolCall)>,
    ctx: ToolContext,
    done: Sender<(usize, Outcome)>,
}

impl Pool {
    pub fn new() -> Pool {
        let (jobs, queue) = crossbeam_channel::unbounded::<Job>();
        let workers = (0..WORKERS)
            .map(|_| {
                let queue = queue.clone();
                std::thread::spawn(move || work(queue))
            })
            .collect();
        Pool {
            jobs: Some(jobs),
            workers,
        }
    }

    /// Run every call and return their outcomes in call order.
    pub(crate) fn run_batch(&self, calls: &[&ToolCall], ctx: &ToolContext) -> Vec<Outcome> {
        let (done, results) = crossbeam_channel::unbounded();
        for chain in chains(calls, ctx) {
            self.send(chain, ctx, done.clone());
        }
        // Only the jobs hold senders now, so `results` ends when the last job is done.
        drop(done);
        let mut slots: Vec<Option<Outcome>> = vec![None; calls.len()];
        for (index, outcome) in results.iter() {
            slots[index] = Some(outcome);
        }
        let lost = || Outcome::text("Error: the tool call did not return a result");
        slots.into_iter().map(|o| o.unwrap_or_else(lost)).collect()
    }

    /// Start one call and return at once: its outcome arrives on the receiver (early start,
    /// `extras/early.rs`, collects it when the batch runs).
    pub(crate) fn start(&self, call: &ToolCall, ctx: &ToolContext) -> Receiver<(usize, Outcome)> {
        let (done, result) = crossbeam_channel::bounded(1);
        self.send(vec![(0, call.clone())], ctx, done);
        result
    }

    /// Queue one chain of calls (each with its index); each outcome arrives on `done`.
    fn send(
        &self,
        calls: Vec<(usize, ToolCall)>,
        ctx: &ToolContext,
        done: Sender<(usize, Outcome)>,
    ) {
        let ctx = ctx.clone();
        if let Some(jobs) = &self.jobs {
            let _ = jobs.send(Job { calls, ctx, done });
        }
    }
}

/// Closing the job channel ends each worker's loop; joining means no thread outlives the pool.
impl Drop for Pool {
    fn drop(&mut self) {
        self.jobs = None;
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

fn work(queue: Receiver<Job>) {
    for job in queue.iter() {
        for (index, call) in job.calls {
            // A panicking tool cannot take the worker with it: `tools::run` catches the panic.
            let outcome = if job.ctx.cancel.load(Ordering::Relaxed) {
                Outcome::text("[interrupted]")
            } else {
                run(&call.name, &call.arguments, &job.ctx)
            };
            let _ = job.done.send((index, outcome));
        }
    }
}

/// Group the batch into chains: a call that writes a file joins the chain of an earlier call
/// writing the same file; every other call is a chain of its own.
fn chains(calls: &[&ToolCall], ctx: &ToolContext) -> Vec<Vec<(usize, ToolCall)>> {
    let mut chains: Vec<Vec<(usize, ToolCall)>> = Vec::new();
    let mut writers: HashMap<PathBuf, usize> = HashMap::new();
    for (index, call) in calls.iter().enumerate() {
        let entry = (index, (*call).clone());
        let target = written_file(call).map(|path| resolve(&ctx.cwd, &path));
        match target.as_ref().and_then(|path| writers.get(path)) {
            Some(&chain) => chains[chain].push(entry),
            None => {
                if let Some(path) = target {
                    writers.insert(path, chains.len());
                }
                chains.push(vec![entry]);
            }
        }
    }
    chains
}

fn written_file(call: &ToolCall) -> Option<String> {
    if !matches!(call.name.as_str(), "write_file" | "edit_file") {
        return None;
    }
    let args: serde_json::Value = serde_json::from_str(&call.arguments).ok()?;
    Some(args.get("file_path")?.as_str()?.to_string())
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
    fn schemas_name_every_tool_once() {
        let names: Vec<String> = schemas(AgentKind::Main)
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
        assert_eq!(schemas(AgentKind::SubAgent).len(), 7);
    }

    use std::path::Path;

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: format!("call_{name}"),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn writes_to_one_file_share_a_chain() {
        let ctx = crate::tools::test_support::test_context(Path::new("/tmp/x"));
        let calls = [
            call("edit_file", r#"{"file_path":"a.txt"}"#),
            call("read_file", r#"{"file_path":"a.txt"}"#),
            call("write_file", r#"{"file_path":"/tmp/x/a.txt"}"#),
            call("edit_file", r#"{"file_path":"b.txt"}"#),
        ];
        let refs: Vec<&ToolCall> = calls.iter().collect();
        let shape: Vec<Vec<usize>> = chains(&refs, &ctx)
            .iter()
            .map(|chain| chain.iter().map(|(index, _)| *index).collect())
            .collect();
        assert_eq!(shape, vec![vec![0, 2], vec![1], vec![3]]);
    }

    #[test]
    fn outcomes_come_back_in_call_order() {
        let dir = std::env::temp_dir();
        let ctx = crate::tools::test_support::test_context(&dir);
        let calls: Vec<ToolCall> = (0..12)
            .map(|i| call("nope", &format!("{{\"i\":{i}}}")))
            .collect();
        let refs: Vec<&ToolCall> = calls.iter().collect();
        let outcomes = Pool::new().run_batch(&refs, &ctx);
        assert_eq!(outcomes.len(), 12);
        assert!(
            outcomes
                .iter()
                .all(|o| o.text == "Error: unknown tool 'nope'")
        );
    }
}
