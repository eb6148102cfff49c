//! Landlock, spoken through three raw syscalls: the ruleset a bash command enters.
//!
//! `sandbox.rs` builds the ruleset in the parent (`ruleset`, which allocates and opens the
//! writable roots) and the forked child enters it just before `exec` (`restrict_self`).
//! The ABI is three calls and two small structs, stable since Linux 5.13 and versioned, so
//! these lines cost less than the `landlock` crate would. It handles only the rights that
//! change the file system; reads, execution, the network and metadata changes (`chmod`,
//! `chown`, `utimes`, `setxattr`, which Landlock cannot handle at all) are left alone.
//!
//! It also walls the shell off from processes outside it, where the kernel can: from ABI 6
//! (Linux 6.12) the domain is *scoped*, so a sandboxed process can signal only processes of
//! its own domain (its own tree) and connect only to abstract Unix sockets made inside it; from
//! ABI 9 (Linux 7.1) the same holds for pathname Unix sockets. Older kernels lack them (`gaps`
//! says so at start-up). corecoder itself stays outside the domain, so it can still kill the
//! shell's group.

use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: u32 = 1;
// The access rights of ABI 1 that change the file system (bits 0, 2 and 3 are execute
// and the two reads, which we leave alone).
const WRITE_FILE: u64 = 1 << 1;
const REMOVE_DIR: u64 = 1 << 4;
const REMOVE_FILE: u64 = 1 << 5;
const MAKE_CHAR: u64 = 1 << 6;
const MAKE_DIR: u64 = 1 << 7;
const MAKE_REG: u64 = 1 << 8;
const MAKE_SOCK: u64 = 1 << 9;
const MAKE_FIFO: u64 = 1 << 10;
const MAKE_BLOCK: u64 = 1 << 11;
const MAKE_SYM: u64 = 1 << 12;
const WRITE_RIGHTS_V1: u64 = WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_CHAR
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_BLOCK
    | MAKE_SYM;
/// ABI 2: linking or renaming a file into another directory.
const REFER: u64 = 1 << 13;
/// ABI 3: truncating a file.
const TRUNCATE: u64 = 1 << 14;
/// ABI 9: connecting (or sending) to a pathname Unix socket.
const RESOLVE_UNIX: u64 = 1 << 16;
/// ABI 6 scopes: abstract Unix sockets and signals stay within the domain.
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

/// `struct landlock_ruleset_attr` up to `scoped`. An older kernel takes the whole struct as
/// long as the fields it does not know are zero, so `scoped` is set only from ABI 6; the
/// network stays unhandled.
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

/// `struct landlock_path_beneath_attr`, which the kernel declares packed (12 bytes).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock ABI version the kernel speaks, or `None` without Landlock.
pub fn abi() -> Option<u32> {
    let null = std::ptr::null::<RulesetAttr>();
    // SAFETY: with the VERSION flag the kernel reads no memory; it returns a number.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            null,
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    (version > 0).then_some(version as u32)
}

/// What this ABI cannot wall off that a newer one would, for the start-up note; `None` when
/// nothing is missing.
pub fn gaps(abi: u32) -> Option<String> {
    (abi < 6).then(|| {
        format!(
            "this kernel's Landlock (ABI {abi}, before Linux 6.12) cannot scope signals or \
             abstract Unix sockets: sandboxed bash can still signal your other processes"
        )
    })
}

/// The device files bash may write (those that exist): the sinks and sources every tool uses,
/// the terminal, and new pseudo-terminals (`/dev/pts` holds your other terminals too; what is
/// written there reaches their screens, not their input: seccomp refuses `TIOCSTI`). Not the
/// rest of `/dev`: disks and memory (root could write them), `/dev/shm` (other processes'
/// shared memory), `/dev/mqueue`.
const DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// A ruleset that handles every write right this ABI knows, allowing them all beneath
/// `writable` and plain writes to `DEVICES` (so `> /dev/null` works); and every scope it knows.
pub fn ruleset(abi: u32, writable: &[PathBuf]) -> Result<OwnedFd, String> {
    let attr = attr(abi);
    let size = std::mem::size_of::<RulesetAttr>();
    // SAFETY: `attr` is a live struct of `size` bytes; the kernel only reads it.
    let fd = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, &attr, size, 0u32) };
    if fd < 0 {
        let error = io::Error::last_os_error();
        return Err(format!("could not create the Landlock ruleset: {error}"));
    }
    // SAFETY: the kernel just gave us this descriptor (close-on-exec) and no one else has it.
    let ruleset = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
    for device in DEVICES
        .iter()
        .map(Path::new)
        .filter(|device| device.exists())
    {
        allow(&ruleset, device, WRITE_FILE)?;
    }
    // Sockets are granted nowhere, not even beneath the roots: the temp directory holds
    // tmux's, ssh-agent's and X11's. Only those made inside the domain may be reached.
    for dir in writable {
        allow(&ruleset, dir, attr.handled_access_fs & !RESOLVE_UNIX)?;
    }
    Ok(ruleset)
}

/// What a ruleset handles at `abi`: each right and scope from the ABI that brought it, since a
/// bit the kernel does not know makes it refuse the whole ruleset.
fn attr(abi: u32) -> RulesetAttr {
    let mut handled = WRITE_RIGHTS_V1;
    if abi >= 2 {
        handled |= REFER;
    }
    if abi >= 3 {
        handled |= TRUNCATE;
    }
    if abi >= 9 {
        handled |= RESOLVE_UNIX;
    }
    let scoped = match abi {
        6.. => SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL,
        _ => 0,
    };
    RulesetAttr {
        handled_access_fs: handled,
        handled_access_net: 0,
        scoped,
    }
}

/// Allow `access` beneath `dir`, which is opened only for as long as the rule takes.
fn allow(ruleset: &OwnedFd, dir: &Path, access: u64) -> Result<(), String> {
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH)
        .open(dir)
        .map_err(|e| format!("sandbox: cannot open {}: {e}", dir.display()))?;
    let rule = PathBeneathAttr {
        allowed_access: access,
        parent_fd: opened.as_raw_fd(),
    };
    // SAFETY: `rule` is a live packed struct the kernel only reads; both fds are open.
    let done = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset.as_raw_fd(),
            RULE_PATH_BENEATH,
            &rule,
            0u32,
        )
    };
    match done {
        0 => Ok(()),
        _ => Err(format!(
            "sandbox: cannot allow writes in {}: {}",
            dir.display(),
            io::Error::last_os_error()
        )),
    }
}

pub fn restrict_self(ruleset: RawFd) -> io::Result<()> {
    // Landlock requires it of an unprivileged process: no exec may gain privileges
    // (setuid), so a confined program cannot escape through one.
    // SAFETY: prctl with integer arguments touches no memory of ours.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: an fd number and a zero flag; the kernel reads no memory of ours.
    if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_right_and_scope_comes_with_its_abi() {
        let at = |abi| {
            let attr = attr(abi);
            (attr.handled_access_fs, attr.scoped)
        };
        assert_eq!(at(1), (WRITE_RIGHTS_V1, 0));
        assert_eq!(at(3).0, WRITE_RIGHTS_V1 | REFER | TRUNCATE);
        assert_eq!(at(5).1, 0);
        assert_eq!(at(6), (at(3).0, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL));
        assert_eq!(at(8), at(6));
        assert_eq!(at(9).0, at(6).0 | RESOLVE_UNIX);
        assert_eq!(attr(9).handled_access_net, 0);
    }

    #[test]
    fn this_kernels_ruleset_is_taken() {
        // On this machine (ABI 7) every scope is asked for; the kernel must accept the struct.
        if let Some(abi) = abi() {
            assert!(ruleset(abi, &[]).is_ok());
        }
    }
}
