//! The trust record on disk, `~/.corecoder/trusted.json`: read, read again under its lock,
//! written privately and atomically. Sessions sharing one HOME each re-read it under the lock
//! before writing, so a project another one trusted meanwhile is not lost (`file_lock.rs`).
//! It decides nothing: what the digests mean is `trust.rs`'s (and `trust/git.rs`'s).

use crate::tools::support::file_lock::FileLock;
use crate::tools::support::files::{self, Access, write_atomic};
use serde_json::{Map, Value};
use std::io::ErrorKind;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

/// How the record names a path.
pub(super) fn key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The store's `projects`, read again under its lock (held while the caller writes it back):
/// a project another session trusted meanwhile stays. A store that is there but cannot be
/// read is not overwritten: that would lose them all.
pub(super) fn locked_store(store: &Path) -> Result<(FileLock, Map<String, Value>), String> {
    let lock = FileLock::take(store).map_err(|e| failed(store, e))?;
    match files::read_settings_text(store) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(failed(store, e)),
        _ => Ok((lock, read_store(store))),
    }
}

pub(super) fn failed(store: &Path, e: std::io::Error) -> String {
    format!("could not save {}: {e}", store.display())
}

/// The `projects` object of the store; a missing or broken store trusts nothing.
pub(super) fn read_store(store: &Path) -> Map<String, Value> {
    let text = files::read_settings_text(store).unwrap_or_default();
    let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    match value.get("projects") {
        Some(Value::Object(projects)) => projects.clone(),
        _ => Map::new(),
    }
}

/// Write `bytes` to `path` readable by the user only (its directory too), atomically, so a
/// crash leaves the old store or the new one.
pub(super) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    write_atomic(path, bytes, Access::UserOnly)
}
