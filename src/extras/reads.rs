//! The read boundary: `read_file`, `grep` and `glob` run without asking only beneath the
//! session's roots (the launch directory, the temp directory, each `--add-dir`: the roots
//! `ShellSafety::for_session` fixes), in every sandbox mode, `--sandbox off` included. It is
//! Claude Code's rule too: reads outside the working directories ask.
//!
//! `consent_rules::verdict` asks `outside` about every call before the permission rules have
//! their say (a deny still refuses, a `Read(...)` allow lets the path it names through), and
//! early start (`early.rs`) starts only reads that stay inside. Where a read lands is judged as
//! a write is, by `sandbox::landing_place` (symlinks followed, `..` taken). What it does not
//! do: confine the read itself (a symlink swapped between the check and the read by a process
//! that outlived its bash call is followed), nor look at what `bash` reads.

use crate::core::consent::{Consent, Mode, Verdict};
use crate::extras::sandbox::{Reads, ShellSafety, landing_place};
use crate::tools::support::files::resolve;
use serde_json::Value;
use std::path::{Component, Path, PathBuf};

/// A read that reaches outside the roots: where it really lands.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outside {
    pub(crate) tool: String,
    /// Resolved: past symlinks and `..` (as written, for a symlink that leads nowhere).
    pub(crate) place: PathBuf,
    roots: Vec<PathBuf>,
}

/// The first place the read-only call `tool(arguments)` reaches outside the roots, if any.
/// Every other tool, and every read where the boundary is off (`Reads::Anywhere`): `None`.
pub(crate) fn outside(
    shell: &ShellSafety,
    tool: &str,
    arguments: &str,
    cwd: &Path,
) -> Option<Outside> {
    if shell.reads == Reads::Anywhere {
        return None;
    }
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let beneath = |place: &PathBuf| shell.roots.iter().any(|root| place.starts_with(root));
    let place = (reaches(tool, &args, cwd).into_iter())
        .map(|path| landing_place(&path).unwrap_or(path))
        .find(|place| !beneath(place))?;
    Some(Outside {
        tool: tool.to_string(),
        place,
        roots: shell.roots.clone(),
    })
}

impl Outside {
    /// Consent's verdict when no permission rule speaks: `--yes` runs it, the interactive
    /// session asks each time showing where it lands, and where no one can be asked it is
    /// refused, telling the model how the user can allow it.
    pub(crate) fn verdict(&self, consent: &Consent) -> Verdict {
        let place = self.place.display();
        match consent.mode {
            Mode::AllowAll => Verdict::Run,
            Mode::Ask => {
                Verdict::AskEachTime(format!("{place} is outside this session's directories"))
            }
            Mode::ReadOnly => {
                let roots: Vec<String> = (self.roots.iter())
                    .map(|root| root.display().to_string())
                    .collect();
                Verdict::Refuse(format!(
                    "Refused: {} would read {place}, which is outside this session's directories \
                     ({}), and no one can approve it here (corecoder -p without --yes, or a \
                     sub-agent). The user can allow it with a permission rule such as \
                     \"Read(/{place})\" in the allow list of ~/.claude/settings.json, or by \
                     starting corecoder with --add-dir DIR. Do not try to reach it another way; \
                     say what you need from it so the user can decide.",
                    self.tool,
                    roots.join(", ")
                ))
            }
        }
    }
}

/// Where a read-only call reaches: the file `read_file` reads, the directory or file `grep`
/// and `glob` start from, and the fixed start of a pattern that climbs out of it
/// (`../../*`, `/home/*`). Nothing for the other tools.
fn reaches(tool: &str, args: &Value, cwd: &Path) -> Vec<PathBuf> {
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    let pattern = match tool {
        "read_file" => {
            return text("file_path")
                .map(|p| resolve(cwd, p))
                .into_iter()
                .collect();
        }
        "glob" => text("pattern"),
        "grep" => text("include"),
        _ => return Vec::new(),
    };
    let start = resolve(cwd, text("path").unwrap_or("."));
    let climbs = pattern.and_then(fixed_start).map(|fixed| start.join(fixed));
    [Some(start), climbs].into_iter().flatten().collect()
}

/// The components of a glob before its first wildcard, when they leave the directory it is
/// matched in (a `..`, or an absolute start).
fn fixed_start(pattern: &str) -> Option<PathBuf> {
    let wild = |part: &Component| {
        part.as_os_str()
            .to_string_lossy()
            .contains(['*', '?', '[', '{'])
    };
    let fixed: PathBuf = Path::new(pattern)
        .components()
        .take_while(|part| !wild(part))
        .collect();
    let climbs = |part: Component| matches!(part, Component::ParentDir | Component::RootDir);
    fixed.components().any(climbs).then_some(fixed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::TempDir;
    use serde_json::json;

    #[test]
    fn reads_outside_the_roots_are_found_past_symlinks_and_dotdots() {
        let dir = TempDir::new("reads-outside");
        let real = |p: PathBuf| p.canonicalize().expect("exists");
        std::fs::create_dir_all(dir.0.join("work/sub")).unwrap();
        std::fs::create_dir_all(dir.0.join("home/.ssh")).unwrap();
        std::fs::write(dir.0.join("home/.ssh/id_rsa"), "secret").unwrap();
        let (work, home) = (real(dir.0.join("work")), real(dir.0.join("home")));
        std::os::unix::fs::symlink(home.join(".ssh/id_rsa"), work.join("key")).unwrap();
        let shell = ShellSafety {
            roots: vec![work.clone()],
            reads: Reads::BeneathRoots,
            ..ShellSafety::default()
        };
        let place = |tool: &str, args: Value| {
            outside(&shell, tool, &args.to_string(), &work.join("sub")).map(|o| o.place)
        };
        let key = home.join(".ssh/id_rsa");
        assert_eq!(place("read_file", json!({"file_path": "../x.rs"})), None);
        assert_eq!(place("read_file", json!({"file_path": "new/f"})), None);
        assert_eq!(
            place("read_file", json!({"file_path": key})),
            Some(key.clone())
        );
        assert_eq!(
            place("read_file", json!({"file_path": "../key"})),
            Some(key.clone())
        );
        let up = json!({"file_path": "../../home/.ssh/id_rsa"});
        assert_eq!(place("read_file", up), Some(key.clone()));
        assert_eq!(place("grep", json!({"pattern": "x"})), None);
        let ssh = json!({"pattern": "x", "path": "../../home/.ssh"});
        assert_eq!(place("grep", ssh), Some(home.join(".ssh")));
        let climbing = json!({"pattern": "x", "include": "../../home/*"});
        assert_eq!(place("grep", climbing), Some(home.clone()));
        assert_eq!(place("glob", json!({"pattern": "../**/*.rs"})), None);
        assert_eq!(
            place("glob", json!({"pattern": "/etc/*"})),
            Some("/etc".into())
        );
        assert_eq!(
            place("glob", json!({"pattern": "**/*", "path": "/"})),
            Some("/".into())
        );
        assert_eq!(place("bash", json!({"command": "cat /etc/passwd"})), None);
        let anywhere = ShellSafety::default();
        let args = json!({"file_path": key}).to_string();
        assert_eq!(outside(&anywhere, "read_file", &args, &work), None);
    }

    #[test]
    fn asked_in_the_session_refused_with_the_way_out_where_no_one_can_be_asked() {
        let found = Outside {
            tool: "read_file".into(),
            place: "/home/u/.ssh/id_rsa".into(),
            roots: vec!["/proj".into(), "/tmp".into()],
        };
        assert_eq!(found.verdict(&Consent::new(Mode::AllowAll)), Verdict::Run);
        let asked = found.verdict(&Consent::new(Mode::Ask));
        let want = "/home/u/.ssh/id_rsa is outside this session's directories";
        assert_eq!(asked, Verdict::AskEachTime(want.into()));
        let Verdict::Refuse(why) = found.verdict(&Consent::new(Mode::ReadOnly)) else {
            panic!("not refused");
        };
        assert!(why.contains("read /home/u/.ssh/id_rsa") && why.contains("(/proj, /tmp)"));
        assert!(why.contains("\"Read(//home/u/.ssh/id_rsa)\"") && why.contains("--add-dir"));
    }
}
