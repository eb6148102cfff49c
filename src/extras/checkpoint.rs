//! File checkpoints: what `/undo` restores and what `/diff` compares against.
//!
//! Before a batch of tool calls runs, the agent loop records every file a `write_file` or
//! `edit_file` call will touch (and a marker for each bash call); after the batch it forgets the
//! entries whose file did not change. The REPL's `/undo` pops the newest entry and puts the old
//! bytes back; `/diff` shows every file changed this session, first recorded bytes vs now, and
//! (`untracked`) which bash commands ran, whose changes it cannot show.
//!
//! The stack lives on disk so `/undo` survives a restart: `dir/stack.json` is a JSON array of
//! entries, oldest first, rewritten atomically after every change; each distinct file content is
//! stored once as `dir/blobs/<hash>`, kept until `dir` is removed. It does not track what bash
//! does to files, does not redo, and does not lock `dir` against a second process. Just over
//! 300 lines: what each call records stays beside the stack it records on.
//!
//! A path is recorded resolved (no links, no `..`), and `restore.rs` puts it back without
//! following a link, so a link the session planted since makes `/undo` refuse that file (the
//! entry is dropped, its saved copy named) rather than write through it.

mod restore;

use crate::tools::support::files::{self, Access, resolve, write_atomic};
use crate::tools::support::text::truncate_middle;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// The blob name recorded for a file that did not exist yet; undoing it removes the file.
/// Real blob names are hex digits (plus `-N`), so they never collide with it.
const ABSENT: &str = "absent";
const STACK_FILE: &str = "stack.json";
const MAX_DIFF_CHARS: usize = 20_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Entry {
    /// `path` held the bytes in `blobs/<blob>` (or did not exist) before a tool changed it.
    File {
        path: PathBuf,
        blob: String,
        time: u64,
    },
    /// Bash ran `command`; only a marker, so `/undo` can say it cannot reverse it.
    Bash { command: String, time: u64 },
}

/// The session's undo stack. Entries hold blob names only, never file contents.
pub(crate) struct Checkpoints {
    dir: PathBuf,
    entries: Vec<Entry>,
}

impl Checkpoints {
    /// Open (or start) the stack kept in `dir`. A damaged stack file is set aside and the stack
    /// starts empty; the second value is then a warning for the user.
    pub(crate) fn open(dir: &Path) -> (Checkpoints, Option<String>) {
        let stack = dir.join(STACK_FILE);
        let loaded = fs::read(&stack).and_then(|bytes| {
            serde_json::from_slice::<Vec<Entry>>(&bytes).map_err(io::Error::other)
        });
        let (entries, warning) = match loaded {
            Ok(entries) => (entries, None),
            Err(e) if e.kind() == io::ErrorKind::NotFound => (Vec::new(), None),
            Err(e) => {
                // Keep the damaged file for a post-mortem instead of overwriting it on the next save.
                let _ = fs::rename(&stack, dir.join("stack.json.damaged"));
                let warning = format!(
                    "The checkpoint stack {} is damaged ({e}); it was set aside as \
                     stack.json.damaged and /undo starts empty.",
                    stack.display()
                );
                (Vec::new(), Some(warning))
            }
        };
        let dir = dir.to_path_buf();
        (Checkpoints { dir, entries }, warning)
    }

    /// Remember `path`'s current bytes (or that it does not exist) before a tool changes it.
    pub(crate) fn record(&mut self, path: &Path) -> io::Result<()> {
        let blob = match files::read_capped(path, files::MAX_WHOLE_BYTES) {
            Ok(bytes) => self.store_blob(&bytes)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => ABSENT.to_string(),
            Err(e) => return Err(e),
        };
        self.entries.push(Entry::File {
            path: landing(path),
            blob,
            time: now(),
        });
        self.save()
    }

    /// Remember what one allowed call may change: the file an edit or a write names; for bash
    /// and a sub-agent, a marker (what they do to files is not tracked).
    pub(crate) fn record_call(&mut self, name: &str, args: &Value, cwd: &Path) -> io::Result<()> {
        let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or("");
        match name {
            "write_file" | "edit_file" if !text("file_path").is_empty() => {
                self.record(&resolve(cwd, text("file_path")))
            }
            "bash" => self.record_bash(text("command")),
            "agent" => self.record_bash(&format!("a sub-agent: {}", text("task"))),
            _ => Ok(()),
        }
    }

    /// Remember that bash ran `command` (its side effects are not tracked).
    pub(crate) fn record_bash(&mut self, command: &str) -> io::Result<()> {
        self.entries.push(Entry::Bash {
            command: command.to_string(),
            time: now(),
        });
        self.save()
    }

    /// Drop the file entries recorded since `mark` (`len()` before the batch) whose file is
    /// byte-identical to what was recorded: the change failed or changed nothing.
    pub(crate) fn forget_unchanged(&mut self, mark: usize) -> io::Result<()> {
        let batch = self.entries.split_off(mark.min(self.entries.len()));
        let recorded = batch.len();
        let mut seen: Vec<PathBuf> = Vec::new();
        let kept = batch.into_iter().filter(|entry| match entry {
            Entry::Bash { .. } => true,
            Entry::File { path, blob, .. } => {
                // Two calls in one batch on the same file recorded the same bytes; one
                // entry is enough, or /undo would "restore" the same file twice.
                let first = !seen.contains(path);
                seen.push(path.clone());
                first && self.changed_since(path, blob)
            }
        });
        let kept: Vec<Entry> = kept.collect();
        // `record` saved every entry already: rewrite (and fsync) the stack only if one was
        // dropped, not after every batch (most batches record nothing at all).
        let dropped = kept.len() < recorded;
        self.entries.extend(kept);
        if dropped { self.save() } else { Ok(()) }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Undo the most recent change and say what was done and how many changes remain.
    /// A failed restore keeps the entry, so the user can fix the cause and try again.
    pub(crate) fn undo(&mut self) -> Result<String, String> {
        let Some(entry) = self.entries.last().cloned() else {
            return Ok("Nothing to undo.".to_string());
        };
        let done = match &entry {
            Entry::Bash { command, .. } => format!(
                "The last change came from bash (`{command}`); /undo cannot reverse shell side effects."
            ),
            Entry::File { path, blob, .. } => match self.read_blob(blob) {
                Ok(Some(bytes)) => match restore(path, &bytes) {
                    Restored::Done(done) => done,
                    Restored::Failed(why) => return Err(why),
                    Restored::Link(at) => {
                        return self.refused(
                            &at,
                            &format!(
                                "not restored; its saved copy is {}",
                                self.blob_path(blob).display()
                            ),
                        );
                    }
                },
                Ok(None) => match remove_created(path) {
                    Restored::Done(done) => done,
                    Restored::Failed(why) => return Err(why),
                    Restored::Link(at) => return self.refused(&at, "not removed"),
                },
                Err(e) => {
                    // The saved copy is gone for good; drop the entry so it cannot block older ones.
                    self.entries.pop();
                    let _ = self.save();
                    let shown = shown(path);
                    return Err(format!(
                        "Cannot undo {shown}: its saved copy is unreadable ({e})."
                    ));
                }
            },
        };
        self.entries.pop();
        self.save()
            .map_err(|e| format!("{done} But the checkpoint stack could not be saved: {e}"))?;
        if matches!(entry, Entry::Bash { .. }) {
            return Ok(done);
        }
        Ok(format!("{done} ({})", remaining(self.entries.len())))
    }

    /// The newest entry leads through a link the session planted: drop it, so the older ones
    /// can still be undone, and say which path was left alone and why.
    fn refused(&mut self, link: &Path, what: &str) -> Result<String, String> {
        self.entries.pop();
        let saved = self
            .save()
            .err()
            .map(|e| format!(" The stack could not be saved: {e}."));
        Ok(format!(
            "{} is now a symbolic link; {what}. ({}){}",
            shown(link),
            remaining(self.entries.len()),
            saved.unwrap_or_default()
        ))
    }

    /// What bash ran (and each sub-agent's task) this session, oldest first: changes no diff shows.
    pub(crate) fn untracked(&self) -> Vec<&str> {
        (self.entries.iter())
            .filter_map(|entry| match entry {
                Entry::Bash { command, .. } => Some(command.as_str()),
                Entry::File { .. } => None,
            })
            .collect()
    }

    /// Every file changed this session, first recorded bytes vs now, as unified diffs.
    pub(crate) fn diff(&self) -> String {
        let mut firsts: Vec<(&Path, &str)> = Vec::new();
        for entry in &self.entries {
            if let Entry::File { path, blob, .. } = entry
                && !firsts.iter().any(|(seen, _)| seen == path)
            {
                firsts.push((path, blob));
            }
        }
        let out: String = firsts
            .iter()
            .map(|(path, blob)| self.file_diff(path, blob))
            .collect();
        if out.is_empty() {
            return "No files changed by write_file or edit_file this session.".to_string();
        }
        truncate_middle(&out, MAX_DIFF_CHARS)
    }

    /// Store `bytes` as a blob named by their hash and return the name. A name already taken by
    /// different bytes (a hash clash) gets a `-N` suffix; an existing blob is never overwritten.
    fn store_blob(&self, bytes: &[u8]) -> io::Result<String> {
        let hash = format!("{:016x}", fnv1a(bytes));
        fs::create_dir_all(self.dir.join("blobs"))?;
        let mut suffix = 0;
        loop {
            let name = match suffix {
                0 => hash.clone(),
                n => format!("{hash}-{n}"),
            };
            let blob = self.blob_path(&name);
            match fs::read(&blob) {
                Ok(existing) if existing == bytes => return Ok(name),
                Ok(_) => suffix += 1,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    write_atomic(&blob, bytes, Access::AsBefore)?;
                    return Ok(name);
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn blob_path(&self, name: &str) -> PathBuf {
        self.dir.join("blobs").join(name)
    }

    fn save(&self) -> io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let json = serde_json::to_vec_pretty(&self.entries).map_err(io::Error::other)?;
        write_atomic(&self.dir.join(STACK_FILE), &json, Access::AsBefore)
    }

    /// The bytes recorded as `blob`, or `None` for a file that did not exist.
    fn read_blob(&self, blob: &str) -> io::Result<Option<Vec<u8>>> {
        if blob == ABSENT {
            return Ok(None);
        }
        fs::read(self.blob_path(blob)).map(Some)
    }

    /// Did `path` change since it was recorded as `blob`? A lost saved copy counts as changed,
    /// so an entry is only dropped when it surely is a no-op.
    fn changed_since(&self, path: &Path, blob: &str) -> bool {
        self.read_blob(blob)
            .map_or(true, |before| before != current(path))
    }

    fn file_diff(&self, path: &Path, blob: &str) -> String {
        let shown = shown(path);
        let before = match self.read_blob(blob) {
            Ok(before) => before,
            Err(e) => return format!("{shown}: the saved copy is unreadable ({e})\n"),
        };
        let after = current(path);
        if before == after {
            return String::new();
        }
        let label = |side: &Option<Vec<u8>>| side.as_ref().map_or("/dev/null", |_| shown.as_str());
        let (old_name, new_name) = (label(&before), label(&after));
        let (before, after) = (before.unwrap_or_default(), after.unwrap_or_default());
        let (Ok(old), Ok(new)) = (std::str::from_utf8(&before), std::str::from_utf8(&after)) else {
            return format!("Binary file {shown} changed\n");
        };
        crate::tools::support::diff::unified(old, new, old_name, new_name)
    }
}

/// How putting one entry back went.
enum Restored {
    Done(String),
    /// This step of the path is a link now: nothing was written or removed.
    Link(PathBuf),
    Failed(String),
}

fn remove_created(path: &Path) -> Restored {
    let shown = shown(path);
    match restore::remove(path) {
        Ok(()) => Restored::Done(format!("Removed {shown}, which this session created")),
        Err(restore::Blocked::Link(at)) => Restored::Link(at),
        Err(restore::Blocked::Failed(e)) => Restored::Failed(format!("Cannot remove {shown}: {e}")),
    }
}

/// Put `bytes` back at `path` (a later bash call may have removed its folder: it comes back).
fn restore(path: &Path, bytes: &[u8]) -> Restored {
    let shown = shown(path);
    match restore::write(path, bytes) {
        Ok(()) => Restored::Done(format!("Restored {shown}")),
        Err(restore::Blocked::Link(at)) => Restored::Link(at),
        Err(restore::Blocked::Failed(e)) => {
            Restored::Failed(format!("Cannot restore {shown}: {e}"))
        }
    }
}

/// Where a write to `path` lands: links and `..` resolved, and for a file (or folders) not
/// there yet, the nearest existing folder resolved with the rest joined on.
fn landing(path: &Path) -> PathBuf {
    if let Ok(real) = fs::canonicalize(path) {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => landing(parent).join(name),
        _ => path.to_path_buf(),
    }
}

fn remaining(count: usize) -> String {
    match count {
        0 => "nothing more to undo".to_string(),
        1 => "1 more change can be undone".to_string(),
        n => format!("{n} more changes can be undone"),
    }
}

/// What `path` holds now, as far as a checkpoint compares it (`None`: absent, or not a file a
/// checkpoint can keep).
fn current(path: &Path) -> Option<Vec<u8>> {
    files::read_capped(path, files::MAX_WHOLE_BYTES).ok()
}

/// `path` relative to the current directory when it lies under it, else as is.
fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    let relative = path.strip_prefix(&cwd).unwrap_or(path);
    relative.display().to_string()
}

/// FNV-1a, 64 bits: tiny, stable across Rust versions, and good enough to name blobs (clashes
/// are handled by `store_blob`).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::TempDir;

    /// What the agent loop does around one tool call that writes `content` to `path`.
    fn change(checkpoints: &mut Checkpoints, path: &Path, content: &str) {
        let mark = checkpoints.len();
        checkpoints.record(path).expect("record");
        fs::write(path, content).expect("write");
        checkpoints.forget_unchanged(mark).expect("forget");
    }

    fn blob_count(dir: &TempDir) -> usize {
        fs::read_dir(dir.0.join("cp/blobs"))
            .map(|entries| entries.count())
            .unwrap_or(0)
    }

    #[test]
    fn edit_then_undo_restores_bytes() {
        let dir = TempDir::new("cp-edit");
        let file = dir.write("a.txt", b"old\r\n\xff bytes");
        let (mut checkpoints, warning) = Checkpoints::open(&dir.0.join("cp"));
        assert_eq!(warning, None);
        change(&mut checkpoints, &file, "new");
        let said = checkpoints.undo().expect("undo");
        assert!(said.starts_with("Restored ") && said.ends_with("(nothing more to undo)"));
        assert_eq!(fs::read(&file).unwrap(), b"old\r\n\xff bytes");
        assert_eq!(checkpoints.undo(), Ok("Nothing to undo.".to_string()));
    }

    #[test]
    fn undo_removes_a_file_the_session_created() {
        let dir = TempDir::new("cp-create");
        let file = dir.0.join("new.txt");
        let (mut checkpoints, _) = Checkpoints::open(&dir.0.join("cp"));
        change(&mut checkpoints, &file, "hello");
        let said = checkpoints.undo().expect("undo");
        assert!(
            said.contains("new.txt, which this session created"),
            "{said}"
        );
        assert!(!file.exists());
    }

    #[test]
    fn undo_recreates_a_deleted_parent_dir() {
        let dir = TempDir::new("cp-parent");
        let file = dir.write("sub/deep/a.txt", "keep me");
        let (mut checkpoints, _) = Checkpoints::open(&dir.0.join("cp"));
        change(&mut checkpoints, &file, "changed");
        fs::remove_dir_all(dir.0.join("sub")).unwrap();
        checkpoints.undo().expect("undo");
        assert_eq!(fs::read_to_string(&file).unwrap(), "keep me");
    }

    #[test]
    fn changes_are_undone_newest_first_with_a_count() {
        let dir = TempDir::new("cp-lifo");
        let file = dir.write("a.txt", "v0");
        let (mut checkpoints, _) = Checkpoints::open(&dir.0.join("cp"));
        for version in ["v1", "v2", "v3"] {
            change(&mut checkpoints, &file, version);
        }
        assert_eq!(checkpoints.len(), 3);
        let said = checkpoints.undo().unwrap();
        assert!(said.ends_with("(2 more changes can be undone)"), "{said}");
        assert_eq!(fs::read_to_string(&file).unwrap(), "v2");
        let said = checkpoints.undo().unwrap();
        assert!(said.ends_with("(1 more change can be undone)"), "{said}");
        assert_eq!(fs::read_to_string(&file).unwrap(), "v1");
        checkpoints.undo().unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "v0");
    }

    #[test]
    fn undo_works_after_a_restart() {
        let dir = TempDir::new("cp-restart");
        let file = dir.write("a.txt", "before");
        let created = dir.0.join("b.txt");
        {
            let (mut checkpoints, _) = Checkpoints::open(&dir.0.join("cp"));
            change(&mut checkpoints, &file, "after");
            change(&mut checkpoints, &created, "brand new");
        }
        let (mut reopened, warning) = Checkpoints::open(&dir.0.join("cp"));
        assert_eq!((reopened.len(), warning), (2, None));
        reopened.undo().unwrap();
        assert!(!created.exists());
        reopened.undo().unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "before");
    }

    #[test]
    fn forget_unchanged_drops_no_op_and_duplicate_entries() {
        let dir = TempDir::new("cp-forget");
        let same = dir.write("same.txt", "untouched");
        let edited = dir.write("edited.txt", "one");
        let (mut checkpoints, _) = Checkpoints::open(&dir.0.join("cp"));
        checkpoints.record(&same).unwrap();
        checkpoints
            .record(&dir.0.join("never-created.txt"))
            .unwrap();
        checkpoints.record(&edited).unwrap();
        checkpoints.record(&edited).unwrap();
        fs::write(&edited, "two").unwrap();
        checkpoints.forget_unchanged(0).unwrap();
        assert_eq!(checkpoints.len(), 1);
        checkpoints.undo().unwrap();
        assert_eq!(fs::read_to_string(&edited).unwrap(), "one");
    }

    #[test]
    fn a_batch_that_recorded_nothing_does_not_rewrite_the_stack() {
        let dir = TempDir::new("cp-idle");
        let (mut checkpoints, _) = Checkpoints::open(&dir.0.join("cp"));
        checkpoints.forget_unchanged(0).unwrap();
        assert!(!dir.0.join("cp").join(STACK_FILE).exists());
    }

    #[test]
    fn a_bash_marker_says_it_cannot_be_reversed() {
        let dir = TempDir::new("cp-bash");
        let file = dir.write("a.txt", "v0");
        let (mut checkpoints, _) = Checkpoints::open(&dir.0.join("cp"));
        change(&mut checkpoints, &file, "v1");
        let mark = checkpoints.len();
        checkpoints.record_bash("rm -rf build").unwrap();
        checkpoints.forget_unchanged(mark).unwrap();
        assert_eq!(
            checkpoints.undo(),
            Ok("The last change came from bash (`rm -rf build`); /undo cannot reverse shell side effects.".to_string())
        );
        assert_eq!(checkpoints.len(), 1);
        checkpoints.undo().unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "v0");
    }

    #[test]
    fn identical_contents_are_stored_once() {
        let dir = TempDir::new("cp-dedup");
        let a = dir.write("a.txt", "same bytes");
        let b = dir.write("b.txt", "same bytes");
        let (mut checkpoints, _) = Checkpoints::open(&dir.0.join("cp"));
        change(&mut checkpoints, &a, "x");
        change(&mut checkpoints, &b, "y");
        change(&mut checkpoints, &a, "same bytes");
        assert_eq!(checkpoints.len(), 3);
        // "same bytes" and "x"; "y" was never recorded.
        assert_eq!(blob_count(&dir), 2);
    }

    #[test]
    fn a_hash_clash_gets_a_suffix_and_keeps_the_other_blob() {
        let dir = TempDir::new("cp-clash");
        let file = dir.write("a.txt", "mine");
        let taken = format!("{:016x}", fnv1a(b"mine"));
        dir.write(&format!("cp/blobs/{taken}"), "someone else");
        let (mut checkpoints, _) = Checkpoints::open(&dir.0.join("cp"));
        change(&mut checkpoints, &file, "changed");
        let clashing = dir.0.join("cp/blobs").join(&taken);
        assert_eq!(fs::read_to_string(&clashing).unwrap(), "someone else");
        let suffixed = dir.0.join("cp/blobs").join(format!("{taken}-1"));
        assert_eq!(fs::read_to_string(suffixed).unwrap(), "mine");
        checkpoints.undo().unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "mine");
    }

    #[test]
    fn diff_shows_removed_and_added_lines() {
        let dir = TempDir::new("cp-diff");
        let file = dir.write("a.txt", "one\ntwo\nthree\n");
        let (mut checkpoints, _) = Checkpoints::open(&dir.0.join("cp"));
        assert_eq!(
            checkpoints.diff(),
            "No files changed by write_file or edit_file this session."
        );
        change(&mut checkpoints, &file, "one\n2\nthree\n");
        change(&mut checkpoints, &file, "one\n2\nthree\nfour\n");
        change(&mut checkpoints, &dir.0.join("new.txt"), "fresh\n");
        let diff = checkpoints.diff();
        assert!(diff.contains("-two\n+2\n"), "{diff}");
        assert!(diff.contains("+four\n"), "{diff}");
        assert!(
            diff.contains("--- /dev/null") && diff.contains("+fresh"),
            "{diff}"
        );
    }

    #[test]
    fn a_damaged_stack_starts_empty_with_a_warning() {
        let dir = TempDir::new("cp-damaged");
        dir.write("cp/stack.json", "[{\"kind\": \"file\", \"pa");
        let (checkpoints, warning) = Checkpoints::open(&dir.0.join("cp"));
        assert_eq!(checkpoints.len(), 0);
        assert!(warning.is_some_and(|w| w.contains("damaged")));
        assert!(dir.0.join("cp/stack.json.damaged").exists());
    }
}
