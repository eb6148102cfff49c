//! What we tell the model, and how big it is: the system prompt, rebuilt every round from the
//! session as it started (where the model is, the rules); the task lines a summary
//! (`context.rs`) always carries; and the token estimate. It sends nothing. (What the summary
//! request says is `summary.rs`'.)
//! No tokenizer: a rough estimate is all compaction needs (`extras/calibration.rs` anchors it).

use crate::core::consent::Plan;
use crate::core::message::{Message, Role, ToolCall};
use crate::tools::support::text::one_line;
use crate::tools::support::todos::Todo;
use crate::tools::support::tokens::estimate_text;
use std::path::PathBuf;

const RULES: &str = "\
You are corecoder, a coding agent working in the user's project through tools.
Rules:
- Read a file (read_file, grep, glob) before you edit it.
- Prefer edit_file for small changes.
- Run the project's tests or the program after a change, and fix what fails.
- Paths are relative to the working directory unless absolute.
- For a task of several steps, keep a todo list with todo_write.
- When a tool fails, read the error and try a different approach; do not repeat a failing call.
- Be brief. When you are done, say what you changed and how you checked it.
What changes later (the working directory, plan mode, the todo list, the date, the project's
instructions) is told in a `[session state]` note at the end of a message; the newest holds.";

pub(crate) const SUMMARY_HEADER: &str = "[Summary of the earlier conversation]";
const ORIGINAL_TASK: &str = "Original task: ";
const LATEST_REQUEST: &str = "Latest user message: ";
const TASK_LINE_CHARS: usize = 1_000;

/// Which agent runs the loop: the one the user talks to, or one the `agent` tool started. A
/// sub-agent is offered no `agent` tool (so it cannot recurse) and runs its calls inline (it
/// already runs on a pool worker).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AgentKind {
    Main,
    SubAgent,
}

/// The session as it stands: the system prompt describes it as it was at the start, and stays
/// byte for byte the same all session; what changes later is told in a note at the end of the
/// newest message (`notes.rs`), so a provider's prompt cache serves the rest.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Situation {
    pub(crate) cwd: PathBuf,
    pub(crate) date: String,
    pub(crate) plan: Plan,
    pub(crate) todos: Vec<Todo>,
    /// `AGENTS.md` and friends, already joined under their headings.
    pub(crate) instructions: String,
}

/// The tools are not named here: the request lists them (issue 32). Plan mode and the todo
/// list are always told in notes: the start holds neither.
pub(crate) fn system_prompt(start: &Situation, kind: AgentKind) -> String {
    let mut prompt = format!(
        "{RULES}\n\nWorking directory: {}\nOS: {}\nDate: {}\n",
        start.cwd.display(),
        std::env::consts::OS,
        start.date,
    );
    if !start.instructions.is_empty() {
        prompt.push_str("\n# Project instructions\n\n");
        prompt.push_str(&start.instructions);
    }
    if kind == AgentKind::SubAgent {
        prompt.push_str("You are a sub-agent: finish the task you were given and report back.\n");
    }
    prompt
}

/// The first user task and the latest user message, one line each, so neither is lost however
/// often the history is compacted: a previous summary carries its lines forward.
pub(crate) fn task_lines(history: &[Message]) -> String {
    let (mut original, mut latest) = (None, None);
    let users = history.iter().filter(|m| m.role == Role::User);
    for text in users.filter_map(|m| m.content.as_deref()) {
        let line = |label: &str| format!("{label}{}", one_line(text, TASK_LINE_CHARS));
        match text.strip_prefix(SUMMARY_HEADER) {
            // Only the lines right under the header: the model's text could echo the labels.
            Some(summary) => {
                for carried in summary.lines().take(3) {
                    if carried.starts_with(ORIGINAL_TASK) && original.is_none() {
                        original = Some(carried.to_string());
                    } else if carried.starts_with(LATEST_REQUEST) {
                        latest = Some(carried.to_string());
                    }
                }
            }
            None if original.is_none() => original = Some(line(ORIGINAL_TASK)),
            None => latest = Some(line(LATEST_REQUEST)),
        }
    }
    let lines: Vec<String> = original.into_iter().chain(latest).collect();
    lines.join("\n")
}

// The token estimate: how big a prompt is before the provider says so (asked before every
// request whether to compact).

/// Role markers and separators the provider adds around every message.
const MESSAGE_OVERHEAD_TOKENS: usize = 4;

/// Tokens for a request's messages: content, reasoning, tool-call names and arguments.
pub fn estimate_messages(messages: &[Message]) -> usize {
    let text = |t: &Option<String>| t.as_deref().map_or(0, estimate_text);
    let call = |c: &ToolCall| estimate_text(&c.name) + estimate_text(&c.arguments);
    messages
        .iter()
        .map(|m| {
            let calls: usize = m.tool_calls.iter().map(call).sum();
            MESSAGE_OVERHEAD_TOKENS + text(&m.content) + text(&m.reasoning_content) + calls
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::ToolCall;

    fn read_call(id: &str) -> Message {
        let call = ToolCall {
            id: id.to_string(),
            name: "read_file".into(),
            arguments: format!(r#"{{"path": "src/{id}.rs"}}"#),
        };
        Message {
            tool_calls: vec![call],
            ..Message::assistant("")
        }
    }

    #[test]
    fn message_estimates_count_calls_reasoning_and_overhead() {
        assert_eq!(
            estimate_messages(&[Message::assistant("")]),
            MESSAGE_OVERHEAD_TOKENS
        );
        let mut call = read_call("a");
        let bare = estimate_messages(std::slice::from_ref(&call));
        assert!(bare > MESSAGE_OVERHEAD_TOKENS + 5);
        call.reasoning_content = Some("I should look at the file first.".repeat(10));
        assert!(estimate_messages(&[call]) > bare + 50);
    }
}
