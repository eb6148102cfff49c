//! The request compaction sends when it summarises old turns (`core/context.rs`): what to keep
//! and drop, the task lines, then the old messages as plain text, capped so the request stays
//! small. It builds the request only: the client sends it, the core splices the summary in, and
//! `fallback_summary.rs` makes one when the model cannot.

use crate::core::message::{Message, Role};
use crate::core::prompt::task_lines;
use crate::tools::support::text::truncate_middle;

/// Caps that keep the summary request small.
const RENDER_TOOL_CHARS: usize = 2_000;
const RENDER_OTHER_CHARS: usize = 4_000;
pub(crate) const RENDER_TOTAL_CHARS: usize = 100_000;

/// The request compaction sends to condense `old`: instructions, the task lines, then the
/// messages rendered as plain text.
pub fn summary_prompt(old: &[Message]) -> Vec<Message> {
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
    let (task, conversation) = (task_lines(old), entries.join("\n\n"));
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
