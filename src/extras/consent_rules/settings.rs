//! The settings files: corecoder's and Claude Code's, read for their `permissions` rules and
//! their `hooks`; and the file where "always" answers for a project are kept.
//!
//! Read once at set-up (`app/setup.rs::load_extensions`, again by `/trust`): the user's
//! `~/.corecoder/settings.json` and `~/.claude/settings.json`, then the project's
//! `.corecoder/settings.json`, `.claude/settings.json` and `.claude/settings.local.json` (only
//! when `trust.rs` says the project is trusted: they can allow commands and run hooks), then
//! this project's entry of `~/.corecoder/project-rules.json`. "Always" answers are saved
//! there, keyed by the project's folder, and not in the project: a file inside the project
//! could be written by the session itself (the model granting itself a rule), and every
//! save would change a file the trust record holds and ask the trust question again.
//! `/permissions rm` removes a rule from the file it came from. Nothing here decides.

use crate::extras::consent_rules::rules::{self, Bases, List, Rule};
use crate::tools::support::file_lock::FileLock;
use crate::tools::support::files::{self, Access, write_atomic};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The project's settings files, relative to its folder (`trust.rs` asks about them).
pub(crate) const PROJECT_FILES: [&str; 3] = [
    ".corecoder/settings.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
];

/// What the settings files hold for this session.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub(crate) rules: Vec<Rule>,
    /// Settings files with a `hooks` key, for `Hooks::load`.
    pub(crate) hook_files: Vec<PathBuf>,
    pub(crate) warnings: Vec<String>,
    /// Where this project's "always" rules are saved.
    pub(crate) saved: Option<Saved>,
}

/// `~/.corecoder/project-rules.json` and the project whose entry is this session's.
#[derive(Debug, Clone)]
pub(crate) struct Saved {
    pub(crate) file: PathBuf,
    pub(crate) project: PathBuf,
    bases: Bases,
}

/// Read every settings file that applies. `home` is the user's home directory, `own` is
/// `~/.corecoder`; `trusted(relative)` says whether a project file may count.
pub(crate) fn load(home: &Path, own: &Path, cwd: &Path, trusted: &dyn Fn(&str) -> bool) -> Loaded {
    let project = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let mut files = vec![
        own.join("settings.json"),
        home.join(".claude/settings.json"),
    ];
    for relative in PROJECT_FILES {
        let path = cwd.join(relative);
        // Started in the home directory, the project's files are the user's: read them once.
        if trusted(relative) && !files.contains(&path) && !path.starts_with(own) {
            files.push(path);
        }
    }
    let mut loaded = Loaded::default();
    for file in files {
        let root = match read_json(&file) {
            Ok(Some(root)) => root,
            Ok(None) => continue,
            Err(e) => {
                loaded.warnings.push(e);
                continue;
            }
        };
        let settings_root = file
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("/"));
        let bases = Bases {
            home: home.to_path_buf(),
            settings_root: settings_root.to_path_buf(),
            cwd: project.clone(),
        };
        add_rules(&root["permissions"], &file, &bases, &mut loaded);
        if root.get("hooks").is_some() {
            loaded.hook_files.push(file);
        }
    }
    let file = own.join("project-rules.json");
    let bases = Bases {
        home: home.to_path_buf(),
        settings_root: project.clone(),
        cwd: project.clone(),
    };
    match read_json(&file) {
        Ok(root) => {
            let entry = root.as_ref().map(|root| &root["projects"][key(&project)]);
            if let Some(entry) = entry {
                add_rules(&entry["permissions"], &file, &bases, &mut loaded);
            }
        }
        Err(e) => loaded.warnings.push(e),
    }
    loaded.saved = Some(Saved {
        file,
        project,
        bases,
    });
    loaded
}

/// The rules of one `permissions` object; a rule that cannot be read is skipped with a warning.
fn add_rules(permissions: &Value, file: &Path, bases: &Bases, loaded: &mut Loaded) {
    for list in [List::Deny, List::Ask, List::Allow] {
        let texts = permissions[list.key()]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for text in texts.iter().filter_map(Value::as_str) {
            match rules::parse(text, list, file, bases) {
                Ok(rule) => loaded.rules.push(rule),
                Err(e) => (loaded.warnings).push(format!("{}: rule skipped: {e}", file.display())),
            }
        }
    }
}

/// A missing file is `None`; one that is not a JSON object is an error.
fn read_json(file: &Path) -> Result<Option<Value>, String> {
    let text = match files::read_settings_text(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{} ignored: {e}", file.display())),
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(root) if root.is_object() => Ok(Some(root)),
        Ok(_) => Err(format!("{} ignored: not a JSON object", file.display())),
        Err(e) => Err(format!("{} ignored: {e}", file.display())),
    }
}

fn key(project: &Path) -> String {
    project.to_string_lossy().into_owned()
}

impl Saved {
    /// Add `found` to this project's allow list, in the file and in `list` (from now on).
    /// The file is read again under its lock, so what another session saved meanwhile stays.
    pub(crate) fn add(&self, found: &[String], list: &mut Vec<Rule>) -> Result<(), String> {
        let _lock = lock(&self.file)?;
        let mut root = read_json(&self.file)?.unwrap_or_else(|| json!({}));
        let project = slot(slot(&mut root, "projects")?, &key(&self.project))?;
        let entry = slot(slot(project, "permissions")?, "allow")?;
        if !entry.is_array() {
            *entry = json!([]);
        }
        let allow = entry.as_array_mut().ok_or("not a list")?;
        for text in found {
            if !allow.iter().any(|t| t == text.as_str()) {
                allow.push(json!(text));
            }
            list.push(rules::parse(text, List::Allow, &self.file, &self.bases)?);
        }
        write(&self.file, &root)
    }
}

/// Remove `rule` from the file it came from (the first entry written as it is).
pub(crate) fn remove(rule: &Rule, saved: Option<&Saved>) -> Result<(), String> {
    let _lock = lock(&rule.source)?;
    let mut root = read_json(&rule.source)?.ok_or("the file is gone")?;
    let permissions = match saved.filter(|saved| saved.file == rule.source) {
        Some(saved) => slot(
            slot(slot(&mut root, "projects")?, &key(&saved.project))?,
            "permissions",
        )?,
        None => slot(&mut root, "permissions")?,
    };
    let entries = (permissions.get_mut(rule.list.key()))
        .and_then(Value::as_array_mut)
        .ok_or("the rule is no longer in the file")?;
    let at = (entries.iter())
        .position(|t| t.as_str().map(str::trim) == Some(&rule.text))
        .ok_or("the rule is no longer in the file")?;
    entries.remove(at);
    write(&rule.source, &root)
}

/// The lock of a file under `~/.corecoder` that sessions share; none for a settings file
/// elsewhere (a project's), which would otherwise gain a `.lock` beside it.
fn lock(file: &Path) -> Result<Option<FileLock>, String> {
    let shared = file.parent().is_some_and(|dir| dir.ends_with(".corecoder"));
    let taken = shared.then(|| FileLock::take(file)).transpose();
    taken.map_err(|e| format!("{}: {e}", file.display()))
}

fn write(file: &Path, root: &Value) -> Result<(), String> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(root).map_err(|e| e.to_string())?;
    write_atomic(file, format!("{text}\n").as_bytes(), Access::AsBefore)
        .map_err(|e| format!("{}: {e}", file.display()))
}

/// `value[name]`, made an object (and the entry made) where it is missing; an error, not the
/// panic of `IndexMut`, when a hand-edited file has something else there.
fn slot<'a>(value: &'a mut Value, name: &str) -> Result<&'a mut Value, String> {
    if value.is_null() {
        *value = Value::Object(Map::new());
    }
    let object = value
        .as_object_mut()
        .ok_or(format!("'{name}' is inside a non-object"))?;
    Ok(object.entry(name).or_insert(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn texts(loaded: &Loaded) -> Vec<String> {
        (loaded.rules.iter())
            .map(|r| format!("{} {}", r.list.key(), r.text))
            .collect()
    }

    #[test]
    fn user_and_trusted_project_files_saved_rules_and_removal() {
        let dir = std::env::temp_dir().join(format!("corecoder-settings-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (home, project) = (dir.join("home"), dir.join("project"));
        let own = home.join(".corecoder");
        write(
            &own.join("settings.json"),
            r#"{"permissions": {"deny": ["Read(~/.ssh/**)"]}}"#,
        );
        write(
            &home.join(".claude/settings.json"),
            r#"{"permissions": {"allow": ["Bash(git status)", "Bash(("]}, "hooks": {}}"#,
        );
        write(
            &project.join(".claude/settings.json"),
            r#"{"permissions": {"ask": ["Bash(git push:*)"]}}"#,
        );
        write(&project.join(".claude/settings.local.json"), "[1]");
        let everything = |_: &str| true;
        let loaded = load(&home, &own, &project, &everything);
        assert_eq!(
            texts(&loaded),
            [
                "deny Read(~/.ssh/**)",
                "allow Bash(git status)",
                "ask Bash(git push:*)"
            ]
        );
        assert_eq!(loaded.hook_files, [home.join(".claude/settings.json")]);
        assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
        let nothing = |_: &str| false;
        let untrusted = load(&home, &own, &project, &nothing);
        assert_eq!(untrusted.rules.len(), 2, "the project's files are left out");

        let saved = loaded.saved.clone().unwrap();
        let mut list = Vec::new();
        saved
            .add(&["Bash(cargo test:*)".to_string()], &mut list)
            .unwrap();
        saved
            .add(&["Bash(cargo test:*)".to_string()], &mut list)
            .unwrap();
        let again = load(&home, &own, &project, &nothing);
        assert_eq!(texts(&again)[2..], ["allow Bash(cargo test:*)"]);
        assert!(again.rules[2].covers_command(&["cargo".into(), "test".into()]));
        let elsewhere = load(&home, &own, &home, &nothing);
        assert_eq!(elsewhere.rules.len(), 2, "saved for that project only");

        remove(&again.rules[2], again.saved.as_ref()).unwrap();
        remove(&again.rules[0], again.saved.as_ref()).unwrap();
        let after = load(&home, &own, &project, &nothing);
        assert_eq!(texts(&after), ["allow Bash(git status)"]);
        assert!(remove(&again.rules[0], after.saved.as_ref()).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
