//! Putting a checkpoint back without following a symbolic link: `/undo` writes or removes
//! exactly the file it recorded, or refuses.
//!
//! A session (even a sandboxed one) can replace the file it changed, or a folder on the way to
//! it, with a link to `~/.bashrc` or `~/.ssh`; `/undo` runs unconfined, as the user, so
//! following that link would write the recorded bytes there. Every step of the path is opened
//! relative to the folder before it with `O_NOFOLLOW` (no path is ever looked up whole), the
//! new bytes go to a temporary file in the last folder and are renamed over the name (a rename
//! replaces a link, never writes through it), and a name that is now a link is refused. The
//! path must be absolute and plain (no `.` or `..`): `checkpoint.rs` records it resolved.
//!
//! What it does not do: decide what to restore (`checkpoint.rs`), or check that the recorded
//! path is inside the session's roots (it was recorded from an allowed write).
//!
//! SAFETY, for every `unsafe` block here: each is one libc call given a descriptor this file
//! owns and `CString`s that outlive the call (or a zeroed `stat` it fills); none keeps a pointer.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Why a path was not written or removed.
#[derive(Debug)]
pub(crate) enum Blocked {
    /// This step of the path is a symbolic link now (it was not when it was recorded).
    Link(PathBuf),
    Failed(io::Error),
}

impl From<io::Error> for Blocked {
    fn from(e: io::Error) -> Blocked {
        Blocked::Failed(e)
    }
}

/// Replace the file at `path` with `bytes` (keeping its mode if it is there), recreating
/// missing folders on the way; never through a link.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> Result<(), Blocked> {
    let (dir, name) = walk(path, Missing::Create)?;
    let mode = match kind(&dir, &name)? {
        Kind::Link => return Err(Blocked::Link(path.to_path_buf())),
        Kind::File(mode) => mode,
        Kind::Absent => 0o666,
        Kind::Other => return Err(io::Error::other("it is not a regular file now").into()),
    };
    let temp = temp_name(&name);
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let fd = check(unsafe { libc::openat(dir.as_raw_fd(), temp.as_ptr(), flags, mode) })?;
    // SAFETY: `openat` just returned this descriptor, and nothing else owns it.
    let mut file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let written = (|| {
        // The umask may have taken bits the old file had (an executable script keeps them).
        check(unsafe { libc::fchmod(file.as_raw_fd(), mode as libc::mode_t) })?;
        file.write_all(bytes)?;
        file.sync_all()?;
        let (d, n) = (dir.as_raw_fd(), name.as_ptr());
        check(unsafe { libc::renameat(d, temp.as_ptr(), d, n) }).map(drop)
    })();
    if written.is_err() {
        unsafe { libc::unlinkat(dir.as_raw_fd(), temp.as_ptr(), 0) };
    }
    Ok(written?)
}

/// Remove the file at `path` (gone already is fine). A link there is removed itself: unlinking
/// never touches what a link points to. A link on the way is refused.
pub(crate) fn remove(path: &Path) -> Result<(), Blocked> {
    let (dir, name) = match walk(path, Missing::Stop) {
        Err(Blocked::Failed(e)) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        walked => walked?,
    };
    match check(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) }) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        done => done.map(drop).map_err(Blocked::Failed),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Missing {
    Create,
    Stop,
}

enum Kind {
    Absent,
    Link,
    File(libc::c_uint),
    Other,
}

/// The folder holding `path`, opened one step at a time without following links, and the
/// last name.
fn walk(path: &Path, missing: Missing) -> Result<(OwnedFd, CString), Blocked> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::RootDir => {}
            Component::Normal(part) => parts.push(part),
            _ => return Err(io::Error::other("not a plain absolute path").into()),
        }
    }
    let (Some(last), true) = (parts.pop(), path.is_absolute()) else {
        return Err(io::Error::other("not a plain absolute path").into());
    };
    let mut dir = open_dir(libc::AT_FDCWD, &c_name(OsStr::new("/"))?)?;
    let mut so_far = PathBuf::from("/");
    for part in parts {
        so_far.push(part);
        let name = c_name(part)?;
        let next = match open_dir(dir.as_raw_fd(), &name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound && missing == Missing::Create => {
                check(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o777) })?;
                open_dir(dir.as_raw_fd(), &name)
            }
            opened => opened,
        };
        dir = match next {
            Ok(next) => next,
            Err(_) if matches!(kind(&dir, &name), Ok(Kind::Link)) => {
                return Err(Blocked::Link(so_far));
            }
            Err(e) => return Err(e.into()),
        };
    }
    Ok((dir, c_name(last)?))
}

fn open_dir(at: RawFd, name: &CString) -> io::Result<OwnedFd> {
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let fd = check(unsafe { libc::openat(at, name.as_ptr(), flags) })?;
    // SAFETY: `openat` just returned this descriptor, and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// What `name` in `dir` is, the name itself (a link is not followed).
fn kind(dir: &OwnedFd, name: &CString) -> io::Result<Kind> {
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    let flags = libc::AT_SYMLINK_NOFOLLOW;
    match check(unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut stat, flags) }) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Kind::Absent),
        checked => checked?,
    };
    Ok(match stat.st_mode & libc::S_IFMT {
        libc::S_IFLNK => Kind::Link,
        libc::S_IFREG => Kind::File(stat.st_mode & 0o7777),
        _ => Kind::Other,
    })
}

fn temp_name(name: &CString) -> CString {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut temp = OsString::from(".");
    temp.push(OsStr::from_bytes(name.as_bytes()));
    temp.push(format!(".{}-{nanos}.undo", std::process::id()));
    CString::new(temp.as_bytes()).unwrap_or_default()
}

fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::other("a NUL byte in the path"))
}

/// A libc return value: negative is `errno`.
fn check(value: libc::c_int) -> io::Result<libc::c_int> {
    match value < 0 {
        true => Err(io::Error::last_os_error()),
        false => Ok(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::TempDir;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[test]
    fn a_link_at_the_end_or_on_the_way_is_refused_and_its_target_kept() {
        let dir = TempDir::new("restore-links");
        let target = dir.write("home/.bashrc", "mine");
        symlink(&target, dir.0.join("notes.txt")).unwrap();
        symlink(dir.0.join("home"), dir.0.join("sub")).unwrap();
        let blocked = |result: Result<(), Blocked>| match result {
            Err(Blocked::Link(at)) => at,
            other => panic!("{other:?}"),
        };
        let at = blocked(write(&dir.0.join("notes.txt"), b"x"));
        assert_eq!(at, dir.0.join("notes.txt"));
        let at = blocked(write(&dir.0.join("sub/.bashrc"), b"x"));
        assert_eq!(at, dir.0.join("sub"));
        let at = blocked(remove(&dir.0.join("sub/.bashrc")));
        assert_eq!(at, dir.0.join("sub"));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine");
        // Removing a link removes the link only.
        remove(&dir.0.join("notes.txt")).unwrap();
        assert!(!dir.0.join("notes.txt").exists() && target.exists());
        let relative = write(Path::new("a/../b"), b"x");
        assert!(matches!(relative, Err(Blocked::Failed(_))), "{relative:?}");
    }

    #[test]
    fn a_file_is_written_with_its_mode_and_missing_folders_come_back() {
        let dir = TempDir::new("restore-write");
        let script = dir.write("run.sh", "old");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        write(&script, b"new").unwrap();
        let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            (std::fs::read(&script).unwrap(), mode),
            (b"new".to_vec(), 0o755)
        );
        let deep = dir.0.join("gone/deeper/a.txt");
        write(&deep, b"back").unwrap();
        assert_eq!(std::fs::read(&deep).unwrap(), b"back");
        remove(&dir.0.join("never/there.txt")).unwrap();
    }
}
