//! Compaction's summary (`core/context.rs` calls both): `request` is what compaction asks the
//! model when it summarises old turns (what to keep and drop, the task lines, then the old
//! messages as plain text, capped so the request stays small); `without_model` is the summary
//! extracted when the model's failed (an error, a timeout, an empty reply): the user's messages,
//! the file paths mentioned and the error lines seen, each deduplicated, newest first within
//! its budget. It builds text only: the client sends the request, `context.rs` splices it in.

use crate::core::message::{Message, Role};
use crate::core::prompt::{SUMMARY_HEADER, task_lines};
use crate::tools::support::text::{one_line, truncate_middle};
use regex::Regex;

/// Caps that keep the summary request small.
const RENDER_TOOL_CHARS: usize = 2_000;
const RENDER_OTHER_CHARS: usize = 4_000;
pub(crate) const RENDER_TOTAL_CHARS: usize = 100_000;

/// The request compaction sends to condense `old`: instructions, the task lines, then the
/// messages rendered as plain text.
pub(crate) fn request(old: &[Message]) -> Vec<Message> {
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

/// A summary made without the model: user messages, file paths and error lines, deduplicated
/// and capped (about 4,000 chars in all).
pub(crate) fn without_model(old: &[Message]) -> String {
    let error_words = ["error", "Error", "failed", "panicked", "Traceback"];
    let is_error = |line: &&str| error_words.iter().any(|w| line.contains(w));
    // A constant pattern: paths with a `/`, or names with a short extension (`main.rs`).
    let pattern = r"[\w.~-]*/[\w./-]*\w|[\w-]{2,}(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,4}\b";
    let path_regex = Regex::new(pattern).expect("a valid constant pattern");
    let (mut users, mut paths, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    for message in old {
        let content = message.content.as_deref().unwrap_or("");
        match message.role {
            // A previous summary is worth more room than an ordinary request.
            Role::User if content.starts_with(SUMMARY_HEADER) => {
                let earlier = content.trim_start_matches(SUMMARY_HEADER);
                users.push(format!("(earlier summary) {}", one_line(earlier, 1_500)));
            }
            Role::User => users.push(one_line(content, 300)),
            _ => {}
        }
        errors.extend(content.lines().filter(is_error).map(|l| one_line(l, 200)));
        let mut texts = vec![content];
        let calls = message.tool_calls.iter();
        texts.extend(calls.map(|c| c.arguments.as_str()));
        for text in texts {
            // In tool output `items.iter` is code, not a file: only paths with a `/` count.
            let found = path_regex.find_iter(text).map(|m| m.as_str());
            let found = found.filter(|p| message.role != Role::Tool || p.contains('/'));
            paths.extend(found.map(String::from));
        }
    }
    let mut text = String::from("(The model could not summarise; extracted automatically.)");
    text.push_str(&section("User messages", users, 2_000, "\n- "));
    text.push_str(&section("Files mentioned", paths, 700, " "));
    text.push_str(&section("Errors seen", errors, 1_200, "\n- "));
    text
}

/// `items`, deduplicated, the newest ones that fit in `budget` chars, in their original order.
fn section(title: &str, items: Vec<String>, budget: usize, separator: &str) -> String {
    let mut kept: Vec<String> = Vec::new();
    let mut used = 0;
    for item in items.into_iter().rev() {
        if kept.contains(&item) || item.is_empty() {
            continue;
        }
        used += item.len() + separator.len();
        if used > budget {
            break;
        }
        kept.push(item);
    }
    kept.reverse();
    match kept.is_empty() {
        true => String::new(),
        false => format!("\n{title}:{separator}{}", kept.join(separator)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fallback_is_capped_and_deduplicated() {
        let mut old = vec![Message::user("the task")];
        for i in 0..500 {
            old.push(Message::user(&format!("request {i} about dir/file{i}.rs")));
            old.push(Message::tool_result(
                "x",
                "thread 'main' panicked at src/main.rs:1",
            ));
        }
        let text = without_model(&old);
        assert!(text.chars().count() < 4_200, "{}", text.len());
        assert_eq!(text.matches("panicked").count(), 1);
        assert!(text.contains("request 499"));
    }
}
