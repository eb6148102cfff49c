//! Consent: may this tool call run now, must the user be asked, or is it refused?
//!
//! The agent loop asks `Consent::verdict_for_call` for every call of a reply, on its own
//! thread, before the batch starts; only a `Verdict::Ask` or `AskEachTime` reaches the
//! terminal, as a question. A bash command the danger gate (`tools/danger.rs`) calls
//! catastrophic is refused in every mode; a destructive one is asked about every time (even
//! when bash is allowed "always"), and under `--yes` runs only if the user opted in to it by
//! name. The decision is pure logic (testable without a terminal); the one side effect here
//! is saving the tools the user allowed "always" to `~/.corecoder/permissions.json`.

use crate::core::dispatch;
use crate::tools::support::danger::{self, Danger};
use crate::tools::support::files::{Access, write_atomic};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// What the session allows mutating tools to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Interactive: ask the user for each call not already allowed "always".
    Ask,
    /// `--yes`: everything runs.
    AllowAll,
    /// `-p` without `--yes`, and sub-agents of an asking session: no one can be asked.
    ReadOnly,
}

/// Plan mode refuses every mutating call, whatever the mode or the "always" list says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    Off,
    On,
}

/// The user's answer to `[y] allow once  [a] always allow this tool  [n] deny`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Once,
    Always,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Run,
    Ask,
    /// Ask even when the tool is allowed "always" (a destructive command); the text says why.
    /// An "always" answer allows this call only.
    AskEachTime(String),
    /// Refused without asking; the text is the tool result the model reads.
    Refuse(String),
}

#[derive(Debug, Clone)]
pub struct Consent {
    pub mode: Mode,
    pub plan: Plan,
    always: BTreeSet<String>,
    /// Where "always" answers are kept; `None` keeps them for this session only.
    file: Option<PathBuf>,
    /// Destructive commands the user opted in to by name, for `--yes`
    /// (`CORECODER_ALLOW_DESTRUCTIVE`, `--allow-destructive`).
    destructive_allowed: BTreeSet<String>,
}

impl Consent {
    pub fn new(mode: Mode) -> Consent {
        Consent {
            mode,
            plan: Plan::Off,
            always: BTreeSet::new(),
            file: None,
            destructive_allowed: BTreeSet::new(),
        }
    }

    /// Let `--yes` run the destructive commands named (see `danger::destructive_names`).
    pub fn allow_destructive(&mut self, names: &[String]) {
        self.destructive_allowed.extend(names.iter().cloned());
    }

    /// Load the tools allowed "always" in earlier sessions. A missing file is an empty list;
    /// an unreadable one is reported and then treated as empty (it is rewritten on the next
    /// "always").
    pub fn with_file(mode: Mode, file: PathBuf) -> (Consent, Option<String>) {
        let mut consent = Consent::new(mode);
        let mut warning = None;
        match std::fs::read_to_string(&file) {
            Ok(text) => match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(value) => {
                    let names = value["always"].as_array().cloned().unwrap_or_default();
                    let names = names.iter().filter_map(|n| n.as_str().map(String::from));
                    consent.always = names.collect();
                }
                Err(e) => warning = Some(format!("ignoring {}: {e}", file.display())),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => warning = Some(format!("cannot read {}: {e}", file.display())),
        }
        consent.file = Some(file);
        (consent, warning)
    }

    /// The rules, in order: read-only tools always run; plan mode refuses the rest; then
    /// `--yes`, then "always", then the mode decides.
    pub fn verdict(&self, tool: &str) -> Verdict {
        if !dispatch::needs_consent(tool) {
            return Verdict::Run;
        }
        if self.plan == Plan::On {
            return Verdict::Refuse(format!(
                "Refused: plan mode is on, so {tool} may not run. Keep investigating with \
                 read-only tools (read_file, glob, grep), then present a numbered plan; the user \
                 will approve it before anything is changed."
            ));
        }
        if self.mode == Mode::AllowAll || self.always.contains(tool) {
            return Verdict::Run;
        }
        match self.mode {
            Mode::Ask => Verdict::Ask,
            _ => Verdict::Refuse(format!(
                "Refused: {tool} can change files or run commands, and no one can approve it \
                 here (corecoder -p without --yes, or a sub-agent). Carry on with read-only \
                 tools, or say what you would run so the user can do it."
            )),
        }
    }

    /// `verdict` for one call with its arguments: what the danger gate finds in a bash
    /// command comes first, whatever the mode or the "always" list say.
    pub fn verdict_for_call(&self, tool: &str, arguments: &str) -> Verdict {
        let verdict = self.verdict(tool);
        if tool != "bash" || matches!(verdict, Verdict::Refuse(_)) {
            return verdict;
        }
        let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        let Some(command) = args.get("command").and_then(Value::as_str) else {
            return verdict;
        };
        match danger::check(command) {
            None => verdict,
            Some(Danger::Catastrophic(reason)) => Verdict::Refuse(danger::blocked(reason)),
            Some(Danger::Destructive(found)) => self.destructive(&found),
        }
    }

    /// Asked about in an interactive session; with `--yes` (interactive too: it asks nothing)
    /// run only when every name found was opted in to.
    fn destructive(&self, found: &[(&str, &str)]) -> Verdict {
        let why: Vec<String> = (found.iter())
            .map(|(name, reason)| format!("{reason} [{name}]"))
            .collect();
        let why = why.join("; ");
        let missing: Vec<&str> = (found.iter())
            .map(|(name, _)| *name)
            .filter(|name| !self.destructive_allowed.contains(*name))
            .collect();
        match self.mode {
            Mode::Ask => Verdict::AskEachTime(format!("destructive: {why}")),
            Mode::AllowAll if missing.is_empty() => Verdict::Run,
            _ => Verdict::Refuse(format!(
                "Refused: {why}. This is destructive: with --yes it runs only when the user opted \
                 in to it by name (CORECODER_ALLOW_DESTRUCTIVE={names} or --allow-destructive \
                 {names}). Do it another way, or say what you would run so the user can decide.",
                names = missing.join(",")
            )),
        }
    }

    /// The text the model reads when the user says no.
    pub fn denial(tool: &str) -> String {
        format!("Denied: the user did not allow this {tool} call. Ask them, or try another way.")
    }

    /// Remember an "always" answer, on disk when there is a file (atomically: temp + rename).
    pub fn allow_always(&mut self, tool: &str) -> Result<(), String> {
        self.always.insert(tool.to_string());
        let Some(file) = &self.file else {
            return Ok(());
        };
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let text = serde_json::to_string_pretty(&json!({"always": self.always}))
            .map_err(|e| e.to_string())?;
        write_atomic(file, format!("{text}\n").as_bytes(), Access::AsBefore)
            .map_err(|e| format!("{}: {e}", file.display()))
    }

    /// A sub-agent runs on a worker thread, where no one can be asked: it keeps the rules but
    /// turns "ask" into "refuse".
    pub fn for_sub_agent(&self) -> Consent {
        let mut consent = self.clone();
        if consent.mode == Mode::Ask {
            consent.mode = Mode::ReadOnly;
        }
        consent.file = None;
        consent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(consent: &Consent, tool: &str) -> &'static str {
        name(consent.verdict(tool))
    }

    fn name(verdict: Verdict) -> &'static str {
        match verdict {
            Verdict::Run => "run",
            Verdict::Ask => "ask",
            Verdict::AskEachTime(_) => "ask each time",
            Verdict::Refuse(_) => "refuse",
        }
    }

    #[test]
    fn dangerous_bash_commands_in_each_mode() {
        let call = |consent: &Consent, command: &str| {
            let arguments = json!({ "command": command }).to_string();
            name(consent.verdict_for_call("bash", &arguments))
        };
        let mut ask = Consent::new(Mode::Ask);
        ask.allow_always("bash").unwrap();
        assert_eq!(call(&ask, "ls"), "run");
        assert_eq!(call(&ask, "git reset --hard"), "ask each time");
        assert_eq!(call(&ask, "rm -rf ~"), "refuse");
        let mut yes = Consent::new(Mode::AllowAll);
        assert_eq!(call(&yes, "git reset --hard"), "refuse");
        assert_eq!(call(&yes, "rm -rf /"), "refuse");
        yes.allow_destructive(&["git-reset-hard".to_string()]);
        assert_eq!(call(&yes, "git reset --hard"), "run");
        assert_eq!(call(&yes, "git reset --hard; git clean -fd"), "refuse");
        assert_eq!(call(&yes, "rm -rf /"), "refuse");
        let sub = yes.for_sub_agent();
        assert_eq!(call(&sub, "git reset --hard"), "run");
        assert_eq!(call(&sub, "rm -rf /"), "refuse");
        assert_eq!(
            call(&Consent::new(Mode::ReadOnly), "git reset --hard"),
            "refuse"
        );
    }

    #[test]
    fn the_rules_in_order() {
        let mut ask = Consent::new(Mode::Ask);
        assert_eq!(check(&ask, "read_file"), "run");
        assert_eq!(check(&ask, "bash"), "ask");
        ask.allow_always("bash").unwrap();
        assert_eq!(
            (check(&ask, "bash"), check(&ask, "edit_file")),
            ("run", "ask")
        );
        ask.plan = Plan::On;
        assert_eq!(
            (check(&ask, "bash"), check(&ask, "grep")),
            ("refuse", "run")
        );
        let mut yes = Consent::new(Mode::AllowAll);
        assert_eq!(check(&yes, "agent"), "run");
        yes.plan = Plan::On;
        assert_eq!(check(&yes, "write_file"), "refuse");
        let read_only = Consent::new(Mode::ReadOnly);
        assert_eq!(
            (check(&read_only, "bash"), check(&read_only, "glob")),
            ("refuse", "run")
        );
        let sub = Consent::new(Mode::Ask).for_sub_agent();
        assert_eq!(check(&sub, "bash"), "refuse");
    }

    #[test]
    fn always_survives_a_restart() {
        let dir = std::env::temp_dir().join(format!("corecoder-consent-{}", std::process::id()));
        let file = dir.join("nested").join("permissions.json");
        let (mut first, warning) = Consent::with_file(Mode::Ask, file.clone());
        assert_eq!(warning, None);
        first.allow_always("edit_file").unwrap();
        let (second, _) = Consent::with_file(Mode::Ask, file.clone());
        assert_eq!(check(&second, "edit_file"), "run");
        std::fs::write(&file, "not json").unwrap();
        let (third, warning) = Consent::with_file(Mode::Ask, file);
        assert!(warning.is_some_and(|w| w.contains("permissions.json")));
        assert_eq!(check(&third, "edit_file"), "ask");
        let _ = std::fs::remove_dir_all(dir);
    }
}
