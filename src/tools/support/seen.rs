//! What `read_file` has shown the model in this conversation, so a read of a file that has not
//! changed since (same path and window, same size and modification time) answers with a short
//! note instead of the same lines again: a re-read costs a few tokens, not the file (issue 32).
//!
//! A read counts as shown only once its result has joined the history (`Seen::joined`, called
//! as each message is added), so a read that was interrupted or whose result never arrived is
//! not relied on. Any rewrite of the history (compaction, a repair, `/clear`, a resume) forgets
//! every read (`Seen::forget`): the result the note would point to may be gone, and the next
//! read shows the file again. Each agent has its own (a sub-agent starts empty, as its history
//! does); the reads of one agent share it through `ToolContext`.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::fs::Metadata;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// The note a re-read of an unchanged file answers with.
pub(crate) const UNCHANGED: &str = "(unchanged since you read it; that result still holds)";

/// One agent's reads: which window of which file it was shown, as the file was then.
#[derive(Clone, Default)]
pub(crate) struct Seen(Arc<Mutex<HashMap<Window, Shown>>>);

/// A path as resolved, the first line and the line limit asked for.
type Window = (PathBuf, usize, usize);

/// The file as it was read, and the result, by its length and hash, to find it in the history.
struct Shown {
    size: u64,
    modified: Option<SystemTime>,
    result: (usize, u64),
    in_history: bool,
}

impl Seen {
    /// Whether this window of the file was shown in a result still in the history and the
    /// file has the same size and modification time as then.
    pub(crate) fn unchanged(&self, path: &Path, window: (usize, usize), meta: &Metadata) -> bool {
        let key = (path.to_path_buf(), window.0, window.1);
        let reads = self.0.lock().unwrap_or_else(|e| e.into_inner());
        reads.get(&key).is_some_and(|shown| {
            shown.in_history && shown.size == meta.len() && shown.modified == meta.modified().ok()
        })
    }

    /// A read's result, not yet in the history: it counts once `joined` finds it there.
    pub(crate) fn read(&self, path: &Path, window: (usize, usize), meta: &Metadata, text: &str) {
        let shown = Shown {
            size: meta.len(),
            modified: meta.modified().ok(),
            result: (text.len(), hash(text)),
            in_history: false,
        };
        let mut reads = self.0.lock().unwrap_or_else(|e| e.into_inner());
        reads.insert((path.to_path_buf(), window.0, window.1), shown);
    }

    /// A message joined the history: the reads whose result it starts with (a tool result may
    /// end with a state note) now count as shown.
    pub(crate) fn joined(&self, content: &str) {
        let mut reads = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for shown in reads.values_mut().filter(|shown| !shown.in_history) {
            let (length, digest) = shown.result;
            if content
                .get(..length)
                .is_some_and(|start| hash(start) == digest)
            {
                shown.in_history = true;
            }
        }
    }

    /// The history was rewritten: no earlier result is relied on any more.
    pub(crate) fn forget(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

fn hash(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_counts_once_its_result_joined_and_until_the_file_or_history_changes() {
        let path = std::env::temp_dir().join(format!("seen-test-{}.txt", std::process::id()));
        std::fs::write(&path, "one\n").unwrap();
        let (seen, meta) = (Seen::default(), std::fs::metadata(&path).unwrap());
        seen.read(&path, (1, 2000), &meta, "1 one\n");
        assert!(
            !seen.unchanged(&path, (1, 2000), &meta),
            "not in the history yet"
        );
        seen.joined("1 one\n\n[session state]\nWorking directory: /x");
        assert!(seen.unchanged(&path, (1, 2000), &meta));
        assert!(!seen.unchanged(&path, (2, 2000), &meta), "another window");
        std::fs::write(&path, "one, two\n").unwrap();
        let changed = std::fs::metadata(&path).unwrap();
        assert!(!seen.unchanged(&path, (1, 2000), &changed), "another size");
        seen.forget();
        assert!(
            !seen.unchanged(&path, (1, 2000), &meta),
            "forgotten after a rewrite"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
