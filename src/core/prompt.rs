//! The system prompt, rebuilt at the start of every round.
//!
//! It tells the model where it is (working directory, OS, date), what it can do (the tools),
//! how to behave (the rules) and what it planned (the todo list). It sends nothing itself.

use crate::core::consent::Plan;
use crate::core::dispatch::ToolSet;
use crate::tools::support::text::civil_from_days;
use crate::tools::todo_write::{self, Todo};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

const RULES: &str = "\
You are corecoder, a coding agent working in the user's project through tools.
Rules:
- Read before you change: look at a file (read_file, grep, glob) before editing it.
- Prefer edit_file for small changes; old_string must match the file exactly and only once.
- Run the project's tests or the program after a change, and fix what fails.
- Paths are relative to the working directory unless absolute. `cd` in bash persists.
- For a task of several steps, keep a todo list with todo_write and update it as you go.
- When a tool fails, read the error and try a different approach; do not repeat a failing call.
- Be brief. When you are done, say what you changed and how you checked it.";

const PLAN_MODE: &str = "\nPLAN MODE IS ON. Do not change anything: bash, write_file, edit_file \
and agent will be refused. Investigate with read_file, glob and grep, then present a numbered \
plan and stop. The user will approve it before you carry it out.\n";

/// Everything the prompt describes, as it stands at the start of a round.
pub struct Situation<'a> {
    pub cwd: &'a Path,
    pub tools: &'a [String],
    pub tool_set: ToolSet,
    pub plan: Plan,
    pub todos: &'a [Todo],
    /// `AGENTS.md` and friends, already joined under their headings.
    pub instructions: &'a str,
}

pub fn system_prompt(now: &Situation) -> String {
    let mut prompt = format!(
        "{RULES}\n\nWorking directory: {}\nOS: {}\nDate: {}\nTools: {}\n",
        now.cwd.display(),
        std::env::consts::OS,
        today(),
        now.tools.join(", "),
    );
    let (plan, todos) = (now.plan, now.todos);
    if !now.instructions.is_empty() {
        prompt.push_str("\n# Project instructions\n\n");
        prompt.push_str(now.instructions);
    }
    if now.tool_set == ToolSet::WithoutAgent {
        prompt.push_str("You are a sub-agent: finish the task you were given and report back.\n");
    }
    if plan == Plan::On {
        prompt.push_str(PLAN_MODE);
    }
    if !todos.is_empty() {
        prompt.push_str("\nCurrent todo list:\n");
        prompt.push_str(&todo_write::render(todos));
        prompt.push('\n');
    }
    prompt
}

/// Today's UTC date as YYYY-MM-DD, from the civil-from-days algorithm (no date crate needed).
fn today() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}
