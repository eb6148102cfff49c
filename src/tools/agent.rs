//! The `agent` tool: hand a self-contained task to a sub-agent and get its final answer.
//!
//! The sub-agent has a fresh history but shares the parent's connection, usage totals,
//! consent rules and Ctrl+C flag. It gets every tool except `agent` (so no recursion), runs
//! its calls inline and stops after 20 rounds. Only its final text comes back.

use super::{Outcome, ToolContext};
use crate::agent::{Agent, Finish};
use serde::Deserialize;
use serde_json::{Value, json};

const MAX_ROUNDS: u32 = 20;
const MAX_ANSWER_CHARS: usize = 5_000;

#[derive(Debug, Deserialize)]
pub struct Args {
    task: String,
}

pub fn schema() -> Value {
    json!({"type": "function", "function": {
        "name": "agent",
        "description": "Give a self-contained task to a sub-agent with a fresh context and the \
            same tools (except agent). Useful for a search or a side job whose details would \
            clutter this conversation. Returns the sub-agent's final answer.",
        "parameters": {"type": "object", "properties": {
            "task": {"type": "string", "description": "The task, with all the context it needs"}
        }, "required": ["task"]}
    }})
}

pub fn run(args: Args, ctx: &ToolContext) -> Result<Outcome, String> {
    if args.task.trim().is_empty() {
        return Err("the task is empty".to_string());
    }
    let mut sub_agent = Agent::sub_agent(ctx, MAX_ROUNDS);
    // The sub-agent's stream and tool lines are not shown: only its answer matters here.
    match sub_agent.run(&args.task, &mut |_| {}) {
        Ok(Finish::Answer(text)) => Ok(Outcome::text(cut(&text))),
        Ok(Finish::RoundCap) => Err(format!("the sub-agent stopped after {MAX_ROUNDS} rounds")),
        Err(e) => Err(format!("the sub-agent failed: {e}")),
    }
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
