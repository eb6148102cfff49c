//! Trusted projects: whether the files of the working directory that make corecoder run
//! commands, or send the key elsewhere, may do so.
//!
//! Those files are `.corecoder/hooks.json`, `.mcp.json`, the settings files (`consent_rules/settings.rs`:
//! their hooks run commands, their rules allow them) and a `.env` that names a host or widens
//! what tools may do (`dotenv.rs` says which). A session can write them (even its sandboxed bash),
//! and the next session would run them, so they count only once the user trusted them as they
//! are: `config.rs` looks the project up at start-up, `remember` records the SHA-256 of each file
//! in `~/.corecoder/trusted.json`, and a file whose digest differs is untrusted again. The
//! question itself is asked by `repl.rs`; `setup.rs` leaves out what is not trusted. The user's
//! own files under `~/.corecoder/` are not project files and are always trusted.
//!
//! Once a sandboxed session has run in a project, its git files (`git_files.rs`: what git
//! runs commands from) join the record as one entry, `.git`; while they differ, git is off for
//! bash (`Project::git`), and the question shows them. They do not make the rest untrusted.

use crate::extras::sha256;
use crate::tools::support::files;
use crate::tools::support::shown;
use serde_json::{Map, Value, json};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

mod git;
mod store;

use store::{failed, locked_store, read_store, write_private};

/// Project files that make corecoder start commands, relative to the working directory. A
/// project settings file added later that can run code belongs in `RUNS_COMMANDS` too.
pub(crate) const HOOKS_FILE: &str = ".corecoder/hooks.json";
pub(crate) const MCP_FILE: &str = ".mcp.json";
/// The repository's git files (`git_files.rs`), one entry for all of them.
pub(crate) const GIT_DIR: &str = ".git";
/// The settings files are here too: their hooks run commands, and their rules allow them.
const RUNS_COMMANDS: [&str; 5] = [
    HOOKS_FILE,
    MCP_FILE,
    crate::extras::consent_rules::settings::PROJECT_FILES[0],
    crate::extras::consent_rules::settings::PROJECT_FILES[1],
    crate::extras::consent_rules::settings::PROJECT_FILES[2],
];
/// Lines of a file the trust question shows before asking; all of it is one `v` away.
const PREVIEW_LINES: usize = 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trust {
    Trusted,
    Untrusted,
}

/// The project in the working directory, as far as trust goes. No files: nothing to trust.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Project {
    pub(crate) dir: PathBuf,
    pub(crate) files: Vec<ProjectFile>,
    /// For the user at start: `.env` settings ignored as untrusted, a record not saved.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProjectFile {
    pub(crate) path: PathBuf,
    pub(crate) digest: String,
    pub(crate) seen: Seen,
    /// What the trust question shows of it, whole (at most `MAX_SETTINGS_BYTES`): the file,
    /// or what trusting a `.env` allows. Hostile text: it is shown through `shown.rs`.
    pub(crate) text: String,
}

/// How the file compares with what the user trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    Trusted,
    New,
    Changed,
}

/// `~/.corecoder/trusted.json`, given `~/.corecoder`.
pub(crate) fn store_path(corecoder_home: &Path) -> PathBuf {
    corecoder_home.join("trusted.json")
}

/// The project's `.env`, when it needs trust (`dotenv.rs` decides): where it is, and what
/// trusting it would allow (never a key's value).
pub(crate) struct EnvFile<'a> {
    pub(crate) path: &'a Path,
    pub(crate) summary: String,
}

impl Project {
    /// The project files of `dir` (and its `.env`, if it needs trust), compared with `store`.
    pub(crate) fn look(dir: &Path, dotenv: Option<EnvFile>, store: &Path) -> Project {
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let record = read_store(store)
            .get(dir.to_string_lossy().as_ref())
            .cloned();
        // Started in the home directory, `.corecoder/hooks.json` is the user's own file.
        // So are `~/.claude/settings*.json`, Claude Code's user files.
        let own = store.parent().and_then(|own| own.canonicalize().ok());
        let claude = own
            .as_ref()
            .and_then(|own| Some(own.parent()?.join(".claude")));
        let users = |path: &Path| {
            [&own, &claude]
                .iter()
                .any(|o| o.as_ref().is_some_and(|o| path.starts_with(o)))
        };
        let mut files = Vec::new();
        for path in RUNS_COMMANDS.map(|relative| dir.join(relative)) {
            let bytes = match files::read_capped(&path, files::MAX_SETTINGS_BYTES) {
                _ if users(&path) => continue,
                Ok(bytes) => bytes,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                // Unreadable now is no reason to run it once it is readable: count it.
                Err(e) => format!("(cannot be read: {e})").into_bytes(),
            };
            let text = String::from_utf8_lossy(&bytes).into_owned();
            files.push(ProjectFile::new(path, &bytes, text, record.as_ref()));
        }
        if let Some(dotenv) = dotenv
            && let Ok(bytes) = files::read_capped(dotenv.path, files::MAX_SETTINGS_BYTES)
        {
            let path = (dotenv.path.canonicalize()).unwrap_or(dotenv.path.to_path_buf());
            let text = dotenv.summary;
            files.push(ProjectFile::new(path, &bytes, text, record.as_ref()));
        }
        let mut project = Project {
            dir,
            files,
            notes: Vec::new(),
        };
        // Watched once a sandboxed session has run here (`watch_git`).
        project.look_at_git(store, record.as_ref());
        project
    }

    /// Trusted when every file is as the user trusted it (or there is none). The git files are
    /// apart (`git`): they decide what bash's git may run, not what corecoder loads.
    pub(crate) fn trust(&self) -> Trust {
        let git = self.dir.join(GIT_DIR);
        let others = self.files.iter().filter(|f| f.path != git);
        match others.into_iter().all(|f| f.seen == Seen::Trusted) {
            true => Trust::Trusted,
            false => Trust::Untrusted,
        }
    }

    /// Trust the files as they are now, for this run and (written to `store`) the next ones.
    /// Even when writing fails, this run trusts them: the user said so.
    pub(crate) fn remember(&mut self, store: &Path) -> Result<(), String> {
        for file in &mut self.files {
            file.seen = Seen::Trusted;
        }
        if self.files.is_empty() {
            return Ok(());
        }
        let digests: Map<String, Value> = (self.files.iter())
            .map(|f| (f.path.to_string_lossy().into_owned(), json!(f.digest)))
            .collect();
        let (_lock, mut projects) = locked_store(store)?;
        projects.insert(
            self.dir.to_string_lossy().into_owned(),
            Value::Object(digests),
        );
        let text = json!({ "projects": projects }).to_string();
        write_private(store, text.as_bytes()).map_err(|e| failed(store, e))?;
        self.keep_git_text(store);
        Ok(())
    }

    /// Whether the project file `relative` (e.g. `HOOKS_FILE`) may run. Files that do not
    /// exist may: there is nothing to run.
    pub(crate) fn allows(&self, relative: &str) -> bool {
        let path = self.dir.join(relative);
        (self.files.iter()).all(|f| f.path != path || f.seen == Seen::Trusted)
    }

    /// The one line for a run that left project hooks or MCP servers out; none when nothing
    /// was (what an untrusted `.env` may not set has its own note, from `dotenv.rs`).
    pub(crate) fn skipped_line(&self) -> Option<String> {
        let runs_commands = RUNS_COMMANDS.map(|relative| self.dir.join(relative));
        let skipped: Vec<String> = (self.files.iter())
            .filter(|f| f.seen != Seen::Trusted && runs_commands.contains(&f.path))
            .map(|f| self.shown(&f.path))
            .collect();
        (!skipped.is_empty()).then(|| {
            format!(
                "Skipped this project's {}: it runs commands (hooks, MCP servers) or allows them \
                 (permission rules), and the project is not trusted. To trust it: corecoder \
                 --trust-project, or /trust in a session.",
                skipped.join(" and ")
            )
        })
    }

    /// The trust question's text: each file that is new or changed, and its first lines.
    pub(crate) fn question(&self) -> String {
        self.describe(&|text| {
            let short = shown::short(text, PREVIEW_LINES);
            let part = short.part().map(|part| format!("… {part}: [v] view all"));
            short.lines.into_iter().chain(part).collect()
        })
    }

    /// Whether the question leaves part of a file out (a line cut, lines not shown).
    pub(crate) fn shown_in_part(&self) -> bool {
        (self.untrusted()).any(|f| shown::short(&f.text, PREVIEW_LINES).part().is_some())
    }

    /// The question's text with all of each file, lines wrapped at `width`.
    pub(crate) fn whole(&self, width: usize) -> String {
        self.describe(&|text| shown::full(text, width.saturating_sub(4)))
    }

    /// The question's text, each file's lines as `view` shows them.
    fn describe(&self, view: &dyn Fn(&str) -> Vec<String>) -> String {
        let mut text = format!(
            "This folder ({}) has files that make corecoder run commands, allow them, or send \
             your key elsewhere:\n",
            self.dir.display()
        );
        for file in self.untrusted() {
            let seen = match file.seen {
                Seen::Changed => "changed since you trusted it",
                _ => "new",
            };
            text.push_str(&format!("\n{} ({seen}):\n", self.shown(&file.path)));
            for line in view(&file.text) {
                text.push_str(&format!("    {line}\n"));
            }
        }
        text
    }

    fn untrusted(&self) -> impl Iterator<Item = &ProjectFile> {
        self.files.iter().filter(|f| f.seen != Seen::Trusted)
    }

    /// A path relative to the project when it is inside it.
    fn shown(&self, path: &Path) -> String {
        let relative = path.strip_prefix(&self.dir).unwrap_or(path);
        relative.display().to_string()
    }
}

impl ProjectFile {
    fn new(path: PathBuf, bytes: &[u8], text: String, record: Option<&Value>) -> ProjectFile {
        ProjectFile::with_digest(path, sha256::hex_digest(bytes), text, record)
    }

    fn with_digest(
        path: PathBuf,
        digest: String,
        text: String,
        record: Option<&Value>,
    ) -> ProjectFile {
        let trusted = record.and_then(|r| r.get(path.to_string_lossy().as_ref()));
        let seen = match trusted.and_then(Value::as_str) {
            Some(old) if old == digest => Seen::Trusted,
            Some(_) => Seen::Changed,
            None => Seen::New,
        };
        ProjectFile {
            path,
            digest,
            seen,
            text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::TempDir;

    fn look(dir: &TempDir) -> Project {
        let store = dir.0.join("home/.corecoder/trusted.json");
        Project::look(&dir.0.join("work"), None, &store)
    }

    fn seen(project: &Project) -> Vec<(String, Seen)> {
        (project.files.iter())
            .map(|f| (project.shown(&f.path), f.seen))
            .collect()
    }

    /// A store that is there but cannot be read (here: past the 1 MiB a settings file may
    /// hold) is left as it is: writing only this project would lose every other one.
    #[test]
    fn a_store_that_cannot_be_read_is_not_overwritten() {
        let dir = TempDir::new("trust-unreadable");
        std::fs::create_dir_all(dir.0.join("work/.corecoder")).unwrap();
        std::fs::write(dir.0.join("work").join(HOOKS_FILE), "{}").unwrap();
        let store = dir.0.join("home/.corecoder/trusted.json");
        std::fs::create_dir_all(store.parent().unwrap()).unwrap();
        let big = format!(
            "{{\"projects\": {{}}, \"pad\": \"{}\"}}",
            "x".repeat(2 << 20)
        );
        std::fs::write(&store, &big).unwrap();
        let error = look(&dir).remember(&store).unwrap_err();
        assert!(error.contains("larger than 1 MiB"), "{error}");
        assert_eq!(std::fs::read_to_string(&store).unwrap(), big);
    }

    #[test]
    fn files_are_trusted_as_they_were_remembered() {
        let dir = TempDir::new("trust-record");
        let work = dir.0.join("work");
        std::fs::create_dir_all(work.join(".corecoder")).unwrap();
        assert_eq!(look(&dir).trust(), Trust::Trusted, "nothing to trust");
        std::fs::write(work.join(HOOKS_FILE), "{}").unwrap();
        let mut project = look(&dir);
        assert_eq!(seen(&project), [(HOOKS_FILE.to_string(), Seen::New)]);
        assert!(!project.allows(HOOKS_FILE) && project.allows(MCP_FILE));
        let store = dir.0.join("home/.corecoder/trusted.json");
        project.remember(&store).unwrap();
        let mode = std::fs::metadata(&store).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
        assert_eq!(look(&dir).trust(), Trust::Trusted);
        std::fs::write(work.join(HOOKS_FILE), "{ }").unwrap();
        std::fs::write(work.join(MCP_FILE), "{}").unwrap();
        let project = look(&dir);
        let want = [
            (HOOKS_FILE.to_string(), Seen::Changed),
            (MCP_FILE.to_string(), Seen::New),
        ];
        assert_eq!(seen(&project), want);
        let question = project.question();
        assert!(question.contains(".corecoder/hooks.json (changed since you trusted it)"));
        let line = project.skipped_line().unwrap();
        assert!(
            line.contains(".corecoder/hooks.json and .mcp.json"),
            "{line}"
        );
        // A file that cannot be read (here: a directory) still counts, untrusted.
        std::fs::remove_file(work.join(MCP_FILE)).unwrap();
        std::fs::create_dir(work.join(MCP_FILE)).unwrap();
        assert!(!look(&dir).allows(MCP_FILE));
        // A broken record trusts nothing.
        std::fs::write(&store, "{not json").unwrap();
        std::fs::write(work.join(HOOKS_FILE), "{}").unwrap();
        assert_eq!(look(&dir).trust(), Trust::Untrusted);
    }

    #[test]
    fn the_question_shows_hostile_text_without_its_escapes() {
        let dir = TempDir::new("trust-hostile");
        let work = dir.0.join("work");
        std::fs::create_dir_all(work.join(".corecoder")).unwrap();
        let text = "{\"a\": \"x\u{1b}[2K\rhidden\u{202e}\"}\r\nline two\n";
        std::fs::write(work.join(HOOKS_FILE), text).unwrap();
        let project = look(&dir);
        let question = project.question();
        assert!(question.ends_with("    {\"a\": \"x?[2K?hidden\\u{202e}\"}\n    line two\n"));
        assert!(!project.shown_in_part(), "{question}");
        let long = "x\n".repeat(PREVIEW_LINES + 5);
        std::fs::write(work.join(HOOKS_FILE), long).unwrap();
        let project = look(&dir);
        assert!(project.shown_in_part());
        let question = project.question();
        assert!(
            question.ends_with("    … showing 30 of 35 lines: [v] view all\n"),
            "{question}"
        );
        assert_eq!(project.whole(80).matches("    x\n").count(), 35);
    }

    #[test]
    fn the_users_own_file_is_not_a_project_file() {
        let dir = TempDir::new("trust-home");
        let own = dir.0.join(".corecoder");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("hooks.json"), "{}").unwrap();
        std::fs::create_dir_all(dir.0.join(".claude")).unwrap();
        std::fs::write(dir.0.join(".claude/settings.json"), "{}").unwrap();
        let project = Project::look(&dir.0, None, &own.join("trusted.json"));
        assert!(project.files.is_empty(), "{project:?}");
    }
}
