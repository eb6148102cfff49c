//! Shell safety: which environment variables a `bash` command sees, and where it may write.
//!
//! Chosen once at start-up (`--sandbox`, `CORECODER_SANDBOX`, `CORECODER_ENV_ALLOW`), carried
//! to every bash call in `ToolContext::shell`, and applied by `tools/process.rs` as it starts
//! the shell. Two layers, both on the child only (corecoder itself is never confined):
//!
//! - **Environment scrubbing**, always on: variables whose *names* look secret are removed.
//! - **Landlock** (Linux 5.13+), with `--sandbox read-only|workspace-write`: the shell and all
//!   it starts may read and execute anything, but write only beneath the working directory and
//!   the temp directory (workspace-write) or nowhere (read-only). A blocked write fails in the
//!   shell with `Permission denied`, which the model reads like any other error.
//!
//! Landlock is spoken through three raw syscalls (`libc::syscall`) rather than the `landlock`
//! crate: the ABI is three calls and two small structs, stable since 5.13 and versioned, so
//! about eighty lines here cost less than a new dependency, and they stay readable.
//!
//! What it does not do: restrict the network, reads or process signals, or confine the other
//! tools (`write_file` and `edit_file` are governed by consent, not by this). It is no
//! replacement for the danger gate in `tools/danger.rs`, which stays on in every mode.

use std::fmt;
use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::path::{Path, PathBuf};

/// Where a bash command may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sandbox {
    #[default]
    Off,
    ReadOnly,
    WorkspaceWrite,
}

/// The shell-safety settings of a session: the sandbox, and the secret-looking variables the
/// user chose to pass through anyway.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShellSafety {
    pub sandbox: Sandbox,
    /// Exact variable names from `CORECODER_ENV_ALLOW`, kept even if they look secret.
    pub env_allow: Vec<String>,
}

const UNAVAILABLE: &str = "this kernel does not offer Landlock (Linux 5.13+ with landlock in \
    the lsm= list), so --sandbox cannot be enforced here; use --sandbox off";

impl Sandbox {
    /// The value of `--sandbox` or `CORECODER_SANDBOX`.
    pub fn parse(text: &str) -> Result<Sandbox, String> {
        match text.trim() {
            "off" => Ok(Sandbox::Off),
            "read-only" => Ok(Sandbox::ReadOnly),
            "workspace-write" => Ok(Sandbox::WorkspaceWrite),
            other => Err(format!(
                "'{other}' is not a sandbox mode (off, read-only or workspace-write)"
            )),
        }
    }

    /// One line for the banner.
    pub fn describe(self) -> &'static str {
        match self {
            Sandbox::Off => "sandbox off: bash may write wherever you may",
            Sandbox::ReadOnly => "sandbox read-only: bash may write nowhere",
            Sandbox::WorkspaceWrite => {
                "sandbox workspace-write: bash may write only in the working and temp directories"
            }
        }
    }

    /// At start-up: a sandbox that cannot be enforced must not be pretended.
    pub fn check_supported(self) -> Result<(), String> {
        match (self, landlock::abi()) {
            (Sandbox::Off, _) | (_, Some(_)) => Ok(()),
            (_, None) => Err(UNAVAILABLE.to_string()),
        }
    }

    /// The Landlock ruleset a shell must enter, built in the parent before the fork (building
    /// it allocates and opens files, which `pre_exec` must not). `None` when off.
    pub fn ruleset(self, cwd: &Path) -> Result<Option<OwnedFd>, String> {
        let writable: Vec<PathBuf> = match self {
            Sandbox::Off => return Ok(None),
            Sandbox::ReadOnly => Vec::new(),
            Sandbox::WorkspaceWrite => vec![cwd.to_path_buf(), std::env::temp_dir()],
        };
        let abi = landlock::abi().ok_or(UNAVAILABLE)?;
        landlock::ruleset(abi, &writable).map(Some)
    }
}

impl fmt::Display for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Sandbox::Off => "off",
            Sandbox::ReadOnly => "read-only",
            Sandbox::WorkspaceWrite => "workspace-write",
        })
    }
}

impl ShellSafety {
    /// Should the shell not see the variable called `name`?
    ///
    /// We judge by name, not value: a key's value looks like any other random string and we
    /// cannot know every secret, but conventions put KEY, TOKEN, SECRET or PASSWORD in the
    /// names of the variables that hold them. Overly cautious hits (`KEYBOARD_LAYOUT`) can be
    /// let through with `CORECODER_ENV_ALLOW`.
    pub fn hides(&self, name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        let secret = ["KEY", "SECRET", "TOKEN", "PASSWORD"]
            .iter()
            .any(|word| upper.contains(word));
        secret && !self.env_allow.iter().any(|allowed| allowed == name)
    }
}

/// `CORECODER_ENV_ALLOW=NAME1,NAME2`: names, trimmed, empty ones dropped.
pub fn parse_env_allow(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(String::from)
        .collect()
}

/// In the forked child, just before `exec`: enter `ruleset` for good. Only async-signal-safe
/// work here (two syscalls, no allocation), since the child of a threaded parent may hold no
/// lock the parent's other threads held.
pub fn restrict_self(ruleset: RawFd) -> io::Result<()> {
    landlock::restrict_self(ruleset)
}

#[cfg(target_os = "linux")]
mod landlock {
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

    /// `struct landlock_ruleset_attr`, up to the one field we use: the kernel accepts a
    /// shorter struct from older callers, so later fields (network, scopes) stay unhandled.
    #[repr(C)]
    struct RulesetAttr {
        handled_access_fs: u64,
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

    /// A ruleset that handles every write right this ABI knows, allowing them all beneath
    /// `writable`, and plain writes beneath `/dev` so `> /dev/null` works.
    pub fn ruleset(abi: u32, writable: &[PathBuf]) -> Result<OwnedFd, String> {
        let mut handled = WRITE_RIGHTS_V1;
        if abi >= 2 {
            handled |= REFER;
        }
        if abi >= 3 {
            handled |= TRUNCATE;
        }
        let attr = RulesetAttr {
            handled_access_fs: handled,
        };
        let size = std::mem::size_of::<RulesetAttr>();
        // SAFETY: `attr` is a live struct of `size` bytes; the kernel only reads it.
        let fd = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, &attr, size, 0u32) };
        if fd < 0 {
            let error = io::Error::last_os_error();
            return Err(format!("could not create the Landlock ruleset: {error}"));
        }
        // SAFETY: the kernel just gave us this descriptor (close-on-exec) and no one else has it.
        let ruleset = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
        allow(&ruleset, Path::new("/dev"), WRITE_FILE)?;
        for dir in writable {
            allow(&ruleset, dir, handled)?;
        }
        Ok(ruleset)
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
}

/// Elsewhere there is no Landlock: `check_supported` refuses every mode but `off`.
#[cfg(not(target_os = "linux"))]
mod landlock {
    use std::io;
    use std::os::fd::{OwnedFd, RawFd};
    use std::path::PathBuf;

    pub fn abi() -> Option<u32> {
        None
    }

    pub fn ruleset(_abi: u32, _writable: &[PathBuf]) -> Result<OwnedFd, String> {
        Err("Landlock exists only on Linux".to_string())
    }

    pub fn restrict_self(_ruleset: RawFd) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_names_are_hidden_unless_allowed() {
        let safety = ShellSafety {
            sandbox: Sandbox::Off,
            env_allow: parse_env_allow(" KEYBOARD_LAYOUT, ,GH_TOKEN"),
        };
        let table = [
            ("OPENAI_API_KEY", true),
            ("openai_api_key", true),
            ("AWS_SECRET_ACCESS_KEY", true),
            ("MY_TOKEN", true),
            ("DB_Password", true),
            ("PGPASSWORD", true),
            ("PATH", false),
            ("HOME", false),
            ("SSH_AUTH_SOCK", false),
            ("KEYBOARD_LAYOUT", false),
            ("GH_TOKEN", false),
            ("gh_token", true),
        ];
        for (name, hidden) in table {
            assert_eq!(safety.hides(name), hidden, "{name}");
        }
    }

    #[test]
    fn allow_list_is_trimmed_names() {
        assert_eq!(parse_env_allow("A, B ,,C"), ["A", "B", "C"]);
        assert!(parse_env_allow("").is_empty());
    }

    #[test]
    fn modes_parse_and_print_back() {
        for mode in [Sandbox::Off, Sandbox::ReadOnly, Sandbox::WorkspaceWrite] {
            assert_eq!(Sandbox::parse(&mode.to_string()), Ok(mode));
            assert!(mode.describe().contains(&mode.to_string()));
        }
        assert_eq!(Sandbox::parse(" read-only "), Ok(Sandbox::ReadOnly));
        for bad in ["", "on", "readonly", "Workspace-Write"] {
            assert!(Sandbox::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Sandbox::default(), Sandbox::Off);
        assert!(matches!(Sandbox::Off.ruleset(Path::new("/")), Ok(None)));
    }
}
