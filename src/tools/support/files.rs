//! Files and paths as the tools see them: a model-given path resolved against the session's
//! working directory, the atomic write that `write_file`, `edit_file`, checkpoints and the
//! binary's own files (the consent file, the REPL history, trusted projects) share, and the
//! bounded read of the files a repository or the user configures corecoder with (settings,
//! hooks, MCP servers, `.env`, instructions, prices).
//!
//! Knows nothing of tools, the loop or the session; it only touches the path it is given.

use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Resolve a path argument against the tracked working directory (`~` means home).
pub(crate) fn resolve(cwd: &Path, path: &str) -> PathBuf {
    if (path == "~" || path.starts_with("~/"))
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(path.trim_start_matches('~').trim_start_matches('/'));
    }
    cwd.join(path)
}

/// The most a settings file (hooks, MCP servers, rules, `.env`, prices, trusted projects) may
/// hold: far more than any real one, and little enough to read at start-up.
pub(crate) const MAX_SETTINGS_BYTES: u64 = 1 << 20;
/// The most a file read whole for a change may hold (`edit_file`, and the copy a checkpoint
/// keeps): bigger files are edited with bash, and `/undo` says it does not cover them.
pub(crate) const MAX_WHOLE_BYTES: u64 = 32 << 20;

/// `read_capped` for a settings file, as UTF-8 text.
pub(crate) fn read_settings_text(path: &Path) -> io::Result<String> {
    String::from_utf8(read_capped(path, MAX_SETTINGS_BYTES)?)
        .map_err(|_| io::Error::new(ErrorKind::InvalidData, "not UTF-8 text"))
}

/// The whole of `path`, if it is a regular file of at most `limit` bytes; else an error that
/// says why (`NotFound` stays `NotFound`).
pub(crate) fn read_capped(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let bytes = read_head(path, limit + 1)?;
    match bytes.len() as u64 > limit {
        true => Err(io::Error::new(ErrorKind::InvalidData, larger_than(limit))),
        false => Ok(bytes),
    }
}

fn larger_than(limit: u64) -> String {
    match limit >= 1 << 20 {
        true => format!("larger than {} MiB", limit >> 20),
        false => format!("larger than {} KiB", limit >> 10),
    }
}

/// At most `limit` bytes from the start of `path`, if it is a regular file. A repository or a
/// model decides what a path is: a link to `/dev/zero` would be a read that never ends, a FIFO
/// an open that waits for a writer, and neither may stall corecoder or fill its memory. The
/// type is checked before opening (opening a device can do things: a watchdog starts) and
/// again on what was opened, in case the path changed in between.
pub(crate) fn read_head(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let not_a_file = || io::Error::new(ErrorKind::InvalidInput, "not a regular file");
    if !fs::metadata(path)?.is_file() {
        return Err(not_a_file());
    }
    // O_NONBLOCK: a FIFO swapped in opens at once; reading a regular file ignores it.
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_a_file());
    }
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Who may read what `write_atomic` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// As before: an existing file keeps its mode, so editing a script does not drop its
    /// executable bit; a new one gets the usual mode (0666 less the umask).
    AsBefore,
    /// The user only (0600), from the first byte written and whatever the file had before: the
    /// trusted projects, the REPL history.
    UserOnly,
}

/// Replace `path` with `bytes` so that readers see the old file or the new one, never a mix:
/// write a temporary file beside it, flush it to disk, then rename it over the original.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], access: Access) -> io::Result<()> {
    // Writing through a symlink should change its target, not replace the link with a file.
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let temp_name = format!(
        ".{}.{}-{nanos}.tmp",
        name.to_string_lossy(),
        std::process::id()
    );
    let temp = target.with_file_name(temp_name);
    let result = write_then_rename(&temp, &target, bytes, access);
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

fn write_then_rename(temp: &Path, target: &Path, bytes: &[u8], access: Access) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    if access == Access::UserOnly {
        options.mode(0o600);
    }
    let mut file = options.open(temp)?;
    file.write_all(bytes)?;
    if access == Access::AsBefore
        && let Ok(meta) = fs::metadata(target)
    {
        file.set_permissions(meta.permissions())?;
    }
    file.sync_all()?;
    fs::rename(temp, target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn user_only_is_0600_for_a_new_file_and_an_old_one() {
        let dir = std::env::temp_dir().join(format!("cc-files-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let (private, script) = (dir.join("private.json"), dir.join("run.sh"));
        write_atomic(&private, b"{}", Access::UserOnly).unwrap();
        assert_eq!(mode(&private), 0o600);
        fs::set_permissions(&private, fs::Permissions::from_mode(0o644)).unwrap();
        write_atomic(&private, b"{ }", Access::UserOnly).unwrap();
        assert_eq!(
            (mode(&private), fs::read(&private).unwrap()),
            (0o600, b"{ }".to_vec())
        );
        fs::write(&script, "old").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&script, b"new", Access::AsBefore).unwrap();
        assert_eq!(mode(&script), 0o755, "an existing file keeps its mode");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_regular_files_are_read_and_never_past_their_limit() {
        let dir = std::env::temp_dir().join(format!("cc-files-read-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (zero, fifo, big) = (dir.join("zero"), dir.join("fifo"), dir.join("big"));
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        fs::write(&big, "x".repeat(3000)).unwrap();
        // Neither an endless read nor an open that waits for a writer: an error at once.
        for path in [&zero, &fifo, &dir] {
            let e = read_head(path, 10).unwrap_err();
            assert_eq!(e.to_string(), "not a regular file", "{}", path.display());
        }
        assert_eq!(read_head(&big, 10).unwrap(), b"xxxxxxxxxx");
        assert_eq!(read_capped(&big, 3000).unwrap().len(), 3000);
        let e = read_capped(&big, 2048).unwrap_err();
        assert_eq!(e.to_string(), "larger than 2 KiB");
        assert_eq!(larger_than(MAX_WHOLE_BYTES), "larger than 32 MiB");
        let missing = read_capped(&dir.join("missing"), 10).unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        fs::write(&big, [0xff, 0xfe]).unwrap();
        let e = read_settings_text(&big).unwrap_err();
        assert_eq!(e.to_string(), "not UTF-8 text");
        let _ = fs::remove_dir_all(&dir);
    }
}
