//! The gate in front of consent: what a call's *arguments* decide before the mode and the
//! "always" list are asked (`core/consent.rs` judges the tool by its name only). Arguments the
//! output limit cut, and a tool the request did not offer, are refused (`cut_off`,
//! `not_offered`, asked by `batch::rule`); then the danger table
//! (`tools/support/danger.rs`): a catastrophic bash command is refused in every mode; a
//! destructive one is asked about every time, and under `--yes` runs only when the user opted
//! in to it by name. A command the table cannot read before it runs (`danger_unread.rs`: its
//! program is a variable, `eval` of a substitution's output, …) is asked about every time and
//! refused where no one can be asked, `--yes` included, with why. The batch asks it through
//! `Extras::verdict_for_call`, on the loop's thread. It asks no one and saves nothing.

use crate::core::consent::{Consent, Mode, Verdict};
use crate::core::event::Event;
use crate::core::message::{Outcome, ToolCall};
use crate::tools::support::danger::{self, Danger};
use crate::tools::support::text::echo;
use serde_json::Value;
use std::collections::BTreeSet;

/// Session-wide: `Extras::for_sub_agent` shares it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Gate {
    /// Destructive commands the user opted in to by name, for `--yes`
    /// (`CORECODER_ALLOW_DESTRUCTIVE`, `--allow-destructive`).
    destructive_allowed: BTreeSet<String>,
}

const CUT_CALL: &str = "the reply hit the output token limit before its arguments were complete";
const SMALLER: &str = "Send smaller calls (write a large file in several parts)";

impl Gate {
    /// A call whose arguments the output limit cut (`cut_off`: the reply ended at it) is not
    /// run: `Some` is what the model reads instead. (A cut call cannot end in its closing
    /// brace, so its arguments are no JSON object.)
    pub(crate) fn cut_off(
        &self,
        call: &ToolCall,
        cut_off: bool,
        on_event: &mut dyn FnMut(Event),
    ) -> Option<Outcome> {
        let object = serde_json::from_str::<serde_json::Map<String, Value>>(&call.arguments);
        if !cut_off || object.is_ok() {
            return None;
        }
        on_event(Event::Notice(&format!(
            "{}: not run, {CUT_CALL}",
            call.name
        )));
        Some(Outcome::text(format!("[not run: {CUT_CALL}. {SMALLER}]")))
    }

    /// A call to a tool this request did not offer (`agent` from a sub-agent, which would
    /// nest without end, or a name the model made up) is not run: `Some` is what it reads.
    pub(crate) fn not_offered(&self, call: &ToolCall, tools: &[Value]) -> Option<Outcome> {
        let offered = |tool: &Value| tool["function"]["name"] == call.name.as_str();
        let name = echo(&call.name);
        (!tools.iter().any(offered)).then(|| {
            Outcome::text(format!(
                "Error: tool '{name}' is not available here; call only the tools offered"
            ))
        })
    }

    /// Let `--yes` run the destructive commands named (see `danger::destructive_names`).
    pub(crate) fn allow_destructive(&mut self, names: &[String]) {
        self.destructive_allowed.extend(names.iter().cloned());
    }

    /// `consent.verdict(tool)`, unless the danger table says otherwise of a bash command: what
    /// it finds comes first, whatever the mode or the "always" list say.
    pub(crate) fn verdict(&self, consent: &Consent, tool: &str, arguments: &str) -> Verdict {
        let verdict = consent.verdict(tool);
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
            Some(Danger::Destructive(found)) => self.destructive(consent.mode, &found),
            Some(Danger::Unreadable(why)) => unreadable(consent.mode, &why),
        }
    }

    /// Asked about in an interactive session; with `--yes` (interactive too: it asks nothing)
    /// run only when every name found was opted in to.
    fn destructive(&self, mode: Mode, found: &[(&str, &str)]) -> Verdict {
        let why: Vec<String> = (found.iter())
            .map(|(name, reason)| format!("{reason} [{name}]"))
            .collect();
        let why = why.join("; ");
        let missing: Vec<&str> = (found.iter())
            .map(|(name, _)| *name)
            .filter(|name| !self.destructive_allowed.contains(*name))
            .collect();
        match mode {
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
}

/// No name opts in: what would be allowed is not known.
fn unreadable(mode: Mode, why: &str) -> Verdict {
    match mode {
        Mode::Ask => Verdict::AskEachTime(format!("cannot be read before it runs: {why}")),
        _ => Verdict::Refuse(format!(
            "Refused: this command cannot be read before it runs ({why}), so it does not run \
             without the user's say. Write the command out in full (no program in a variable, \
             no eval of what another command prints), or say what you would run so the user \
             can decide."
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_not_offered_is_refused_and_one_offered_is_not() {
        let tools = [json!({"type": "function", "function": {"name": "read_file"}})];
        let call = |name: &str| ToolCall {
            name: name.into(),
            ..ToolCall::default()
        };
        let gate = Gate::default();
        assert!(gate.not_offered(&call("read_file"), &tools).is_none());
        let refused = gate.not_offered(&call("agent"), &tools).expect("refused");
        assert!(
            refused
                .text
                .starts_with("Error: tool 'agent' is not available here")
        );
        let long = gate
            .not_offered(&call(&"x".repeat(5000)), &tools)
            .expect("refused");
        assert!(
            long.text.len() < 400,
            "the name is echoed cut: {}",
            long.text
        );
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
        let mut gate = Gate::default();
        let call = |gate: &Gate, consent: &Consent, command: &str| {
            let arguments = json!({ "command": command }).to_string();
            name(gate.verdict(consent, "bash", &arguments))
        };
        let mut ask = Consent::new(Mode::Ask);
        ask.always.insert("bash".to_string());
        assert_eq!(call(&gate, &ask, "ls"), "run");
        assert_eq!(call(&gate, &ask, "git reset --hard"), "ask each time");
        assert_eq!(call(&gate, &ask, "rm -rf ~"), "refuse");
        let yes = Consent::new(Mode::AllowAll);
        assert_eq!(call(&gate, &yes, "git reset --hard"), "refuse");
        assert_eq!(call(&gate, &yes, "rm -rf /"), "refuse");
        gate.allow_destructive(&["git-reset-hard".to_string()]);
        assert_eq!(call(&gate, &yes, "git reset --hard"), "run");
        assert_eq!(
            call(&gate, &yes, "git reset --hard; git clean -fd"),
            "refuse"
        );
        assert_eq!(call(&gate, &yes, "rm -rf /"), "refuse");
        // A sub-agent gets a copy of the session's extras, the gate with them.
        let (sub, sub_gate) = (crate::tools::agent::sub_agent_consent(&yes), gate.clone());
        assert_eq!(call(&sub_gate, &sub, "git reset --hard"), "run");
        assert_eq!(call(&sub_gate, &sub, "rm -rf /"), "refuse");
        let read_only = Consent::new(Mode::ReadOnly);
        assert_eq!(call(&gate, &read_only, "git reset --hard"), "refuse");
        // Too dynamic to read: asked about even when bash is "always", refused under --yes.
        assert_eq!(call(&gate, &ask, "$CMD ~"), "ask each time");
        assert_eq!(call(&gate, &yes, "$CMD ~"), "refuse");
        let Verdict::Refuse(why) = gate.verdict(&yes, "bash", r#"{"command":"eval \"$X\""}"#)
        else {
            panic!("eval of an unknown variable ran");
        };
        assert!(
            why.contains("cannot be read before it runs") && why.contains("$X"),
            "{why}"
        );
    }
}
