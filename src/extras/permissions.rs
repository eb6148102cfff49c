//! The tools the user allowed "always", kept across sessions in `~/.corecoder/permissions.json`.
//!
//! Read once at set-up (`app/setup.rs`); written again, atomically, each time the user answers
//! "always" (`Extras::allowed_always`, called by the batch). Consent (`core/consent.rs`) holds
//! the list in memory and decides with it; this file only reads and writes the file, and
//! decides nothing.

use crate::tools::support::file_lock::FileLock;
use crate::tools::support::files::{self, Access, write_atomic};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Where "always" answers are kept; `file: None` (the default) keeps them for this session only.
#[derive(Debug, Clone, Default)]
pub(crate) struct Permissions {
    pub(crate) file: Option<PathBuf>,
}

impl Permissions {
    /// The tools allowed "always" in earlier sessions. A missing file is an empty list; an
    /// unreadable one is reported and then treated as empty (it is rewritten on the next
    /// "always").
    pub(crate) fn read(&self) -> (BTreeSet<String>, Option<String>) {
        let Some(file) = &self.file else {
            return (BTreeSet::new(), None);
        };
        match files::read_settings_text(file) {
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Ok(value) => {
                    let names = value["always"].as_array().cloned().unwrap_or_default();
                    let names = names.iter().filter_map(|n| n.as_str().map(String::from));
                    (names.collect(), None)
                }
                Err(e) => (
                    BTreeSet::new(),
                    Some(format!("ignoring {}: {e}", file.display())),
                ),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (BTreeSet::new(), None),
            Err(e) => (
                BTreeSet::new(),
                Some(format!("cannot read {}: {e}", file.display())),
            ),
        }
    }

    /// Save the list, when there is a file (atomically: temp + rename), merged under the file's
    /// lock with what is there: another session's "always" answers stay (none is ever removed).
    pub(crate) fn save(&self, always: &BTreeSet<String>) -> Result<(), String> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let _lock = FileLock::take(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let (mut merged, _) = self.read();
        merged.extend(always.iter().cloned());
        let text =
            serde_json::to_string_pretty(&json!({"always": merged})).map_err(|e| e.to_string())?;
        write_atomic(file, format!("{text}\n").as_bytes(), Access::AsBefore)
            .map_err(|e| format!("{}: {e}", file.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::consent::{Consent, Mode, Verdict};

    fn check(consent: &Consent, tool: &str) -> &'static str {
        match consent.verdict(tool) {
            Verdict::Run => "run",
            Verdict::Ask => "ask",
            _ => "other",
        }
    }

    /// What set-up does: a consent with the saved list.
    fn with_file(mode: Mode, file: PathBuf) -> (Consent, Permissions, Option<String>) {
        let permissions = Permissions { file: Some(file) };
        let (always, warning) = permissions.read();
        let mut consent = Consent::new(mode);
        consent.always = always;
        (consent, permissions, warning)
    }

    #[test]
    fn always_survives_a_restart() {
        let dir = std::env::temp_dir().join(format!("corecoder-consent-{}", std::process::id()));
        let file = dir.join("nested").join("permissions.json");
        let (mut first, permissions, warning) = with_file(Mode::Ask, file.clone());
        assert_eq!(warning, None);
        first.always.insert("edit_file".to_string());
        permissions.save(&first.always).unwrap();
        let (second, _, _) = with_file(Mode::Ask, file.clone());
        assert_eq!(check(&second, "edit_file"), "run");
        std::fs::write(&file, "not json").unwrap();
        let (third, _, warning) = with_file(Mode::Ask, file);
        assert!(warning.is_some_and(|w| w.contains("permissions.json")));
        assert_eq!(check(&third, "edit_file"), "ask");
        let _ = std::fs::remove_dir_all(dir);
    }
}
