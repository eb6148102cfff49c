//! Consent with the permission rules of the settings files: deny beats ask beats allow, over
//! what `core/consent.rs` decides from the mode, plan mode and the "always" list, and the
//! danger gate (`gate.rs`) from a bash command; and what an "always" answer saves.
//!
//! The batch asks `Extras::verdict_for_call` (which calls `verdict`) for every call, and
//! `Extras::allowed_always` when the user answers "always"; `grep` and `glob` ask `hides`
//! about each file they would return. A bash line is read into its simple commands
//! (`shell_words`): a deny or ask rule matching any of them counts (also past `sudo`,
//! `env`, `timeout`, and inside `bash -c` and `eval`), and an allow needs every one allowed,
//! none writing a file by redirection. The rules themselves are `rules.rs`, the files
//! `settings.rs`.

use crate::core::consent::{Consent, Mode, Plan, Verdict, needs_consent};
use crate::core::event::Event;
use crate::core::message::ToolCall;
use crate::extras::gate::Gate;
use crate::extras::permissions::Permissions;
use crate::extras::rules::{List, Rule, normalize};
use crate::extras::settings;
use crate::tools::support::danger_words::{dash_c_script, invocation};
use crate::tools::support::files::resolve;
use crate::tools::support::shell_words::{SUBSTITUTED, SimpleCommand, split};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Scripts inside scripts (`bash -c "bash -c …"`) are read this deep, as the danger gate does.
const MAX_DEPTH: usize = 8;

/// The rules in force for this session, and where "always" answers are saved.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// Every rule of every settings file read, in file order.
    pub list: Vec<Rule>,
    /// Where "always" answers for this project go; `None` keeps them for this session only.
    pub saved: Option<settings::Saved>,
    /// The tools allowed "always" across projects (`~/.corecoder/permissions.json`).
    pub permissions: Permissions,
}

/// What the rules say of one call.
enum Found<'a> {
    Rule(&'a Rule),
    Allowed,
    Nothing,
}

/// Consent's verdict on `call`, with the rules: a deny refuses in every mode, read-only tools
/// and `--yes` included; an ask asks (where no one can be asked, it refuses); an allow runs
/// what consent would have asked about, or refused only for want of someone to ask. Plan mode
/// and the danger gate keep their say over an allow or an ask.
pub fn verdict(
    rules: &Rules,
    gate: &Gate,
    consent: &Consent,
    call: &ToolCall,
    cwd: &Path,
) -> Verdict {
    let (tool, arguments) = (call.name.as_str(), call.arguments.as_str());
    let found = judge(&rules.list, tool, arguments, cwd);
    let base = gate.verdict(consent, tool, arguments);
    let asked = !needs_consent(tool) || consent.plan == Plan::Off;
    match found {
        Found::Rule(rule) if rule.list == List::Deny => Verdict::Refuse(format!(
            "Refused: the user's permission rule \"{}\" (deny, in {}) forbids this {tool} call. \
             Do not try to reach the same thing another way; ask the user if you need it.",
            rule.text,
            rule.source.display()
        )),
        Found::Rule(_) if asked => match base {
            Verdict::Run | Verdict::Ask if consent.mode != Mode::ReadOnly => Verdict::Ask,
            Verdict::Run | Verdict::Ask => Verdict::Refuse(format!(
                "Refused: a permission rule says to ask before this {tool} call, and no one \
                 can be asked here. Say what you would do so the user can decide."
            )),
            other => other,
        },
        Found::Allowed if consent.plan == Plan::Off => match (base, consent.mode) {
            (Verdict::Ask, _) => Verdict::Run,
            // Allowed, so judged as `--yes` judges: a destructive command still needs opting in.
            (Verdict::Refuse(_), Mode::ReadOnly) => {
                let mut yes = consent.clone();
                yes.mode = Mode::AllowAll;
                gate.verdict(&yes, tool, arguments)
            }
            (other, _) => other,
        },
        _ => base,
    }
}

/// Whether `grep` or `glob` must leave `path` out of what it returns: a deny rule covers
/// reading it.
pub fn hides(rules: &Rules, tool: &str, path: &Path) -> bool {
    let denied = |rule: &&Rule| rule.list == List::Deny && rule.covers_tool(tool);
    let mut deny = rules.list.iter().filter(denied).peekable();
    if deny.peek().is_none() {
        return false;
    }
    let places = places(path);
    deny.any(|rule| places.iter().any(|place| rule.covers_path(place)))
}

/// Whether a deny or ask rule speaks of `call`: then it may not start early (`early.rs`).
pub fn settled_by_rule(rules: &Rules, call: &ToolCall, cwd: &Path) -> bool {
    matches!(
        judge(&rules.list, &call.name, &call.arguments, cwd),
        Found::Rule(_)
    )
}

fn judge<'a>(rules: &'a [Rule], tool: &str, arguments: &str, cwd: &Path) -> Found<'a> {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let mine: Vec<&Rule> = rules.iter().filter(|r| r.covers_tool(tool)).collect();
    let in_list = |list: List| mine.iter().copied().filter(move |r| r.list == list);
    let file = match tool {
        "read_file" | "edit_file" | "write_file" => args["file_path"].as_str(),
        "grep" | "glob" => Some(args["path"].as_str().unwrap_or(".")),
        _ => None,
    };
    if tool == "bash" {
        let line = args["command"].as_str().unwrap_or("");
        let mut forms = Vec::new();
        read_forms(line, 0, &mut forms);
        for list in [List::Deny, List::Ask] {
            let hit = |r: &&Rule| r.is_any() || forms.iter().any(|f| r.covers_command(f));
            if let Some(rule) = in_list(list).find(hit) {
                return Found::Rule(rule);
            }
        }
        let commands: Vec<SimpleCommand> = commands(line);
        let allowed = |c: &SimpleCommand| {
            writes_no_file(c) && in_list(List::Allow).any(|r| r.covers_command(&c.words))
        };
        let any_allowed = in_list(List::Allow).any(|r| r.is_any());
        return match any_allowed || (!commands.is_empty() && commands.iter().all(allowed)) {
            true => Found::Allowed,
            false => Found::Nothing,
        };
    }
    let places = file
        .map(|file| places(&resolve(cwd, file)))
        .unwrap_or_default();
    for list in [List::Deny, List::Ask] {
        let hit = |r: &&Rule| r.is_any() || places.iter().any(|p| r.covers_path(p));
        if let Some(rule) = in_list(list).find(hit) {
            return Found::Rule(rule);
        }
    }
    // An allow must hold for where the file really is (the last place: past symlinks).
    let real = places.last();
    match in_list(List::Allow).any(|r| r.is_any() || real.is_some_and(|p| r.covers_path(p))) {
        true => Found::Allowed,
        false => Found::Nothing,
    }
}

/// The simple commands of a line that run something (a line of only assignments does not).
fn commands(line: &str) -> Vec<SimpleCommand> {
    (split(line).into_iter())
        .filter(|c| !c.words.is_empty())
        .collect()
}

/// Every way a deny or ask rule may see the commands of `line`: each command's words, the
/// program it really runs past wrappers (`sudo rm` is `rm`, `/bin/rm` too), and the commands
/// of scripts handed to a shell or `eval`.
fn read_forms(line: &str, depth: usize, forms: &mut Vec<Vec<String>>) {
    for command in commands(line) {
        let run = invocation(&command.words);
        if !run.name.is_empty() {
            let mut real = vec![run.name.clone()];
            real.extend(run.args.iter().cloned());
            forms.push(real);
        }
        forms.push(command.words);
        let script: Option<String> = match run.name.as_str() {
            "bash" | "sh" | "zsh" | "dash" | "ksh" => dash_c_script(&run.args).cloned(),
            "eval" => Some(run.args.join(" ")),
            _ => None,
        };
        if let Some(script) = script.filter(|_| depth < MAX_DEPTH) {
            read_forms(&script, depth + 1, forms);
        }
    }
}

/// Output redirected to a file is a write no command rule allows (`echo x > ~/.bashrc` is not
/// `echo`); `2>&1` and `> /dev/null` are not writes.
fn writes_no_file(command: &SimpleCommand) -> bool {
    command.redirects.iter().all(|r| {
        let duplicate = r.op.ends_with('&') && r.target.chars().all(|c| c.is_ascii_digit());
        !r.op.contains('>') || duplicate || r.target == "/dev/null" || r.target == "-"
    })
}

/// Where a path is, as rules see it: written out (`..` removed), then past symlinks when it
/// (or, for a new file, its folder) exists. Rules are matched against both.
fn places(path: &Path) -> Vec<String> {
    let written = normalize(&path.to_string_lossy());
    let real = path.canonicalize().ok().or_else(|| {
        let parent = Path::new(&written).parent()?.canonicalize().ok()?;
        Some(parent.join(Path::new(&written).file_name()?))
    });
    let mut places = vec![written];
    places.extend(real.map(|real| normalize(&real.to_string_lossy())));
    places
}

/// What "always" would save for this call: prefix rules for a bash line's commands, the
/// project's files for an edit or a write, or (for other tools) the tool itself.
pub enum Always {
    Rules(Vec<String>),
    Tool,
}

pub fn always(rules: &Rules, call: &ToolCall) -> Always {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let project = rules.saved.as_ref().map(|saved| saved.project.clone());
    match (call.name.as_str(), project) {
        ("bash", _) => {
            let mut found: Vec<String> = Vec::new();
            for command in commands(args["command"].as_str().unwrap_or("")) {
                let kept = prefix(&command.words);
                let rule = format!("Bash({}:*)", kept.join(" "));
                if !kept.is_empty() && !found.contains(&rule) {
                    found.push(rule);
                }
            }
            Always::Rules(found)
        }
        ("edit_file" | "write_file", Some(project)) => {
            Always::Rules(vec![format!("Edit(/{}/**)", project.display())])
        }
        _ => Always::Tool,
    }
}

/// The words a saved bash rule keeps: the program, and its subcommand when it has one
/// (`cargo test --lib` keeps `cargo test`, `ls -la` keeps `ls`). Substitutions never.
fn prefix(words: &[String]) -> Vec<String> {
    let plain = |w: &String| !w.contains(SUBSTITUTED) && !w.contains('=');
    let subcommand = |w: &&String| {
        (w.chars()).all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':')
            && !w.starts_with('-')
    };
    let mut kept: Vec<String> = words.iter().take(1).filter(|w| plain(w)).cloned().collect();
    kept.extend(
        words
            .get(1)
            .filter(subcommand)
            .cloned()
            .filter(|_| !kept.is_empty()),
    );
    kept
}

/// The question's "always" choice: what answering it allows from now on.
pub fn offer(rules: &Rules, call: &ToolCall) -> String {
    match always(rules, call) {
        Always::Rules(found) if found.is_empty() => "allow this time only (no rule fits)".into(),
        Always::Rules(found) if call.name == "bash" => {
            let shown: Vec<String> = (found.iter())
                .map(|r| format!("\"{} …\"", &r["Bash(".len()..r.len() - ":*)".len()]))
                .collect();
            format!("always allow {} in this project", shown.join(", "))
        }
        Always::Rules(_) => match &rules.saved {
            Some(saved) => format!("always allow edits in {}", saved.project.display()),
            None => "always allow edits in this project".to_string(),
        },
        Always::Tool => "always allow this tool".to_string(),
    }
}

/// The user answered "always": the rules for this project are saved (and hold from now on),
/// or the tool joins the "always" list. What cannot be saved is told; it still holds now.
pub fn allowed_always(
    rules: &mut Rules,
    consent: &mut Consent,
    call: &ToolCall,
    on_event: &mut dyn FnMut(Event),
) {
    let saved = match always(rules, call) {
        Always::Tool => {
            consent.always.insert(call.name.clone());
            rules.permissions.save(&consent.always)
        }
        Always::Rules(found) => match rules.saved.clone() {
            Some(saved) => saved.add(&found, &mut rules.list),
            None => Err("no file to keep project rules in".to_string()),
        },
    };
    if let Err(e) = saved {
        on_event(Event::Notice(&format!(
            "could not save the permission: {e}"
        )));
    }
}

/// The path a project rule is saved under (shown by `/permissions`).
pub fn project_of(rules: &Rules) -> Option<PathBuf> {
    rules.saved.as_ref().map(|saved| saved.project.clone())
}
