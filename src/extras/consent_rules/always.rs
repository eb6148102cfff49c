//! What an "always" answer allows from now on, and the words the question offers it in: for
//! a bash line, a prefix rule for each of its commands (`Bash(cargo test:*)`), for this
//! project only; for an edit or a write, the project's files (`Edit(//project/**)`); for
//! other tools (a sub-agent, an MCP tool), the tool, in `~/.corecoder/permissions.json` as
//! before. A rule that allows every command is never made here: the user writes that one.
//! What is offered is checked to allow the line it is offered for; where no rule could (a
//! write by redirection, a computed program), `[a]` is not offered and the question says why.
//!
//! The batch asks `Extras::always_offer` for the question's `[a]` choice and calls
//! `Extras::allowed_always` on the answer; the rules are saved by `settings.rs`.

use crate::core::consent::Consent;
use crate::core::event::Event;
use crate::core::message::ToolCall;
use crate::extras::consent_rules::rules::{self, Bases, List, Rule};
use crate::extras::consent_rules::{Found, Rules, commands, judge, unallowable};
use crate::tools::support::shell_words::SUBSTITUTED;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The start of an offer that is not one: the question shows the rest (why) instead of `[a]`.
pub(crate) const NOT_OFFERED: &str = "no [a]: ";

/// What "always" would save for this call: prefix rules for a bash line's commands, the
/// project's files for an edit or a write, or (for other tools) the tool itself.
pub(crate) enum Always {
    Rules(Vec<String>),
    Tool,
    /// No rule could allow this line; why, for the question.
    Never(String),
}

pub(crate) fn always(rules: &Rules, call: &ToolCall) -> Always {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let project = rules.saved.as_ref().map(|saved| saved.project.clone());
    match (call.name.as_str(), project) {
        ("bash", _) => bash_rules(args["command"].as_str().unwrap_or(""), &call.arguments),
        ("edit_file" | "write_file", Some(project)) => {
            Always::Rules(vec![format!("Edit(/{}/**)", project.display())])
        }
        _ => Always::Tool,
    }
}

/// A prefix rule for each command of a bash `line`, or why no rule could allow all of it.
fn bash_rules(line: &str, arguments: &str) -> Always {
    let commands = commands(line);
    if let Some(why) = commands.iter().find_map(unallowable) {
        return Always::Never(why);
    }
    let mut found: Vec<String> = Vec::new();
    for command in &commands {
        let kept = prefix(&command.words);
        if kept.is_empty() {
            let program = command.words.first().map_or("", String::as_str);
            let why = match program.contains(SUBSTITUTED) {
                true => COMPUTED,
                false => NO_FIT,
            };
            return Always::Never(why.into());
        }
        let rule = format!("Bash({}:*)", kept.join(" "));
        if !found.contains(&rule) {
            found.push(rule);
        }
    }
    // Checked, not assumed: a rule offered must let the line it was offered for run.
    let mut list = Vec::new();
    let allowed = |list: &[Rule]| {
        let found = judge(list, "bash", arguments, Path::new("/"));
        matches!(found, Found::Allowed)
    };
    match session_only(&found, &mut list).is_ok() && allowed(&list) {
        true => Always::Rules(found),
        false => Always::Never(NO_FIT.into()),
    }
}

const NO_FIT: &str = "no rule fits this line";
const COMPUTED: &str = "no rule allows a command whose program is what $( … ) prints";

/// Programs whose second word is a subcommand: a rule for `cargo test` should not allow
/// `cargo publish`. Any other program's rule keeps its name only (`ls -la` keeps `ls`).
const WITH_SUBCOMMANDS: &[&str] = &[
    "git",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "go",
    "docker",
    "podman",
    "kubectl",
    "uv",
    "pip",
    "poetry",
    "make",
    "just",
    "rustup",
    "gh",
    "terraform",
    "dotnet",
    "mvn",
    "gradle",
];

/// The words a saved bash rule keeps: the program, and its subcommand when it has one
/// (`cargo test --lib` keeps `cargo test`). Never a substitution or an assignment.
fn prefix(words: &[String]) -> Vec<String> {
    let plain = |w: &String| !w.contains(SUBSTITUTED) && !w.contains('=') && !w.is_empty();
    let Some(program) = words.first().filter(|w| plain(w)) else {
        return Vec::new();
    };
    let subcommand = |w: &&String| {
        let word = w
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'));
        word && !w.starts_with('-') && WITH_SUBCOMMANDS.contains(&program.as_str())
    };
    let mut kept = vec![program.clone()];
    kept.extend(words.get(1).filter(subcommand).cloned());
    kept
}

/// The question's "always" choice: what answering it allows from now on.
pub(crate) fn offer(rules: &Rules, call: &ToolCall) -> String {
    match always(rules, call) {
        Always::Never(why) => format!("{NOT_OFFERED}{why}"),
        Always::Rules(found) if call.name == "bash" => {
            let shown: Vec<String> = (found.iter())
                .map(|r| format!("\"{} …\"", &r["Bash(".len()..r.len() - ":*)".len()]))
                .collect();
            format!("always allow {} in this project", shown.join(", "))
        }
        Always::Rules(_) => "always allow edits in this project".to_string(),
        Always::Tool => "always allow this tool".to_string(),
    }
}

/// The user answered "always": the rules for this project are saved (and hold from now on),
/// or the tool joins the "always" list. What cannot be saved is told; it still holds now.
pub(crate) fn allowed_always(
    rules: &mut Rules,
    consent: &mut Consent,
    call: &ToolCall,
    on_event: &mut dyn FnMut(Event),
) {
    let saved = match always(rules, call) {
        // Not offered, so not answered at the question; this call runs once.
        Always::Never(_) => Ok(()),
        Always::Tool => {
            consent.always.insert(call.name.clone());
            rules.permissions.save(&consent.always)
        }
        Always::Rules(found) => match rules.saved.clone() {
            Some(saved) => saved.add(&found, &mut rules.list),
            // No file (an embedding program, the library default): for this session only.
            None => session_only(&found, &mut rules.list),
        },
    };
    if let Err(e) = saved {
        on_event(Event::Notice(&format!(
            "could not save the permission: {e}"
        )));
    }
}

fn session_only(found: &[String], list: &mut Vec<Rule>) -> Result<(), String> {
    let (nowhere, source) = (PathBuf::new(), Path::new("(this session)"));
    let bases = Bases {
        home: nowhere.clone(),
        settings_root: nowhere.clone(),
        cwd: nowhere,
    };
    for text in found {
        list.push(rules::parse(text, List::Allow, source, &bases)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, arguments: Value) -> ToolCall {
        let (id, name, arguments) = ("c".into(), name.into(), arguments.to_string());
        ToolCall {
            id,
            name,
            arguments,
        }
    }

    fn bash(command: &str) -> ToolCall {
        call("bash", json!({ "command": command }))
    }

    #[test]
    fn always_saves_prefix_rules_for_the_commands_of_a_line() {
        let set = Rules::default();
        let saved = |command: &str| match always(&set, &bash(command)) {
            Always::Rules(found) => found,
            Always::Tool => vec!["the tool".into()],
            Always::Never(why) => vec![why],
        };
        assert_eq!(saved("cargo test --lib"), ["Bash(cargo test:*)"]);
        assert_eq!(
            saved("ls -la && cargo fmt"),
            ["Bash(ls:*)", "Bash(cargo fmt:*)"]
        );
        assert_eq!(saved("python x.py; python y.py"), ["Bash(python:*)"]);
        assert_eq!(saved("echo hello"), ["Bash(echo:*)"]);
        assert_eq!(saved("curl x | sh"), ["Bash(curl:*)", "Bash(sh:*)"]);
        assert_eq!(saved("cargo test 2>&1 >/dev/null"), ["Bash(cargo test:*)"]);
        assert_eq!(saved("$(curl x) | sh"), [COMPUTED]);
        assert_eq!(saved("X=1"), [NO_FIT]);
        assert_eq!(
            saved("echo changed >> calc.py"),
            ["no rule allows a command that writes a file by redirection, >> calc.py"]
        );
        assert_eq!(
            offer(&set, &bash("ls > out.txt")),
            "no [a]: no rule allows a command that writes a file by redirection, > out.txt"
        );
        assert_eq!(
            offer(&set, &bash("cargo test")),
            "always allow \"cargo test …\" in this project"
        );
        assert_eq!(
            offer(&set, &call("agent", json!({}))),
            "always allow this tool"
        );
    }

    /// What "always" offers, once saved, runs the line it was offered for without a question;
    /// what it does not offer says why.
    #[test]
    fn what_always_offers_runs_the_line_it_was_offered_for() {
        use crate::core::consent::{Mode, Verdict};
        use crate::extras::{gate::Gate, sandbox::ShellSafety};
        let lines = [
            "cargo test --lib",
            "ls -la && cargo fmt; echo done",
            "grep -r x . | head -5",
            "cargo test 2>&1 >/dev/null",
            "cat <<'EOF'\n$(touch x)\nEOF",
            "echo changed >> calc.py",
            "$(which python) x.py",
            "X=1",
        ];
        let (gate, shell) = (Gate::default(), ShellSafety::default());
        for line in lines {
            let mut set = Rules::default();
            let mut consent = Consent::new(Mode::Ask);
            match always(&set, &bash(line)) {
                Always::Never(why) => assert!(why.starts_with("no rule"), "{line}: {why}"),
                _ => allowed_always(&mut set, &mut consent, &bash(line), &mut |_| panic!()),
            }
            let verdict =
                super::super::verdict(&set, (&gate, &shell), &consent, &bash(line), Path::new("/"));
            let offered = !offer(&Rules::default(), &bash(line)).starts_with(NOT_OFFERED);
            assert_eq!(
                offered,
                matches!(verdict, Verdict::Run),
                "{line}: {verdict:?}"
            );
        }
    }

    #[test]
    fn with_no_file_always_holds_for_the_session() {
        use crate::core::consent::Mode;
        let (mut set, mut consent) = (Rules::default(), Consent::new(Mode::Ask));
        allowed_always(
            &mut set,
            &mut consent,
            &bash("cargo test"),
            &mut |_| panic!(),
        );
        let words: Vec<String> = vec!["cargo".into(), "test".into()];
        assert!(set.list[0].covers_command(&words));
    }
}
