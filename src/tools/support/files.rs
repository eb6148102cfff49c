//! Files and paths as the tools see them: a model-given path resolved against the session's
//! working directory, and the atomic write that `write_file`, `edit_file` and the binary's own
//! files (the REPL history, trusted projects) share.
//!
//! Knows nothing of tools, the loop or the session; it only touches the path it is given.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Resolve a path argument against the tracked working directory (`~` means home).
pub fn resolve(cwd: &Path, path: &str) -> PathBuf {
    if (path == "~" || path.starts_with("~/"))
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(path.trim_start_matches('~').trim_start_matches('/'));
    }
    cwd.join(path)
}

/// Replace `path` with `bytes` so that readers see the old file or the new one, never a mix:
/// write a temporary file beside it, flush it to disk, then rename it over the original.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
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
    let result = write_then_rename(&temp, &target, bytes);
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

fn write_then_rename(temp: &Path, target: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(temp)?;
    file.write_all(bytes)?;
    // Keep an existing file's mode, so editing a script does not drop its executable bit.
    if let Ok(meta) = fs::metadata(target) {
        file.set_permissions(meta.permissions())?;
    }
    file.sync_all()?;
    fs::rename(temp, target)
}
