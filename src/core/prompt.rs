//! What we tell the model: the system prompt, rebuilt at the start of every round, and the
//! request compaction (`context.rs`) sends when it asks for a summary.
//!
//! The system prompt tells the model where it is (working directory, OS, date), what it can do
//! (the tools), how to behave (the rules) and what it planned (the todo list). It sends nothing
//! itself.

use crate::core::consent::Plan;
use crate::core::dispatch::AgentKind;
use crate::core::message::{Message, Role};
use crate::tools::support::text::{civil_from_days, truncate_middle};
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

/// Caps that keep the summary request small.
const RENDER_TOOL_CHARS: usize = 2_000;
const RENDER_OTHER_CHARS: usize = 4_000;
pub(crate) const RENDER_TOTAL_CHARS: usize = 100_000;

/// Everything the prompt describes, as it stands at the start of a round.
pub struct Situation<'a> {
    pub cwd: &'a Path,
    pub tools: &'a [String],
    pub kind: AgentKind,
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
    if now.kind == AgentKind::SubAgent {
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

/// The request compaction sends to condense `old`: instructions, the task lines (`task`: the
/// first task and the latest request), then the messages rendered as plain text.
pub fn summary_prompt(old: &[Message], task: &str) -> Vec<Message> {
    let instructions = "You condense the earlier part of a coding agent's conversation so the \
        agent can continue with less context. Keep: the user's task and its current state (what \
        is done, what remains), file paths read or changed, decisions and their reasons, errors \
        met and whether they were fixed. Drop command output, code listings and anything that \
        can be read again from disk. Reply with the summary only, in plain text.";
    let mut entries: Vec<String> = Vec::new();
    let mut total = 0;
    // Newest first, so the cap drops the oldest messages; the task lines keep the task.
    for message in old.iter().rev() {
        let entry = render(message);
        total += entry.len();
        if total > RENDER_TOTAL_CHARS {
            let omitted = old.len() - entries.len();
            entries.push(format!("[... {omitted} earlier messages omitted ...]"));
            break;
        }
        entries.push(entry);
    }
    entries.reverse();
    let conversation = entries.join("\n\n");
    let request = format!("{task}\n\nSummarise this conversation:\n\n{conversation}");
    vec![Message::system(instructions), Message::user(&request)]
}

fn render(message: &Message) -> String {
    let (role, cap) = match message.role {
        Role::System => ("system", RENDER_OTHER_CHARS),
        Role::User => ("user", RENDER_OTHER_CHARS),
        Role::Assistant => ("assistant", RENDER_OTHER_CHARS),
        Role::Tool => ("tool result", RENDER_TOOL_CHARS),
    };
    let content = message.content.as_deref().unwrap_or("");
    let mut text = format!("[{role}] {}", truncate_middle(content, cap));
    for call in &message.tool_calls {
        let arguments = truncate_middle(&call.arguments, 300);
        text.push_str(&format!("\n  called {}({arguments})", call.name));
    }
    text
}

/// Today's UTC date as YYYY-MM-DD, from the civil-from-days algorithm (no date crate needed).
fn today() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}
