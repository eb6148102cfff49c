//! Session names: `/save NAME` gives a session a name beside its id, and `-r NAME` finds it.
//! A name is an alias, kept as `~/.corecoder/sessions/NAME.name` holding the id (one line): the
//! session's file keeps its id, so the `session_id` a `-p` run printed keeps resuming it, and
//! its checkpoints stay where they are.
//!
//! `session.rs` resolves a name before it loads or reopens a session, and lists the names
//! beside the ids. Nothing here reads or writes a session; a name is never removed.

use super::{exists, open_own, sanitize_id};
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

const SUFFIX: &str = ".name";

/// Give session `id` the name `name`; the name is returned as kept. A name another session
/// holds, or another session's id, is refused: a name stands for one session.
pub(crate) fn give(dir: &Path, id: &str, name: &str) -> Result<String, String> {
    let name = sanitize_id(name)?;
    let taken = || format!("a session named {name} already exists");
    match target(dir, &name) {
        _ if name == id => return Ok(name),
        _ if exists(dir, &name) => return Err(taken()),
        Some(held) if held == id => return Ok(name),
        Some(_) => return Err(taken()),
        None => {}
    }
    // `create_new`: a name is claimed once, also against a second session saving it now.
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).mode(0o600);
    let written = (options.open(path(dir, &name)))
        .and_then(|mut file| file.write_all(format!("{id}\n").as_bytes()));
    match written {
        Ok(()) => Ok(name),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(taken()),
        Err(e) => Err(format!("cannot name the session {name}: {e}")),
    }
}

/// The session `raw` stands for: itself when a session has that id, else the id its name
/// stands for. Neither is returned as it is, for the loader to say it is missing.
pub(crate) fn resolve(dir: &Path, raw: &str) -> Result<String, String> {
    let id = sanitize_id(raw)?;
    if exists(dir, &id) {
        return Ok(id);
    }
    Ok(target(dir, &id).unwrap_or(id))
}

/// The names of session `id`, sorted.
pub(crate) fn of(dir: &Path, id: &str) -> Vec<String> {
    let mut names: Vec<String> = (all(dir).into_iter())
        .filter(|(_, held)| held == id)
        .map(|(name, _)| name)
        .collect();
    names.sort();
    names
}

/// Every name in `dir` with the id it stands for.
pub(crate) fn all(dir: &Path) -> Vec<(String, String)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    (entries.flatten())
        .filter_map(|entry| {
            let file = entry.file_name();
            let name = file.to_str()?.strip_suffix(SUFFIX)?;
            let name = sanitize_id(name).ok().filter(|clean| clean == name)?;
            let id = target(dir, &name)?;
            Some((name, id))
        })
        .collect()
}

/// The id a name file holds; `None` when there is no such name (or its file is not a plain
/// file of its own, which is not followed).
fn target(dir: &Path, name: &str) -> Option<String> {
    let file = open_own(&path(dir, name), OpenOptions::new().read(true)).ok()?;
    let mut text = String::new();
    file.take(256).read_to_string(&mut text).ok()?;
    sanitize_id(text.trim()).ok()
}

/// `name` has been through `sanitize_id`: no separator can take it out of `dir`.
fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}{SUFFIX}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_stands_for_one_session_and_ids_stay_ids() {
        let dir = std::env::temp_dir().join(format!("corecoder-names-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        for id in ["s1", "s2"] {
            fs::write(dir.join(format!("{id}.jsonl")), "").unwrap();
        }
        assert_eq!(give(&dir, "s1", "work.jsonl").unwrap(), "work");
        assert_eq!(give(&dir, "s1", "work").unwrap(), "work", "again is fine");
        assert_eq!(give(&dir, "s1", "s1").unwrap(), "s1");
        assert!(
            give(&dir, "s2", "work")
                .unwrap_err()
                .contains("already exists")
        );
        assert!(
            give(&dir, "s2", "s1")
                .unwrap_err()
                .contains("already exists")
        );
        assert!(give(&dir, "s2", "a/b").is_err());
        assert_eq!(resolve(&dir, "work").unwrap(), "s1");
        assert_eq!(resolve(&dir, "s2").unwrap(), "s2");
        assert_eq!(resolve(&dir, "missing").unwrap(), "missing");
        assert_eq!(of(&dir, "s1"), ["work"]);
        assert!(of(&dir, "s2").is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
