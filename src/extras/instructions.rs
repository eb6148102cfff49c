//! Project instructions: the `AGENTS.md` files (or `CLAUDE.md`) that tell the agent how this
//! project wants to be worked on.
//!
//! Read at the start of every round, when the system prompt is rebuilt: from the git root down
//! to the working directory (in each directory `AGENTS.md`, else `CLAUDE.md`), after the user's
//! own `~/.corecoder/AGENTS.md`. Files are re-read only when one of them changed. It never
//! writes anything and never follows instructions itself: it only hands text to the prompt.

use crate::tools::support::files;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Everything beyond this is cut, so a huge file cannot crowd out the conversation.
const MAX_BYTES: usize = 32 * 1024;

#[derive(Debug, Clone, Default)]
pub(crate) struct Instructions {
    home: PathBuf,
    /// The files found last time, with what identifies their version.
    seen: Vec<(PathBuf, Option<SystemTime>, u64)>,
    text: String,
}

/// The instructions as they stand in `cwd` (re-read when a file changed); none when the
/// feature is off.
pub(crate) fn text(instructions: &mut Option<Instructions>, cwd: &Path) -> String {
    instructions
        .as_mut()
        .map_or_else(String::new, |i| i.text(cwd).to_string())
}

impl Instructions {
    /// `home` is the directory holding the user's own `AGENTS.md` (`~/.corecoder`).
    pub fn new(home: &Path) -> Instructions {
        Instructions {
            home: home.to_path_buf(),
            ..Instructions::default()
        }
    }

    /// The joined instructions for `cwd`, re-read if any file appeared, changed or went away.
    pub(crate) fn text(&mut self, cwd: &Path) -> &str {
        let files = self.files(cwd);
        let versions: Vec<(PathBuf, Option<SystemTime>, u64)> = files
            .into_iter()
            .filter_map(|path| {
                let meta = std::fs::metadata(&path).ok()?;
                Some((path, meta.modified().ok(), meta.len()))
            })
            .collect();
        if versions != self.seen {
            self.text = join(&versions);
            self.seen = versions;
        }
        &self.text
    }

    /// Candidate files, user's first, then from the repository root down to `cwd`.
    fn files(&self, cwd: &Path) -> Vec<PathBuf> {
        let root = cwd
            .ancestors()
            .find(|dir| dir.join(".git").exists())
            .unwrap_or(cwd);
        let mut dirs: Vec<&Path> = cwd.ancestors().take_while(|dir| *dir != root).collect();
        dirs.push(root);
        dirs.reverse();
        let mut files = vec![self.home.join("AGENTS.md")];
        for dir in dirs {
            let agents = dir.join("AGENTS.md");
            match agents.is_file() {
                true => files.push(agents),
                false => files.push(dir.join("CLAUDE.md")),
            }
        }
        files
    }
}

/// Each file under a heading that names it, capped at `MAX_BYTES` in all.
fn join(versions: &[(PathBuf, Option<SystemTime>, u64)]) -> String {
    let mut text = String::new();
    for (path, _, _) in versions {
        // No more than can be kept is read (and a link to `/dev/zero` is no file): the head
        // may end inside a character, and a file that is not UTF-8 before that is skipped.
        let Ok(head) = files::read_head(path, MAX_BYTES as u64) else {
            continue;
        };
        let content = match String::from_utf8(head) {
            Ok(text) => text,
            Err(e) if e.utf8_error().error_len().is_none() => {
                let whole = e.utf8_error().valid_up_to();
                String::from_utf8_lossy(&e.as_bytes()[..whole]).into_owned()
            }
            Err(_) => continue,
        };
        text.push_str(&format!("## {}\n\n{}\n\n", path.display(), content.trim()));
    }
    if text.len() > MAX_BYTES {
        let mut cut = MAX_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[project instructions cut at 32 KiB]\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_to_cwd_with_claude_md_as_fallback() {
        let base = std::env::temp_dir().join(format!("corecoder-instr-{}", std::process::id()));
        let (home, repo) = (base.join("home"), base.join("repo"));
        let sub = repo.join("a").join("b");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::write(home.join("AGENTS.md"), "user rules").unwrap();
        std::fs::write(repo.join("AGENTS.md"), "root rules").unwrap();
        std::fs::write(repo.join("CLAUDE.md"), "ignored: AGENTS.md is here").unwrap();
        std::fs::write(repo.join("a").join("CLAUDE.md"), "claude rules").unwrap();
        let mut instructions = Instructions::new(&home);
        let text = instructions.text(&sub).to_string();
        let order: Vec<usize> = ["user rules", "root rules", "claude rules"]
            .iter()
            .map(|needle| text.find(needle).expect(needle))
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert!(!text.contains("ignored"), "{text}");
        assert!(text.contains(&format!("## {}", repo.join("AGENTS.md").display())));
        // A change is picked up on the next read.
        std::fs::write(sub.join("AGENTS.md"), "new deeper rules").unwrap();
        assert!(instructions.text(&sub).contains("new deeper rules"));
        std::fs::write(sub.join("AGENTS.md"), "x".repeat(40_000)).unwrap();
        assert!(instructions.text(&sub).len() < 33 * 1024);
        let _ = std::fs::remove_dir_all(base);
    }

    /// Only the head that can be kept is read: one cut inside a character still counts (up to
    /// that character), and a file that is not UTF-8 before the cut is left out.
    #[test]
    fn a_head_cut_inside_a_character_is_kept_and_bytes_that_are_not_text_are_not() {
        let base = std::env::temp_dir().join(format!("corecoder-instr-cut-{}", std::process::id()));
        let (home, repo) = (base.join("home"), base.join("repo"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        // One ASCII byte first, so the 32 KiB cut falls inside a two-byte "é".
        std::fs::write(repo.join("AGENTS.md"), format!("x{}", "é".repeat(20_000))).unwrap();
        let text = Instructions::new(&home).text(&repo).to_string();
        assert!(
            text.contains("xéé") && text.contains("cut at 32 KiB"),
            "{}",
            &text[..80]
        );
        assert!(!text.contains('\u{FFFD}'));
        std::fs::write(repo.join("AGENTS.md"), [b'r', b'u', 0xff, b'l', b'e']).unwrap();
        assert_eq!(Instructions::new(&home).text(&repo), "");
        let _ = std::fs::remove_dir_all(base);
    }
}
