//! The `agent` tool: hand self-contained tasks to sub-agents and get their final answers.
//!
//! One `task` runs one sub-agent; `tasks: [{name, task}]` (1 to 8) runs a team, at most four
//! at a time on scoped threads, reports in input order under their names. Each worker is the
//! same `Agent` loop with a fresh history and todo list, sharing the parent's connection, usage
//! totals, consent rules and Ctrl+C flag. Workers get every tool except `agent`, and a call to
//! it anyway is refused like any tool not offered (`batch::rule`): nesting is one level deep.
//! They run their calls inline, stop after 20 rounds, and cannot ask the user anything.

use crate::core::agent::Agent;
use crate::core::consent::{Consent, Mode};
use crate::core::event::{CUT_OFF_MESSAGE, Finish};
use crate::core::message::Outcome;
use crate::core::prompt::AgentKind;
use crate::tools::ToolContext;
use serde::Deserialize;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the model is told about this tool (plain data, with the other tools' schemas).
pub(crate) use crate::tools::schemas::agent as schema;

const MAX_ROUNDS: u32 = 20;
const MAX_ANSWER_CHARS: usize = 5_000;
const MAX_WORKERS: usize = 8;
const AT_A_TIME: usize = 4;

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    task: Option<String>,
    tasks: Option<Vec<Worker>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Worker {
    name: String,
    task: String,
}

pub fn run(args: Args, ctx: &ToolContext) -> Result<Outcome, String> {
    match (args.task, args.tasks) {
        (Some(task), None) => one(&task, ctx).map(Outcome::text),
        (None, Some(team)) if (1..=MAX_WORKERS).contains(&team.len()) => {
            Ok(Outcome::text(run_team(&team, ctx)))
        }
        _ => Err(format!(
            "give either `task`, or `tasks` with 1 to {MAX_WORKERS} entries"
        )),
    }
}

/// One sub-agent, start to finish.
fn one(task: &str, ctx: &ToolContext) -> Result<String, String> {
    if task.trim().is_empty() {
        return Err("the task is empty".to_string());
    }
    // Fresh history, no `agent` tool, calls run inline, the session-wide extras shared (no
    // session log, no checkpoints of its own).
    let from = &ctx.sub_agent;
    let mut sub_agent = Agent::new(
        from.llm.clone(),
        ctx.cwd.clone(),
        sub_agent_consent(&from.consent),
    );
    sub_agent.kind = AgentKind::SubAgent;
    sub_agent.max_rounds = MAX_ROUNDS;
    (sub_agent.extras, sub_agent.cancel) = (from.extras.for_sub_agent(), ctx.cancel.clone());
    // The sub-agent's stream and tool lines are not shown: only its answer matters here.
    match sub_agent.run(task, &mut |_| {}) {
        Ok(Finish::Answer(text)) => Ok(cut(&text)),
        Ok(Finish::CutOff(text)) => Ok(format!("{}\n{CUT_OFF_MESSAGE}", cut(&text))),
        Ok(Finish::RoundCap) => Err(format!("the sub-agent stopped after {MAX_ROUNDS} rounds")),
        Err(e) => Err(format!("the sub-agent failed: {e}")),
    }
}

/// Up to four workers pull the next task until none is left; one failing leaves the others be.
fn run_team(team: &[Worker], ctx: &ToolContext) -> String {
    let next = AtomicUsize::new(0);
    let reports: Vec<Mutex<String>> = team.iter().map(|_| Mutex::new(String::new())).collect();
    std::thread::scope(|scope| {
        for _ in 0..AT_A_TIME.min(team.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(worker) = team.get(i) else {
                        break;
                    };
                    let report = match one(&worker.task, ctx) {
                        Ok(answer) => answer,
                        Err(why) => format!("Error: {why}"),
                    };
                    if let Ok(mut slot) = reports[i].lock() {
                        *slot = report;
                    }
                }
            });
        }
    });
    let sections = team.iter().zip(reports).map(|(worker, report)| {
        let report = report.into_inner().unwrap_or_default();
        format!("## {}\n{report}", worker.name)
    });
    sections.collect::<Vec<_>>().join("\n\n")
}

fn cut(text: &str) -> String {
    match text.chars().count() > MAX_ANSWER_CHARS {
        true => {
            let head: String = text.chars().take(MAX_ANSWER_CHARS).collect();
            format!("{head}\n[sub-agent answer cut at {MAX_ANSWER_CHARS} characters]")
        }
        false => text.to_string(),
    }
}
/// A sub-agent runs on a worker thread, where no one can be asked: it keeps the session's
/// consent rules but turns "ask" into "refuse".
pub(crate) fn sub_agent_consent(session: &Consent) -> Consent {
    let mut consent = session.clone();
    if consent.mode == Mode::Ask {
        consent.mode = Mode::ReadOnly;
    }
    consent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_schema_fits_its_args_and_caps_a_team_at_max_workers() {
        crate::tools::test_support::check_schema_fits::<Args>(&schema());
        let tasks = &schema()["function"]["parameters"]["properties"]["tasks"];
        assert_eq!(tasks["maxItems"], MAX_WORKERS);
    }
}
