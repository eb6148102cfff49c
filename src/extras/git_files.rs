//! A repository's own git files that make git run commands: `.git/config` (`core.fsmonitor`,
//! `core.hooksPath`, `core.pager`, filters, `include.path`, …), `.git/hooks/*`, and what can
//! send git elsewhere for them (`.git` as a file or a link, `config.worktree`, `commondir`).
//!
//! A sandboxed bash can write them (Landlock cannot carve `.git` out of the writable launch
//! directory), and the git that a later, unsandboxed session runs would run what it planted,
//! outside any sandbox. So: sandboxed `write_file`/`edit_file` may not write them
//! (`sandbox.rs` asks `planted_path`); once a sandboxed session has run in a project, their
//! digest (`look`) joins the project's trust record (`trust.rs`), and while it differs from the
//! trusted one, git is off for bash: a command naming git is refused with the reason
//! (`refusal`), and every bash child gets `GIT_DIR=/dev/null` (no repository is found, so none
//! of its config or hooks is read) plus `core.hooksPath`/`core.fsmonitor` overrides in case a
//! command names a repository itself. Each sandboxed bash call is watched (`Watch`): one that
//! changed them is told so. Not here: nested repositories (`sub/.git`), and the git that hooks,
//! MCP servers or the user run themselves (SECURITY.md, "Planted files").

use crate::extras::sha256;
use crate::tools::support::files;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// The names in a git directory that git reads to decide what to run.
const RUNS_FROM: [&str; 4] = ["config", "config.worktree", "commondir", "hooks"];
/// Past this many hooks, or this size of one file, the files count as changed every time.
const MAX_HOOKS: usize = 256;
const MAX_BYTES: u64 = 1 << 20;
/// What of one file, and of all, the text to show holds at most (the digest covers all).
const SHOWN_BYTES: usize = 64 << 10;
const SHOWN_TOTAL: usize = 256 << 10;

/// Whether git may run from the project's own git files in bash. `Trusted` by default: a
/// library user without a trust record gets git as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum GitTrust {
    #[default]
    Trusted,
    Untrusted,
}

/// The git files of one project as they are now.
pub(crate) struct GitFiles {
    /// One SHA-256 over all of them (what `trusted.json` keeps).
    pub(crate) digest: String,
    /// Their text, to show and to compare with what was trusted (hostile text: `trust.rs`
    /// escapes it); a file's first 64 KiB, 256 KiB in all.
    pub(crate) text: String,
}

/// Digest and text of `dir/.git`. A part that cannot be checked (a FIFO, a device or a link
/// to nothing readable in the hooks, a file too big, too many hooks, `.git` as a link) gets a digest that matches nothing, so the
/// files are never trusted while it is there.
pub(crate) fn look(dir: &Path) -> GitFiles {
    let mut parts = Parts::default();
    let git = dir.join(".git");
    match fs::symlink_metadata(&git) {
        Err(_) => parts.add(".git", "absent", b""),
        Ok(meta) if meta.is_file() => parts.file(".git", &git),
        Ok(meta) if meta.is_dir() => {
            for name in RUNS_FROM {
                match name {
                    "hooks" => parts.hooks(&git.join(name)),
                    _ => parts.file(&format!(".git/{name}"), &git.join(name)),
                }
            }
        }
        Ok(_) => parts.odd(".git"),
    }
    parts.finish()
}

#[derive(Default)]
struct Parts {
    /// `name digest` lines, in a fixed order: what the one digest is taken over.
    identity: String,
    shown: String,
    samples: usize,
}

impl Parts {
    fn add(&mut self, name: &str, digest: &str, shown: &[u8]) {
        self.identity.push_str(&format!("{name} {digest}\n"));
        if !shown.is_empty() && self.shown.len() < SHOWN_TOTAL {
            let head = String::from_utf8_lossy(&shown[..shown.len().min(SHOWN_BYTES)]);
            let end = if head.ends_with('\n') { "" } else { "\n" };
            let cut = match shown.len() > SHOWN_BYTES {
                true => "  … (cut here: larger than 64 KiB)\n",
                false => "",
            };
            self.shown.push_str(&format!("{name}:\n{head}{end}{cut}"));
        }
    }

    /// A regular file (absent is fine), or a link to one (hooks are often linked into the
    /// tree: both where it points and what is there count); anything else is odd.
    fn file(&mut self, name: &str, path: &Path) {
        let link = match fs::symlink_metadata(path) {
            Err(_) => return self.add(name, "absent", b""),
            Ok(meta) if meta.file_type().is_symlink() => fs::read_link(path).ok(),
            Ok(meta) if !meta.is_file() => return self.odd(name),
            Ok(_) => None,
        };
        // `read_capped` reads regular files only, past a link too, and never past the cap.
        let Ok(bytes) = files::read_capped(path, MAX_BYTES) else {
            return self.odd(name);
        };
        let digest = sha256::hex_digest(&bytes);
        match link {
            None => self.add(name, &digest, &bytes),
            Some(to) => {
                let to = to.to_string_lossy();
                let shown = format!("(a link to {to})\n{}", String::from_utf8_lossy(&bytes));
                self.add(name, &format!("{digest} -> {to}"), shown.as_bytes());
            }
        }
    }

    fn hooks(&mut self, dir: &Path) {
        match fs::symlink_metadata(dir) {
            Err(_) => return self.add(".git/hooks", "absent", b""),
            Ok(meta) if !meta.is_dir() => return self.odd(".git/hooks"),
            Ok(_) => {}
        }
        let mut names: Vec<_> = match fs::read_dir(dir) {
            Ok(entries) => entries.flatten().map(|e| e.file_name()).collect(),
            Err(_) => return self.odd(".git/hooks"),
        };
        if names.len() > MAX_HOOKS {
            return self.odd(&format!(".git/hooks (more than {MAX_HOOKS} files)"));
        }
        names.sort();
        for name in names {
            let shown = format!(".git/hooks/{}", name.to_string_lossy());
            // Git never runs a `.sample`; it counts in the digest, but is not shown.
            if shown.ends_with(".sample") {
                self.samples += 1;
                let bytes = files::read_capped(&dir.join(&name), MAX_BYTES).unwrap_or_default();
                self.identity
                    .push_str(&format!("{shown} {}\n", sha256::hex_digest(&bytes)));
                continue;
            }
            self.file(&shown, &dir.join(&name));
        }
    }

    /// A part that cannot be checked: a digest no record holds, and a line that says why.
    fn odd(&mut self, name: &str) {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        self.identity
            .push_str(&format!("{name} unverifiable {nanos}\n"));
        self.shown.push_str(&format!(
            "{name}: not a regular file, or too big: it counts as changed every time\n"
        ));
    }

    fn finish(mut self) -> GitFiles {
        if self.samples > 0 {
            let n = self.samples;
            self.shown
                .push_str(&format!("(and {n} .sample hooks, which git never runs)\n"));
        }
        GitFiles {
            digest: sha256::hex_digest(self.identity.as_bytes()),
            text: self.shown,
        }
    }
}

/// Is `path` (absolute or relative) one of the files git runs commands from, in any
/// repository: a `.git` file itself, or `config`, `config.worktree`, `commondir` or anything
/// under `hooks` in a `.git` folder? Then the answer names it.
pub(crate) fn planted_path(path: &Path) -> Option<String> {
    let parts: Vec<&std::ffi::OsStr> = (path.components())
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part),
            _ => None,
        })
        .collect();
    let at = parts.iter().position(|part| *part == ".git")?;
    match parts.get(at + 1).and_then(|next| next.to_str()) {
        None if at + 1 == parts.len() => Some(".git".to_string()),
        Some(next) if RUNS_FROM.contains(&next) => Some(format!(".git/{next}")),
        _ => None,
    }
}

/// `sandbox.rs`'s check for a sandboxed `write_file`/`edit_file` of `path` (landing at
/// `place`, links resolved): refused when either is a file git runs commands from.
pub(crate) fn refuse_planted(path: &Path, place: &Path) -> Result<(), String> {
    match planted_path(place).or_else(|| planted_path(path)) {
        None => Ok(()),
        Some(git) => Err(format!(
            "refused by --sandbox workspace-write: {} is in {git}, which git runs commands \
             from outside the sandbox; a sandboxed session may not write it (the user can)",
            path.display()
        )),
    }
}

/// Does a bash command name git (a word `git` or `…/git`)? Only for the clear refusal: the
/// environment `switch_off` sets is what holds for commands that run git some other way.
pub(crate) fn mentions_git(command: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || "_.-/".contains(c);
    (command.split(|c: char| !word(c))).any(|w| w == "git" || w.ends_with("/git"))
}

/// What the model reads when bash would have run git while the git files are untrusted.
pub(crate) fn refusal() -> String {
    "Refused: git is off for bash in this session. This project's git files (.git/config, \
     .git/hooks) changed since the user last trusted them, after a sandboxed session ran \
     here, and git runs commands written there (core.fsmonitor, hooks, pagers, filters) \
     outside any sandbox. Ask the user to review them and type /trust (or start corecoder \
     with --trust-project); until then do not run git."
        .to_string()
}

/// Make a bash child find no repository, and run no hooks or fsmonitor even where a command
/// names one itself (`--git-dir`): git's own environment overrides beat the repository's
/// config. Filters, diff drivers and `include.path` cannot be switched off this way; with no
/// repository found, none is read.
pub(crate) fn switch_off(shell: &mut Command) {
    shell
        .env("GIT_DIR", "/dev/null")
        .env("GIT_CONFIG_COUNT", "2")
        .env("GIT_CONFIG_KEY_0", "core.hooksPath")
        .env("GIT_CONFIG_VALUE_0", "/dev/null")
        .env("GIT_CONFIG_KEY_1", "core.fsmonitor")
        .env("GIT_CONFIG_VALUE_1", "false");
}

/// The git files of a sandboxed session's project, before one bash call.
pub(crate) struct Watch {
    dir: PathBuf,
    before: String,
}

impl Watch {
    pub fn start(dir: &Path) -> Watch {
        let before = look(dir).digest;
        let dir = dir.to_path_buf();
        Watch { dir, before }
    }

    /// After the call: if it changed the git files, what the model is told.
    pub(crate) fn changed(&self) -> Option<String> {
        (look(&self.dir).digest != self.before).then(|| {
            "\n[note] This command changed .git/config or .git/hooks. Git runs commands \
             from them outside the sandbox, so corecoder will not let git run from them \
             again until the user has reviewed them and trusted them (/trust)."
                .to_string()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::TempDir;

    #[test]
    fn the_files_git_runs_from_are_named() {
        for (path, named) in [
            ("/p/.git/config", Some(".git/config")),
            (".git/hooks/pre-commit", Some(".git/hooks")),
            ("sub/.git/hooks", Some(".git/hooks")),
            ("/p/.git", Some(".git")),
            ("/p/.git/commondir", Some(".git/commondir")),
            ("/p/.git/HEAD", None),
            ("/p/.github/config", None),
            ("/p/src/main.rs", None),
        ] {
            let got = planted_path(Path::new(path));
            assert_eq!(got.as_deref(), named, "{path}");
        }
    }

    #[test]
    fn git_is_found_as_a_word() {
        for yes in [
            "git status",
            "cd x && git commit",
            "/usr/bin/git log",
            "(git push)",
        ] {
            assert!(mentions_git(yes), "{yes}");
        }
        for no in ["cat .gitignore", "ls digit", "echo gitx", "cargo build"] {
            assert!(!mentions_git(no), "{no}");
        }
    }

    #[test]
    fn a_change_to_config_or_a_hook_changes_the_digest() {
        let dir = TempDir::new("git-files");
        let absent = look(&dir.0).digest;
        dir.write(".git/config", "[core]\n");
        dir.write(".git/hooks/pre-commit.sample", "#!/bin/sh\n");
        let plain = look(&dir.0);
        assert_ne!(plain.digest, absent);
        assert_eq!(look(&dir.0).digest, plain.digest, "stable");
        assert!(plain.text.contains("[core]") && plain.text.contains("1 .sample"));
        dir.write(".git/hooks/pre-commit", "#!/bin/sh\ntouch x\n");
        let hooked = look(&dir.0);
        assert_ne!(hooked.digest, plain.digest);
        assert!(
            hooked
                .text
                .contains(".git/hooks/pre-commit:\n#!/bin/sh\ntouch x")
        );
        let watch = Watch::start(&dir.0);
        assert_eq!(watch.changed(), None);
        dir.write(".git/config", "[core]\n\tfsmonitor = touch y\n");
        assert!(watch.changed().is_some());
        // A hook linked into the tree counts with what it points to; a FIFO is never trusted.
        let script = dir.write("scripts/check.sh", "#!/bin/sh\n");
        std::os::unix::fs::symlink(&script, dir.0.join(".git/hooks/post-commit")).unwrap();
        let linked = look(&dir.0);
        assert_eq!(look(&dir.0).digest, linked.digest, "stable");
        assert!(linked.text.contains("(a link to "), "{}", linked.text);
        dir.write("scripts/check.sh", "#!/bin/sh\ntouch y\n");
        assert_ne!(look(&dir.0).digest, linked.digest);
        let fifo = dir.0.join(".git/hooks/pre-push");
        assert!(
            Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        assert_ne!(look(&dir.0).digest, look(&dir.0).digest);
    }
}
