//! Consent: may this tool call run now, must the user be asked, or is it refused?
//!
//! The batch asks for every call, on the loop's thread, through `Extras::verdict_for_call`:
//! what the arguments decide comes first there (the danger table, `extras/gate.rs`), then
//! `Consent::verdict` here, by the tool's name; only an `Ask` or `AskEachTime` reaches the user.
//! Pure logic (`extras/permissions.rs` saves the "always" list). Below it, the loop guard: the
//! third identical call in a row is not run, the fifth ends the run. The loop holds it and asks
//! it about each call before the batch (`batch::rule`); early start asks a copy while streaming.

use crate::core::message::{Outcome, ToolCall};
use serde_json::Value;
use std::collections::BTreeSet;

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
pub(crate) enum Verdict {
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
    pub(crate) mode: Mode,
    pub plan: Plan,
    /// Tools the user allowed "always" (`extras/permissions.rs` keeps them across sessions).
    pub(crate) always: BTreeSet<String>,
}

impl Consent {
    pub fn new(mode: Mode) -> Consent {
        Consent {
            mode,
            plan: Plan::Off,
            always: BTreeSet::new(),
        }
    }

    /// The rules, in order: read-only tools always run; plan mode refuses the rest; then
    /// `--yes`, then "always", then the mode decides.
    pub(crate) fn verdict(&self, tool: &str) -> Verdict {
        if !needs_consent(tool) {
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

    /// The text the model reads when the user says no.
    pub(crate) fn denial(tool: &str) -> String {
        format!("Denied: the user did not allow this {tool} call. Ask them, or try another way.")
    }
}

/// Mutating tools need consent, and so does every MCP tool (we cannot know what it does);
/// read-only ones always run. (An unknown name is not run at all: `dispatch::run` answers it.)
pub(crate) fn needs_consent(name: &str) -> bool {
    matches!(name, "bash" | "write_file" | "edit_file" | "agent") || name.starts_with("mcp__")
}

// ---- The loop guard ----

const WARN_AT: u32 = 3;
const STOP_AT: u32 = 5;

#[derive(Debug, Default, Clone)]
pub(crate) struct LoopGuard {
    /// The last call seen (tool name, arguments in canonical form) and how often in a row.
    last: Option<(String, String)>,
    streak: u32,
}

impl LoopGuard {
    /// `Ok(None)`: not a repeat worth stopping, the call goes on to consent; `Ok(Some)`: not
    /// run, the outcome is what the model reads instead; `Err`: the run ends here.
    pub(crate) fn judge(&mut self, call: &ToolCall) -> Result<Option<Outcome>, String> {
        let (name, arguments) = (&call.name, &call.arguments);
        // Parsed and printed again, so `{"a":1, "b":2}` and `{"b":2,"a":1}` count as one call.
        let arguments = serde_json::from_str::<Value>(arguments)
            .map_or_else(|_| arguments.to_string(), |value| value.to_string());
        let this = (name.to_string(), arguments);
        match self.last.as_ref() == Some(&this) {
            true => self.streak += 1,
            false => (self.last, self.streak) = (Some(this), 1),
        }
        match self.streak {
            n if n >= STOP_AT => Err(format!(
                "the model called {name} with the same arguments {n} times in a row"
            )),
            n if n >= WARN_AT => Ok(Some(Outcome::text(format!(
                "Not run: this is the same {name} call, with the same arguments, {n} times in a \
                 row, and its result will not change. Use what you already have, or try a \
                 different approach. (At {STOP_AT} in a row the run is stopped.)"
            )))),
            _ => Ok(None),
        }
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
    fn the_rules_in_order() {
        let mut ask = Consent::new(Mode::Ask);
        assert_eq!(check(&ask, "read_file"), "run");
        assert_eq!(check(&ask, "bash"), "ask");
        ask.always.insert("bash".to_string());
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
        let sub = crate::tools::agent::sub_agent_consent(&Consent::new(Mode::Ask));
        assert_eq!(check(&sub, "bash"), "refuse");
    }

    fn repeat(guard: &mut LoopGuard, name: &str, arguments: &str) -> &'static str {
        let call = ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: arguments.into(),
        };
        match guard.judge(&call) {
            Ok(None) => "run",
            Ok(Some(_)) => "refuse",
            Err(_) => "stop",
        }
    }

    #[test]
    fn third_is_refused_fifth_stops_and_a_change_resets() {
        let mut guard = LoopGuard::default();
        let seen: Vec<&str> = (0..5)
            .map(|_| repeat(&mut guard, "grep", r#"{"pattern":"x"}"#))
            .collect();
        assert_eq!(seen, ["run", "run", "refuse", "refuse", "stop"]);
        let mut guard = LoopGuard::default();
        repeat(&mut guard, "grep", r#"{"a":1,"b":2}"#);
        assert_eq!(repeat(&mut guard, "grep", r#"{"b": 2, "a": 1}"#), "run");
        assert_eq!(repeat(&mut guard, "grep", r#"{"b":2,"a":1}"#), "refuse");
        assert_eq!(repeat(&mut guard, "glob", r#"{"b":2,"a":1}"#), "run");
        assert_eq!(repeat(&mut guard, "grep", r#"{"b":2,"a":1}"#), "run");
    }
}
