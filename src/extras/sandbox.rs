//! Shell and file safety: which environment variables a `bash` command sees, where bash,
//! `write_file` and `edit_file` may write, and which processes bash may reach.
//!
//! Chosen once at start-up (`--sandbox`, `CORECODER_SANDBOX`, `--add-dir`,
//! `CORECODER_ENV_ALLOW`) and carried to every tool call in `ToolContext::shell`. On the tools
//! only (corecoder itself is never confined):
//!
//! - **Environment scrubbing**, always on: variables that look secret (`secrets.rs`) are
//!   removed from bash's environment; in a sandboxed mode, those naming sockets too (`reach.rs`).
//! - **Writable roots**, with `--sandbox read-only|workspace-write`: fixed when the session
//!   starts (`for_session`: the launch directory, the temp directory, each `--add-dir`), never
//!   moved by the model's `cd`s. bash enters a Landlock ruleset (`sandbox/landlock.rs`) allowing
//!   writes only beneath them; `write_file`/`edit_file` ask `check_write` (a clear refusal), then
//!   write on a thread inside the same ruleset (`write_confined`: no race with the check).
//!   `reads.rs` judges reads by the same roots.
//! - **Walls around processes**, both sandboxed modes: no Unix socket to a process outside
//!   (seccomp refuses `AF_UNIX` sockets, Landlock scopes abstract ones), no signal to one
//!   (Landlock scopes signals). TCP is not walled.
//! - **Metadata changes**: read-only mode's seccomp filter (`sandbox/seccomp.rs`) refuses `chmod`,
//!   `chown`, `utimes`, `setxattr` and `chattr`, which Landlock cannot see. Workspace-write does
//!   *not* stop them outside the roots (a filter cannot see paths).
//!
//! What it does not do: restrict the network or reads, or confine MCP tools and hooks. It is no
//! replacement for the danger gate in `tools/danger.rs`, which stays on in every mode.

#[cfg(target_os = "linux")]
mod landlock;
#[cfg(not(target_os = "linux"))]
#[path = "sandbox/no_landlock.rs"]
mod landlock;
mod reach;
mod seccomp;

use crate::extras::git_files::refuse_planted;
use crate::extras::secrets::parse_env_allow;
pub(crate) use reach::kernel_gaps;
use std::collections::HashMap;
use std::fmt;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// Where a bash command may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Sandbox {
    #[default]
    Off,
    ReadOnly,
    WorkspaceWrite,
}

/// Where `read_file`, `grep` and `glob` run unasked (`reads.rs`): anywhere (the library's
/// default), or beneath `roots` only, in every mode (`for_session`, which the binary calls).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Reads {
    #[default]
    Anywhere,
    BeneathRoots,
}

/// The tool-safety settings of a session: the sandbox, its roots, where reads may go unasked,
/// and the secret-looking variables the user chose to pass through anyway.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct ShellSafety {
    pub(crate) sandbox: Sandbox,
    pub(crate) reads: Reads,
    /// Exact variable names from `CORECODER_ENV_ALLOW`, kept even if they look secret.
    pub(crate) env_allow: Vec<String>,
    /// `--add-dir DIR`, as the user typed them (relative to the launch directory).
    pub(crate) added_dirs: Vec<PathBuf>,
    /// The session's roots, resolved: writable in workspace-write mode, readable unasked in
    /// every mode. Set once by `for_session`, never by the model; empty (nowhere writable)
    /// until then, so a library user who skips it fails closed.
    pub(crate) roots: Vec<PathBuf>,
    /// Whether bash may run git from the project's own git files (`git_files.rs`).
    pub(crate) git: crate::extras::git_files::GitTrust,
}

/// What a shell enters between `fork` and `exec`, built beforehand (building allocates).
pub(crate) struct Confinement {
    ruleset: landlock::Built,
    filter: Vec<seccomp::Instruction>,
}

const UNAVAILABLE: &str = "this kernel does not offer Landlock (Linux 5.13+ with landlock in \
    the lsm= list), so --sandbox cannot be enforced here; use --sandbox off";

impl Sandbox {
    /// The value of `--sandbox` or `CORECODER_SANDBOX`.
    pub(crate) fn parse(text: &str) -> Result<Sandbox, String> {
        match text.trim() {
            "off" => Ok(Sandbox::Off),
            "read-only" => Ok(Sandbox::ReadOnly),
            "workspace-write" => Ok(Sandbox::WorkspaceWrite),
            other => Err(format!(
                "'{other}' is not a sandbox mode (off, read-only or workspace-write)"
            )),
        }
    }

    /// What the banner says: what the mode holds, and in workspace-write what it does not.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Sandbox::Off => "sandbox off: bash may write wherever you may",
            Sandbox::ReadOnly => "sandbox read-only: bash, write_file and edit_file write nowhere",
            Sandbox::WorkspaceWrite => {
                "sandbox workspace-write: bash, write_file and edit_file write only in the \
                 launch and temp directories and each --add-dir; bash can still chmod, chown \
                 and touch files outside them"
            }
        }
    }

    /// At start-up: a sandbox that cannot be enforced must not be pretended.
    pub(crate) fn check_supported(self) -> Result<(), String> {
        match (self, landlock::present()) {
            (Sandbox::Off, _) | (_, true) => Ok(()),
            (_, false) => Err(UNAVAILABLE.to_string()),
        }
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
    /// Should the shell not see the variable `name=value`? (`secrets::looks_secret`, unless the
    /// user let it through by name with `CORECODER_ENV_ALLOW`.)
    pub(crate) fn hides(&self, name: &str, value: &str) -> bool {
        crate::extras::secrets::looks_secret(name, value)
            && !self.env_allow.iter().any(|allowed| allowed == name)
    }

    /// What `hides`, and in a sandboxed mode each variable naming a way out (`reach.rs`).
    pub(crate) fn hides_from_shell(&self, name: &str, value: &str) -> bool {
        let sandboxed = self.sandbox != Sandbox::Off;
        self.hides(name, value) || (sandboxed && reach::names_a_way_out(name))
    }

    /// From `CORECODER_SANDBOX` and `CORECODER_ENV_ALLOW`; `app/flags.rs` puts the flags on top.
    pub(crate) fn from_env(env: &HashMap<String, String>) -> Result<ShellSafety, String> {
        let mode = env.get("CORECODER_SANDBOX").map_or("off", String::as_str);
        let allow = env.get("CORECODER_ENV_ALLOW").map_or("", String::as_str);
        Ok(ShellSafety {
            sandbox: Sandbox::parse(mode).map_err(|why| format!("CORECODER_SANDBOX: {why}"))?,
            env_allow: parse_env_allow(allow),
            ..ShellSafety::default()
        })
    }

    /// At start-up: fix the roots for the session (the launch and temp directories, each
    /// `--add-dir`), resolved so a symlink cannot move them later. Every mode reads by them.
    pub(crate) fn for_session(&self, launch_dir: &Path) -> Result<ShellSafety, String> {
        let mut wanted = vec![
            ("the launch directory", launch_dir.to_path_buf()),
            ("the temp directory (TMPDIR)", std::env::temp_dir()),
        ];
        let add_dir = |dir: &PathBuf| ("--add-dir", launch_dir.join(dir));
        wanted.extend(self.added_dirs.iter().map(add_dir));
        let mut roots = Vec::new();
        for (what, dir) in wanted {
            match std::fs::canonicalize(&dir) {
                Ok(real) if real.is_dir() => roots.push(real),
                Ok(_) => return Err(format!("{what} {} is not a directory", dir.display())),
                Err(e) => return Err(format!("{what} {}: {e}", dir.display())),
            }
        }
        Ok(ShellSafety {
            roots,
            reads: Reads::BeneathRoots,
            ..self.clone()
        })
    }

    /// What a shell must enter, built in the parent before the fork (it allocates and opens
    /// the roots, which `pre_exec` must not). `None` when the sandbox is off.
    pub(crate) fn confinement(&self) -> Result<Option<Confinement>, String> {
        let (writable, metadata) = match self.sandbox {
            Sandbox::Off => return Ok(None),
            Sandbox::ReadOnly => (&[][..], seccomp::Metadata::Refused),
            Sandbox::WorkspaceWrite => (&self.roots[..], seccomp::Metadata::Allowed),
        };
        let filter = seccomp::filter(metadata).unwrap_or_default();
        let ruleset = landlock::ruleset(writable)?;
        Ok(Some(Confinement { ruleset, filter }))
    }

    /// May `write_file` or `edit_file` write `path` (absolute)? Judged where it lands
    /// (`landing_place`); never the files git runs commands from (`git_files.rs`).
    pub(crate) fn check_write(&self, path: &Path) -> Result<(), String> {
        match self.sandbox {
            Sandbox::Off => Ok(()),
            Sandbox::ReadOnly => Err(format!(
                "refused by --sandbox read-only: nothing may be written, not even {}",
                path.display()
            )),
            Sandbox::WorkspaceWrite => {
                let place = landing_place(path)?;
                refuse_planted(path, &place)?;
                if self.roots.iter().any(|root| place.starts_with(root)) {
                    return Ok(());
                }
                let roots: Vec<String> = (self.roots.iter())
                    .map(|root| root.display().to_string())
                    .collect();
                Err(format!(
                    "refused by --sandbox workspace-write: {} is outside the writable \
                     directories ({}); the user can add one with --add-dir",
                    place.display(),
                    roots.join(", ")
                ))
            }
        }
    }

    /// Run `write` (already past `check_write`) on a thread of its own inside bash's Landlock
    /// ruleset: the check gives the clear message, the kernel the last word, so a symlink
    /// swapped in after the check (by a process that outlived its bash call) cannot lead it
    /// outside. Landlock binds a thread, not the process; this one ends with the write.
    pub(crate) fn write_confined(
        &self,
        write: &(dyn Fn() -> Result<(), String> + Sync),
    ) -> Result<(), String> {
        let Some(confinement) = self.confinement()? else {
            return write();
        };
        std::thread::scope(|scope| {
            let writer = scope.spawn(|| {
                landlock::restrict_self(&confinement.ruleset)
                    .map_err(|e| format!("sandbox: {e}"))?;
                write()
            });
            writer
                .join()
                .unwrap_or_else(|_| Err("the write panicked".to_string()))
        })
    }
}

impl Confinement {
    /// Make `shell` enter this confinement between `fork` and `exec`. The closure owns a
    /// duplicate of the ruleset's fd (close-on-exec), made here, in the parent.
    pub(crate) fn enter_before_exec(&self, shell: &mut Command) -> io::Result<()> {
        let (ruleset, filter) = (self.ruleset.try_clone()?, self.filter.clone());
        // SAFETY: the closure makes a few syscalls and allocates nothing, which is what may run
        // between fork and exec.
        unsafe { shell.pre_exec(move || restrict_self(&ruleset, &filter)) };
        Ok(())
    }
}

/// Where a write (or a read, `reads.rs`) of `path` lands: each part that exists resolved
/// (`canonicalize` follows its symlinks), the rest kept as written. A `..` after a resolved
/// part is its real parent; after a part still to be created, that part's parent.
pub(crate) fn landing_place(path: &Path) -> Result<PathBuf, String> {
    let mut place = PathBuf::new();
    for part in path.components() {
        match part {
            Component::Prefix(_) | Component::RootDir => place.push(part.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                place.pop();
            }
            Component::Normal(name) => {
                let next = place.join(name);
                place = match std::fs::canonicalize(&next) {
                    Ok(real) => real,
                    // It exists but leads nowhere: a dangling or looping symlink.
                    Err(_) if std::fs::symlink_metadata(&next).is_ok() => {
                        let shown = next.display();
                        return Err(format!("{shown} is a symlink that leads nowhere"));
                    }
                    Err(_) => next,
                };
            }
        }
    }
    Ok(place)
}

/// In the forked child before `exec`: drop inherited descriptors, enter the Landlock ruleset,
/// then the seccomp filter. No allocation: a threaded parent's locks may be held in the child.
fn restrict_self(ruleset: &landlock::Built, filter: &[seccomp::Instruction]) -> io::Result<()> {
    reach::close_inherited_on_exec()?;
    landlock::restrict_self(ruleset)?;
    if !filter.is_empty() {
        seccomp::install(filter)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_variables_are_hidden_unless_allowed() {
        let safety = ShellSafety {
            env_allow: parse_env_allow(" KEYBOARD_LAYOUT, ,GH_TOKEN"),
            ..ShellSafety::default()
        };
        let table = [
            ("OPENAI_API_KEY", "x", true),
            ("openai_api_key", "x", true),
            ("DB_Password", "x", true),
            ("MIRROR", "https://u:p@example.com", true),
            ("PATH", "/bin", false),
            ("SSH_AUTH_SOCK", "/tmp/s", false),
            ("KEYBOARD_LAYOUT", "x", false),
            ("GH_TOKEN", "x", false),
            ("gh_token", "x", true),
        ];
        for (name, value, hidden) in table {
            assert_eq!(safety.hides(name, value), hidden, "{name}");
        }
    }

    #[test]
    fn a_sandboxed_shell_loses_the_socket_variables_even_if_allowed() {
        let mut safety = ShellSafety {
            env_allow: parse_env_allow("TMUX"),
            ..ShellSafety::default()
        };
        assert!(!safety.hides_from_shell("TMUX", "/tmp/tmux-0/default,1,0"));
        assert!(safety.hides_from_shell("OPENAI_API_KEY", "x"));
        for mode in [Sandbox::ReadOnly, Sandbox::WorkspaceWrite] {
            safety.sandbox = mode;
            assert!(safety.hides_from_shell("TMUX", "/tmp/tmux-0/default,1,0"));
            assert!(safety.hides_from_shell("SSH_AUTH_SOCK", "/tmp/agent"));
            assert!(!safety.hides_from_shell("PATH", "/bin"));
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
        assert!(matches!(ShellSafety::default().confinement(), Ok(None)));
    }

    #[test]
    fn a_write_lands_where_symlinks_and_dotdots_lead() {
        let dir = std::env::temp_dir().join(format!("corecoder-landing-{}", std::process::id()));
        let (root, outside) = (dir.join("root"), dir.join("outside"));
        std::fs::create_dir_all(root.join("sub")).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        let real = |p: &Path| std::fs::canonicalize(p).expect("exists");
        let (root, outside) = (real(&root), real(&outside));
        std::os::unix::fs::symlink(&outside, root.join("out")).expect("symlink");
        std::os::unix::fs::symlink(dir.join("gone"), root.join("dangling")).expect("symlink");
        let lands = |relative: &str| landing_place(&root.join(relative));
        assert_eq!(lands("sub/new/f.txt"), Ok(root.join("sub/new/f.txt")));
        assert_eq!(lands("new/../f.txt"), Ok(root.join("f.txt")));
        assert_eq!(lands("sub/../../outside/f"), Ok(outside.join("f")));
        assert_eq!(lands("out/f"), Ok(outside.join("f")));
        assert_eq!(
            lands("out/../f"),
            Ok(dir.canonicalize().expect("dir").join("f"))
        );
        assert!(lands("dangling/f").is_err());
        let safety = ShellSafety {
            sandbox: Sandbox::WorkspaceWrite,
            roots: vec![root.clone()],
            ..ShellSafety::default()
        };
        assert!(safety.check_write(&root.join("sub/x")).is_ok());
        assert!(safety.check_write(&root.join("out/x")).is_err());
        assert!(safety.check_write(&root.join("../root2/x")).is_err());
        if landlock::present() {
            // Past the check (as after a swapped symlink), the kernel still refuses.
            let write_to =
                |path: PathBuf| move || std::fs::write(&path, "x").map_err(|e| e.to_string());
            assert!(safety.write_confined(&write_to(root.join("sub/y"))).is_ok());
            let outside_write = safety.write_confined(&write_to(root.join("out/y")));
            assert!(outside_write.is_err_and(|e| e.contains("ermission denied")));
            assert!(!outside.join("y").exists());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
