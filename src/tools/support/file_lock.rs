//! One writer at a time for a file that every session of a HOME shares: the trusted projects,
//! the saved "always" rules and tools, the REPL history. Two sessions saving at the same moment
//! would each read the file, add their entry and write it back, and the second write would
//! lose the first one's entry.
//!
//! `FileLock::take` holds an exclusive `flock(2)` on `FILE.lock` beside the file; the caller
//! reads the file again under it, merges its change in, writes it atomically and drops the
//! lock. The lock is a separate file because `write_atomic` renames a new file over the old
//! one, and a lock on the old one would no longer guard anything. It is never deleted (a
//! deleted lock file lets two sessions lock two different files). The kernel drops a `flock`
//! with its last descriptor, so a session that dies holding it cannot wedge the next start;
//! a live one holding it past `WAIT` (it never should: the lock covers one read and one write)
//! gives an error instead of a hang. Nothing here reads or writes the file itself.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

/// The longest wait for another session's lock.
const WAIT: Duration = Duration::from_secs(10);

/// An exclusive lock on `FILE.lock`, held until dropped (closing the file releases it).
pub(crate) struct FileLock {
    _file: File,
}

impl FileLock {
    /// Lock `file` (by its `.lock` neighbour, created 0600, in a directory created 0700 if
    /// missing), waiting up to `WAIT` for another holder.
    pub(crate) fn take(file: &Path) -> io::Result<FileLock> {
        let lock_path = lock_path(file);
        if let Some(dir) = lock_path.parent() {
            DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        }
        let lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&lock_path)?;
        let deadline = Instant::now() + WAIT;
        loop {
            if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(FileLock { _file: lock });
            }
            let error = io::Error::last_os_error();
            match error.kind() {
                io::ErrorKind::WouldBlock if Instant::now() < deadline => {
                    thread::sleep(Duration::from_millis(10));
                }
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock => {
                    let shown = lock_path.display();
                    let why = format!("another corecoder has held {shown} for {WAIT:?}");
                    return Err(io::Error::new(io::ErrorKind::TimedOut, why));
                }
                _ => return Err(error),
            }
        }
    }
}

/// `trusted.json` → `trusted.json.lock`, beside it.
fn lock_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    file.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_a_dropped_lock_is_free_again() {
        let dir = std::env::temp_dir().join(format!("corecoder-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let file = dir.join("deeper/store.json");
        let first = FileLock::take(&file).expect("the first lock");
        assert!(dir.join("deeper/store.json.lock").exists());
        // A second descriptor (as another process would have) waits, then gets it once the
        // first is dropped.
        let waited = thread::scope(|scope| {
            let second = scope.spawn(|| {
                let started = Instant::now();
                FileLock::take(&file).map(|_| started.elapsed())
            });
            thread::sleep(Duration::from_millis(200));
            drop(first);
            second.join().unwrap().expect("the second lock")
        });
        assert!(waited >= Duration::from_millis(150), "{waited:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
