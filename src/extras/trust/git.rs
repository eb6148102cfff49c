//! The project's git files as part of its trust: whether bash's git may run from them, the
//! record that starts watching them, and the line that says git is off.
//!
//! `trust.rs` looks at them with the other project files (one entry, `.git`, digest from
//! `git_files.rs`); this file only decides what that entry means. Their text as last trusted
//! is kept beside the record (`~/.corecoder/trusted-git/`), so the question shows what
//! changed as a diff. It does not run git.

use super::store::{failed, key, locked_store, write_private};
use super::{GIT_DIR, Project, ProjectFile};
use crate::extras::git_files::{self, GitTrust};
use crate::extras::sha256;
use crate::tools::support::{diff, files};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Where the git files' text as last trusted is kept for `dir`.
fn kept_text(store: &Path, dir: &Path) -> PathBuf {
    let name = sha256::hex_digest(key(dir).as_bytes());
    store.with_file_name("trusted-git").join(&name[..32])
}

impl Project {
    /// The `.git` entry of `Project::look`, when the project is watched: its digest compared
    /// with the record, shown as a diff against the text last trusted (whole when there is none).
    pub(super) fn look_at_git(&mut self, store: &Path, record: Option<&Value>) {
        let git = self.dir.join(GIT_DIR);
        if record.and_then(|r| r.get(key(&git))).is_none() {
            return;
        }
        let now = git_files::look(&self.dir);
        let before = files::read_capped(&kept_text(store, &self.dir), files::MAX_SETTINGS_BYTES);
        let before = before.map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        let shown = match before {
            Ok(before) if before != now.text => {
                let changes = diff::unified(&before, &now.text, "as trusted", "now");
                format!("git runs commands from these files; what changed:\n{changes}")
            }
            _ => format!("git runs commands from these files:\n{}", now.text),
        };
        let file = ProjectFile::with_digest(git, now.digest, shown, record);
        self.files.push(file);
    }

    /// After `remember`: keep the git files' text, if they are what was just trusted (a
    /// change since the question is not kept: the next question shows it).
    pub(super) fn keep_git_text(&self, store: &Path) {
        let git = self.dir.join(GIT_DIR);
        let Some(trusted) = self.files.iter().find(|f| f.path == git) else {
            return;
        };
        let now = git_files::look(&self.dir);
        if now.digest == trusted.digest {
            let _ = write_private(&kept_text(store, &self.dir), now.text.as_bytes());
        }
    }

    /// Whether bash may run git from the project's git files: yes unless they are watched and
    /// differ from what was trusted.
    pub(crate) fn git(&self) -> GitTrust {
        match self.allows(GIT_DIR) {
            true => GitTrust::Trusted,
            false => GitTrust::Untrusted,
        }
    }

    /// A sandboxed session starts: from now on the git files it could plant in are part of
    /// the project's trust, as they are now (nothing sandboxed has touched them yet). Only
    /// projects that had a sandboxed session are watched: elsewhere a `git remote add` of the
    /// user's own would make corecoder ask at every start, for no attacker.
    pub(crate) fn watch_git(&self, store: &Path) -> Result<(), String> {
        let git = self.dir.join(GIT_DIR);
        if self.files.iter().any(|f| f.path == git) {
            return Ok(());
        }
        let (_lock, mut projects) = locked_store(store)?;
        let record = projects.entry(key(&self.dir)).or_insert_with(|| json!({}));
        let Some(record) = record.as_object_mut() else {
            return Ok(());
        };
        let now = git_files::look(&self.dir);
        record.insert(key(&git), json!(now.digest));
        let text = json!({ "projects": projects }).to_string();
        let _ = write_private(&kept_text(store, &self.dir), now.text.as_bytes());
        write_private(store, text.as_bytes()).map_err(|e| failed(store, e))
    }

    /// The line for a run in which git is off for bash; none when it is not.
    pub(crate) fn git_line(&self) -> Option<String> {
        (self.git() == GitTrust::Untrusted).then(|| {
            "Git is off for bash in this session: this project's .git/config or .git/hooks \
             changed since you trusted them (a sandboxed session has run here), and git runs \
             commands from them. Review them (they are shown by /trust), then /trust, or start \
             with --trust-project."
                .to_string()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extras::trust::Trust;
    use crate::tools::test_support::TempDir;

    #[test]
    fn git_files_count_only_once_watched_and_apart_from_the_rest() {
        let dir = TempDir::new("trust-git");
        let work = dir.0.join("work");
        let store = dir.0.join("home/.corecoder/trusted.json");
        dir.write("work/.git/config", "[core]\n");
        let look = || Project::look(&work, None, &store);
        assert!(
            look().files.is_empty(),
            "not watched before a sandboxed session"
        );
        look().watch_git(&store).unwrap();
        assert_eq!(look().git(), GitTrust::Trusted);
        assert_eq!(look().git_line(), None);
        dir.write("work/.git/config", "[core]\n\tfsmonitor = touch x\n");
        let planted = look();
        assert_eq!(
            (planted.git(), planted.trust()),
            (GitTrust::Untrusted, Trust::Trusted)
        );
        assert!(planted.git_line().unwrap().contains("Git is off for bash"));
        let question = planted.question();
        assert!(question.contains("what changed:"), "{question}");
        assert!(question.contains("+\tfsmonitor = touch x"), "{question}");
        // Watching again keeps the old digest: a planted change is not taken as the new base.
        planted.watch_git(&store).unwrap();
        assert_eq!(look().git(), GitTrust::Untrusted);
        look().remember(&store).unwrap();
        assert_eq!(look().git(), GitTrust::Trusted);
    }
}
