//! The project's git files as part of its trust: whether bash's git may run from them, the
//! record that starts watching them, and the line that says git is off.
//!
//! `trust.rs` looks at them with the other project files (one entry, `.git`, digest from
//! `git_files.rs`); this file only decides what that entry means. It does not run git.

use super::{GIT_DIR, Project, key, read_store, write_private};
use crate::extras::git_files::{self, GitTrust};
use serde_json::json;
use std::path::Path;

impl Project {
    /// Whether bash may run git from the project's git files: yes unless they are watched and
    /// differ from what was trusted.
    pub fn git(&self) -> GitTrust {
        match self.allows(GIT_DIR) {
            true => GitTrust::Trusted,
            false => GitTrust::Untrusted,
        }
    }

    /// A sandboxed session starts: from now on the git files it could plant in are part of
    /// the project's trust, as they are now (nothing sandboxed has touched them yet). Only
    /// projects that had a sandboxed session are watched: elsewhere a `git remote add` of the
    /// user's own would make corecoder ask at every start, for no attacker.
    pub fn watch_git(&self, store: &Path) -> Result<(), String> {
        let git = self.dir.join(GIT_DIR);
        if self.files.iter().any(|f| f.path == git) {
            return Ok(());
        }
        let mut projects = read_store(store);
        let record = projects.entry(key(&self.dir)).or_insert_with(|| json!({}));
        let Some(record) = record.as_object_mut() else {
            return Ok(());
        };
        record.insert(key(&git), json!(git_files::look(&self.dir).digest));
        let text = json!({ "projects": projects }).to_string();
        write_private(store, text.as_bytes())
            .map_err(|e| format!("could not save {}: {e}", store.display()))
    }

    /// The line for a run in which git is off for bash; none when it is not.
    pub fn git_line(&self) -> Option<String> {
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
        assert!(planted.question().contains("fsmonitor = touch x"));
        // Watching again keeps the old digest: a planted change is not taken as the new base.
        planted.watch_git(&store).unwrap();
        assert_eq!(look().git(), GitTrust::Untrusted);
        look().remember(&store).unwrap();
        assert_eq!(look().git(), GitTrust::Trusted);
    }
}
