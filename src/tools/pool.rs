//! The pool: 8 worker threads that live with the agent and run the calls of one reply in
//! parallel, outcomes back in call order whatever order they finish in. The batch hands it the
//! allowed calls (`Pool::run_batch`); early start hands it one call as the reply streams
//! (`Pool::start`). Each call goes through `dispatch::run`; the pool asks no consent and
//! touches no history. Every call starts in the same tracked cwd; the loop merges `cd` effects
//! afterwards. Calls that write the same file form one chain and run one after the other, so
//! two edits of a file never race. Why a pool that lives with the agent, not a scope per
//! batch: DESIGN.md, "The pool".

use crate::core::dispatch::run;
use crate::core::message::{Outcome, ToolCall};
use crate::tools::ToolContext;
use crate::tools::support::files::resolve;
use crossbeam_channel::{Receiver, Sender};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

const WORKERS: usize = 8;

pub struct Pool {
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
    pub fn run_batch(&self, calls: &[&ToolCall], ctx: &ToolContext) -> Vec<Outcome> {
        let (done, results) = crossbeam_channel::unbounded();
        for chain in chains(calls, ctx) {
            self.send(chain, ctx, done.clone());
        }
        // Only the jobs hold senders now, so `results` ends when the last job is done.
        drop(done);
        let mut outcomes: Vec<Option<Outcome>> = vec![None; calls.len()];
        for (index, outcome) in results.iter() {
            outcomes[index] = Some(outcome);
        }
        let lost = || Outcome::text("Error: the tool call did not return a result");
        outcomes
            .into_iter()
            .map(|o| o.unwrap_or_else(lost))
            .collect()
    }

    /// Start one call and return at once: its outcome arrives on the receiver (early start,
    /// `extras/early.rs`, collects it when the batch runs).
    pub fn start(&self, call: &ToolCall, ctx: &ToolContext) -> Receiver<(usize, Outcome)> {
        let (done, result) = crossbeam_channel::bounded(1);
        self.send(vec![(0, call.clone())], ctx, done);
        result
    }

    /// Queue one chain of calls (each with its index) and return at once: each outcome arrives
    /// on `done`.
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

impl Default for Pool {
    fn default() -> Pool {
        Pool::new()
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
    let mut writers: Vec<(PathBuf, usize)> = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        let entry = (index, (*call).clone());
        let target = written_file(call).map(|path| resolve(&ctx.cwd, &path));
        let earlier = target.as_ref().and_then(|t| {
            writers
                .iter()
                .find(|(path, _)| path == t)
                .map(|(_, chain)| *chain)
        });
        match earlier {
            Some(chain) => chains[chain].push(entry),
            None => {
                if let Some(path) = target {
                    writers.push((path, chains.len()));
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
