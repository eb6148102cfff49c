//! Files and paths as the tools see them: a model-given path resolved against the session's
//! working directory, and the atomic write that `write_file`, `edit_file`, checkpoints and the
//! binary's own files (the consent file, the REPL history, trusted projects) share.
//!
//! Knows nothing of tools, the loop or the session; it only touches the path it is given.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
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

/// Who may read what `write_atomic` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// As before: an existing file keeps its mode, so editing a script does not drop its
    /// executable bit; a new one gets the usual mode (0666 less the umask).
    AsBefore,
    /// The user only (0600), from the first byte written and whatever the file had before: the
    /// trusted projects, the REPL history.
    UserOnly,
}

/// Replace `path` with `bytes` so that readers see the old file or the new one, never a mix:
/// write a temporary file beside it, flush it to disk, then rename it over the original.
pub fn write_atomic(path: &Path, bytes: &[u8], access: Access) -> io::Result<()> {
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
}
