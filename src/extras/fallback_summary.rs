//! The summary made without the model, when the model's summary failed (an error, a timeout,
//! an empty reply): compaction (`core/context.rs`) reaches it through
//! `Extras::summary_without_model` and puts it where the model's summary would have gone.
//!
//! It keeps what a later round most needs to carry on: the user's messages, the file paths
//! mentioned and the error lines seen, each deduplicated, newest first within its budget. It
//! calls nothing and changes nothing.

use crate::core::message::{Message, Role};
use crate::core::prompt::SUMMARY_HEADER;
use crate::tools::support::text::one_line;
use regex::Regex;

/// A summary made without the model: user messages, file paths and error lines, deduplicated
/// and capped (about 4,000 chars in all).
pub fn summary(old: &[Message]) -> String {
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
        let text = summary(&old);
        assert!(text.chars().count() < 4_200, "{}", text.len());
        assert_eq!(text.matches("panicked").count(), 1);
        assert!(text.contains("request 499"));
    }
}
