//! `/sessions`' list: the latest sessions in the folder, newest first, with their names, who
//! wrote them (ours, or CoreCoder's, which `session/corecoder.rs` reads), the folder each was
//! started in and its first user message. Only the files listed are read, and those only up
//! to their first user message where the format allows.
//!
//! The REPL's `/sessions` calls `list`; `session::latest_in` (for `-c`) walks `by_recency`;
//! `app/setup.rs` shows a resumed session's `last_exchange`. Nothing here writes.

use super::{Until, corecoder, exists_ours, first_user_text, names, replay, sanitize_id};
use crate::tools::support::text::one_line;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Who wrote a session file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// Ours, `ID.jsonl`.
    Log,
    /// CoreCoder's (the Python original), `ID.json` (`session/corecoder.rs`).
    CoreCoder,
}

/// One line of `/sessions` output.
#[derive(Debug, Clone)]
pub(crate) struct Summary {
    pub(crate) id: String,
    /// The names `/save` gave it (`session/names.rs`).
    pub(crate) names: Vec<String>,
    pub(crate) format: Format,
    pub(crate) modified: SystemTime,
    pub(crate) cwd: Option<PathBuf>,
    /// The first user message on one line, at most 60 characters.
    pub(crate) preview: String,
}

/// The latest `limit` sessions, newest first (by modification time). Only those are read.
pub(crate) fn list(dir: &Path, limit: usize) -> Vec<Summary> {
    let names = names::all(dir);
    by_recency(dir)
        .into_iter()
        .take(limit)
        .map(|(id, modified, path, format)| {
            // The header and the first user message are normally the first two lines.
            let start = match format {
                Format::Log => replay(&path, Until::FirstUserMessage).unwrap_or_default(),
                Format::CoreCoder => corecoder::read(&path).unwrap_or_default(),
            };
            // 59 characters and "…" at most: 60 in all.
            let preview = one_line(first_user_text(&start.messages).unwrap_or(""), 59);
            let cwd = start.header.map(|h| h.cwd);
            let mine = names.iter().filter(|(_, held)| *held == id);
            let mut names: Vec<String> = mine.map(|(name, _)| name.clone()).collect();
            names.sort();
            Summary {
                id,
                names,
                format,
                modified,
                cwd,
                preview,
            }
        })
        .collect()
}

/// Every session in `dir` with a valid id, newest first: each `*.jsonl`, and each CoreCoder
/// `*.json` that has none of ours beside it. A missing directory is no sessions.
pub(crate) fn by_recency(dir: &Path) -> Vec<(String, SystemTime, PathBuf, Format)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut sessions: Vec<_> = entries
        .flatten()
        .filter_map(|entry| {
            let path = entry.path();
            let file = path.file_name()?.to_str()?;
            let (id, format) = match file.strip_suffix(".jsonl") {
                Some(id) => (id, Format::Log),
                None => (file.strip_suffix(corecoder::SUFFIX)?, Format::CoreCoder),
            };
            let id = sanitize_id(id).ok().filter(|clean| clean == id)?;
            if format == Format::CoreCoder && exists_ours(dir, &id) {
                return None;
            }
            let modified = entry.metadata().and_then(|m| m.modified());
            Some((id, modified.unwrap_or(UNIX_EPOCH), path, format))
        })
        .collect();
    sessions.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    sessions
}
/// Where a resumed conversation left off: its last user message and the answer after it, a
/// line each (said when a session is resumed, `app/setup.rs`).
pub(crate) fn last_exchange(messages: &[crate::core::message::Message]) -> Vec<String> {
    use crate::core::message::Role;
    let text = |role: Role| {
        let last = messages
            .iter()
            .rev()
            .find(|m| m.role == role && m.tool_call_id.is_none());
        let content = last.and_then(|m| m.content.as_deref()).unwrap_or("");
        let line = content.split_whitespace().collect::<Vec<_>>().join(" ");
        crate::tools::support::text::cut_at_word(&line, 160)
    };
    let (you, answer) = (text(Role::User), text(Role::Assistant));
    let mut lines = Vec::new();
    if !you.is_empty() {
        lines.push(format!("  you: {you}"));
    }
    if !answer.is_empty() {
        lines.push(format!("  answer: {answer}"));
    }
    lines
}
