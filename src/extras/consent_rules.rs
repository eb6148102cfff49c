//! Consent with the permission rules of the settings files: deny beats ask beats allow, over
//! what `core/consent.rs` decides from the mode, plan mode and the "always" list, and the
//! danger gate (`gate.rs`) from a bash command. What "always" saves is `always.rs`.
//!
//! The batch asks `Extras::verdict_for_call` (which calls `verdict`) for every call, early
//! start `names_tool` before it starts one; `grep` and `glob` ask `hides` about each file
//! they would return. A bash line is read into its simple commands (`shell_words`, which
//! gives the commands inside `$( … )`, backticks, here-strings and unquoted here-document
//! bodies too): a deny or ask rule matching any of them counts (also past `sudo`, `env`,
//! `xargs`, and inside `bash -c`, `sh <<EOF`, `eval`, `watch`, `find -exec`, and every program
//! the danger gate reads the line to run, `danger::programs`: `X=rm; $X`), and an allow
//! needs every one allowed, none writing a file by redirection, no body left unread. A path
//! rule without a wildcard also covers the same file under another name (a hard link: same
//! device and inode). A read outside the session's roots is judged by `reads.rs` first. The
//! rules themselves are `rules.rs`, the
//! files `settings.rs`.

pub(crate) mod always;
pub(crate) mod rules;
pub(crate) mod settings;

use crate::core::consent::{Consent, Mode, Plan, Verdict, needs_consent};
use crate::core::message::ToolCall;
use crate::extras::gate::Gate;
use crate::extras::permissions::Permissions;
use crate::extras::reads;
use crate::extras::sandbox::ShellSafety;
use crate::tools::support::danger;
use crate::tools::support::danger_words::{
    dash_c_script, find_exec_commands, invocation, watch_script,
};
use crate::tools::support::files::resolve;
use crate::tools::support::shell_words::{Body, SimpleCommand, split};
use rules::{List, Rule, normalize};
use serde_json::Value;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Scripts inside scripts (`bash -c "bash -c …"`) are read this deep, as the danger gate does.
const MAX_DEPTH: usize = 8;

/// The rules in force for this session, and where "always" answers are saved.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rules {
    /// Every rule of every settings file read, in file order.
    pub(crate) list: Vec<Rule>,
    /// Where "always" answers for this project go; `None` keeps them for this session only.
    pub(crate) saved: Option<settings::Saved>,
    /// The tools allowed "always" across projects (`~/.corecoder/permissions.json`).
    pub(crate) permissions: Permissions,
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
pub(crate) fn verdict(
    rules: &Rules,
    (gate, shell): (&Gate, &ShellSafety),
    consent: &Consent,
    call: &ToolCall,
    cwd: &Path,
) -> Verdict {
    let (tool, arguments) = (call.name.as_str(), call.arguments.as_str());
    let found = judge(&rules.list, tool, arguments, cwd);
    // A read outside the session's roots is asked about or refused (`reads.rs`).
    let outside = reads::outside(shell, tool, arguments, cwd);
    let base = match &outside {
        Some(outside) => outside.verdict(consent),
        None => gate.verdict(consent, tool, arguments),
    };
    let asked = !needs_consent(tool) || consent.plan == Plan::Off;
    match found {
        Found::Rule(rule) if rule.list == List::Deny => Verdict::Refuse(format!(
            "Refused: the user's permission rule \"{}\" (deny, in {}) forbids this {tool} call. \
             Do not try to reach the same thing another way; ask the user if you need it.",
            rule.text,
            rule.source.display()
        )),
        // Asked every time: "always" at the question allows that call only.
        Found::Rule(rule) if asked => match (base, consent.mode) {
            (_, Mode::ReadOnly) => Verdict::Refuse(format!(
                "Refused: a permission rule says to ask before this {tool} call, and no one \
                 can be asked here. Say what you would do so the user can decide."
            )),
            (verdict @ (Verdict::Refuse(_) | Verdict::AskEachTime(_)), _) => verdict,
            _ => Verdict::AskEachTime(format!("a permission rule asks: {}", rule.text)),
        },
        // An allow that names where an outside read really lands lets it through.
        Found::Allowed if outside.is_some() => match outside.filter(|o| !allows(rules, o)) {
            None => Verdict::Run,
            Some(_) => base,
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
pub(crate) fn hides(rules: &Rules, tool: &str, path: &Path) -> bool {
    let denied = |rule: &&Rule| rule.list == List::Deny && rule.covers_tool(tool);
    let mut deny = rules.list.iter().filter(denied).peekable();
    if deny.peek().is_none() {
        return false;
    }
    let places = places(path);
    // Only a file with more than one name can be a hard link to a denied one.
    let linked = path.symlink_metadata().ok().filter(|meta| meta.nlink() > 1);
    deny.any(|rule| {
        places.iter().any(|place| rule.covers_path(place)) || same_file(rule, linked.as_ref())
    })
}

/// Whether the file `meta` describes is the very file `rule` names, by device and inode: a
/// hard link to a denied `.env` has another name, and is the same file.
fn same_file(rule: &Rule, meta: Option<&Metadata>) -> bool {
    let (Some(named), Some(meta)) = (rule.names_file(), meta) else {
        return false;
    };
    let named = named.metadata();
    named.is_ok_and(|named| named.dev() == meta.dev() && named.ino() == meta.ino())
}

/// Whether an allow rule covers the place an outside read lands on.
fn allows(rules: &Rules, outside: &reads::Outside) -> bool {
    let place = normalize(&outside.place.to_string_lossy());
    (rules.list.iter())
        .filter(|rule| rule.list == List::Allow && rule.covers_tool(&outside.tool))
        .any(|rule| rule.covers_path(&place))
}

/// Whether a deny or ask rule names `tool`: then its calls do not start early (`early.rs`),
/// before the batch has judged their arguments.
pub(crate) fn names_tool(rules: &Rules, tool: &str) -> bool {
    (rules.list.iter()).any(|rule| rule.list != List::Allow && rule.covers_tool(tool))
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
        // What the danger gate reads the line to run (`X=rm; $X`, `{rm,x}`, a body fed to a
        // shell, …), and each command's own words; read only when a deny or ask may match.
        let mut forms = Vec::new();
        if mine.iter().any(|r| r.list != List::Allow) {
            forms = danger::programs(line);
            read_forms(line, 0, &mut forms);
        }
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
    let meta = file.and_then(|file| resolve(cwd, file).metadata().ok());
    for list in [List::Deny, List::Ask] {
        let hit = |r: &&Rule| {
            r.is_any() || places.iter().any(|p| r.covers_path(p)) || same_file(r, meta.as_ref())
        };
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
pub(crate) fn commands(line: &str) -> Vec<SimpleCommand> {
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
        let shell = matches!(run.name.as_str(), "bash" | "sh" | "zsh" | "dash" | "ksh");
        let mut scripts: Vec<String> = match run.name.as_str() {
            _ if shell => dash_c_script(&run.args).cloned().into_iter().collect(),
            "eval" => vec![run.args.join(" ")],
            "alias" => (run.args.iter())
                .filter_map(|a| a.split_once('=').map(|(_, v)| v.to_string()))
                .collect(),
            "watch" => vec![watch_script(&run.args)],
            "find" => find_exec_commands(&run.args),
            _ => Vec::new(),
        };
        // `sh <<EOF … EOF` runs the here-document's text.
        let bodies = command.redirects.iter().map(|r| r.body.clone());
        scripts.extend(bodies.filter(|body| shell && !body.is_empty()));
        if !run.name.is_empty() {
            forms.push([vec![run.name], run.args].concat());
        }
        forms.push(command.words);
        for script in scripts.iter().filter(|_| depth < MAX_DEPTH) {
            read_forms(script, depth + 1, forms);
        }
    }
}

/// Output redirected to a file is a write no command rule allows (`echo x > ~/.bashrc` is not
/// `echo`); `2>&1` and `> /dev/null` are not writes. A here-document too deep to read may run
/// anything: no rule allows it either.
fn writes_no_file(command: &SimpleCommand) -> bool {
    unallowable(command).is_none()
}

/// Why no allow rule can cover `command`, when none can (the "always" question says it).
pub(crate) fn unallowable(command: &SimpleCommand) -> Option<String> {
    command.redirects.iter().find_map(|r| {
        let duplicate = r.op.ends_with('&') && r.target.chars().all(|c| c.is_ascii_digit());
        let write = r.op.contains('>') && !duplicate && r.target != "/dev/null" && r.target != "-";
        match (write, r.reading) {
            (true, _) => Some(format!(
                "no rule allows a command that writes a file by redirection, {} {}",
                r.op, r.target
            )),
            (_, Body::Unread) => Some("no rule allows a here-document too deep to read".into()),
            _ => None,
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extras::consent_rules::rules::{Bases, parse};
    use serde_json::json;

    fn rules(lists: &[(List, &str)]) -> Rules {
        let bases = Bases {
            home: "/home/u".into(),
            settings_root: "/proj".into(),
            cwd: "/proj".into(),
        };
        let list = (lists.iter())
            .map(|(list, text)| parse(text, *list, Path::new("/s.json"), &bases).unwrap())
            .collect();
        Rules {
            list,
            ..Rules::default()
        }
    }

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: arguments.to_string(),
        }
    }

    fn bash(command: &str) -> ToolCall {
        call("bash", json!({ "command": command }))
    }

    /// The verdict's kind in lower case: `run`, `ask`, `refuse`.
    fn name(verdict: Verdict) -> String {
        let kind = format!("{verdict:?}");
        kind.split('(').next().unwrap_or_default().to_lowercase()
    }

    fn judged(rules: &Rules, consent: &Consent, call: &ToolCall) -> String {
        name(verdict(
            rules,
            (&Gate::default(), &ShellSafety::default()),
            consent,
            call,
            Path::new("/proj"),
        ))
    }

    #[test]
    fn deny_beats_ask_beats_allow_in_every_mode() {
        let set = rules(&[
            (List::Allow, "Bash(git:*)"),
            (List::Ask, "Bash(git push:*)"),
            (List::Deny, "Bash(git push --force:*)"),
        ]);
        let ask = Consent::new(Mode::Ask);
        assert_eq!(judged(&set, &ask, &bash("git status")), "run");
        assert_eq!(judged(&set, &ask, &bash("git push origin")), "askeachtime");
        assert_eq!(judged(&set, &ask, &bash("git push --force")), "refuse");
        assert_eq!(judged(&set, &ask, &bash("ls")), "ask");
        let yes = Consent::new(Mode::AllowAll);
        assert_eq!(judged(&set, &yes, &bash("ls")), "run");
        assert_eq!(judged(&set, &yes, &bash("git push origin")), "askeachtime");
        assert_eq!(judged(&set, &yes, &bash("git push --force")), "refuse");
        let read_only = Consent::new(Mode::ReadOnly);
        assert_eq!(judged(&set, &read_only, &bash("git status")), "run");
        assert_eq!(judged(&set, &read_only, &bash("git push x")), "refuse");
        assert_eq!(judged(&set, &read_only, &bash("ls")), "refuse");
        let mut plan = Consent::new(Mode::AllowAll);
        plan.plan = Plan::On;
        assert_eq!(judged(&set, &plan, &bash("git status")), "refuse");
        let mut always = Consent::new(Mode::Ask);
        always.always.insert("bash".into());
        assert_eq!(judged(&set, &always, &bash("git push x")), "askeachtime");
    }

    #[test]
    fn the_danger_gate_keeps_its_say_over_an_allow() {
        let set = rules(&[(List::Allow, "Bash")]);
        let reset = bash("git reset --hard");
        let verdict_in = |mode| judged(&set, &Consent::new(mode), &reset);
        assert_eq!(verdict_in(Mode::Ask), "askeachtime");
        assert_eq!(verdict_in(Mode::ReadOnly), "refuse");
        assert_eq!(verdict_in(Mode::AllowAll), "refuse");
        assert_eq!(
            judged(&set, &Consent::new(Mode::AllowAll), &bash("rm -rf ~")),
            "refuse"
        );
        assert_eq!(
            judged(&set, &Consent::new(Mode::ReadOnly), &bash("ls")),
            "run"
        );
    }

    #[test]
    fn every_command_of_a_line_must_be_allowed_and_any_may_be_denied() {
        let set = rules(&[
            (List::Allow, "Bash(cargo test:*)"),
            (List::Deny, "Bash(rm:*)"),
        ]);
        let ask = Consent::new(Mode::Ask);
        assert_eq!(judged(&set, &ask, &bash("cargo test --lib")), "run");
        assert_eq!(judged(&set, &ask, &bash("cargo test && ls")), "ask");
        assert_eq!(judged(&set, &ask, &bash("cargo test $(ls)")), "ask");
        assert_eq!(judged(&set, &ask, &bash("cargo test > ~/.bashrc")), "ask");
        assert_eq!(
            judged(&set, &ask, &bash("cargo test 2>&1 >/dev/null")),
            "run"
        );
        for attack in [
            "cargo test && rm -rf x",
            "cargo test; (rm x)",
            "echo $(rm x)",
            "sudo rm x",
            "/bin/rm x",
            "\\rm x",
            "bash -c 'cargo test; rm x'",
            "eval 'rm x'",
            "timeout 5 rm x",
            "find . -exec rm {} ;",
            "echo x | xargs rm",
            "sh <<EOF\nrm x\nEOF",
            "watch rm x",
            "command rm x",
            "cat <<EOF\n$(rm x)\nEOF",
            "cat <<-EOF\n\t`rm x`\n\tEOF",
            "cat <<'A' <<B\nA\n${X:-$(rm x)}\nB",
            "xargs rm <<< x",
            "time -p rm x",
            "alias x='rm y'",
            "{rm,x}",
            "X=rm; $X x",
            "X=/bin/rm; \"$X\" x",
            "cat <<EOF | sh\nrm x\nEOF",
            "echo x | xargs -I{} rm {}",
            "$'\\x72m' x",
            "cat <<EOF\n$(case a in a) rm x;; esac)\nEOF",
        ] {
            let yes = Consent::new(Mode::AllowAll);
            assert_eq!(judged(&set, &yes, &bash(attack)), "refuse", "{attack}");
        }
    }

    #[test]
    fn an_allow_does_not_cover_what_a_here_document_runs() {
        let set = rules(&[(List::Allow, "Bash(git status:*)")]);
        let ask = Consent::new(Mode::Ask);
        for line in [
            "git status <<EOF\n$(touch x)\nEOF",
            "git status <<EOF\n`touch x`\nEOF",
            "git status <<< \"$(touch x)\"",
            "git status <<A <<B\nA\n$(touch x)\nB",
        ] {
            assert_eq!(judged(&set, &ask, &bash(line)), "ask", "{line}");
        }
        // Quoted, the body is data; unquoted with only a variable, nothing in it runs.
        assert_eq!(
            judged(&set, &ask, &bash("git status <<'EOF'\n$(touch x)\nEOF")),
            "run"
        );
        assert_eq!(
            judged(&set, &ask, &bash("git status <<EOF\n$HOME\nEOF")),
            "run"
        );
    }

    #[test]
    fn path_rules_for_read_edit_and_write() {
        let set = rules(&[
            (List::Deny, "Read(./.env)"),
            (List::Allow, "Edit(/src/**)"),
            (List::Deny, "Write(/src/generated/**)"),
        ]);
        let (ask, yes) = (Consent::new(Mode::Ask), Consent::new(Mode::AllowAll));
        let read = |path: &str| call("read_file", json!({ "file_path": path }));
        assert_eq!(judged(&set, &yes, &read(".env")), "refuse");
        assert_eq!(judged(&set, &yes, &read("src/../.env")), "refuse");
        assert_eq!(judged(&set, &yes, &read("/proj/deep/.env")), "refuse");
        assert_eq!(judged(&set, &yes, &read("README.md")), "run");
        let edit = |path: &str| call("edit_file", json!({ "file_path": path }));
        assert_eq!(judged(&set, &ask, &edit("src/a.rs")), "run");
        assert_eq!(judged(&set, &ask, &edit("src/../b.rs")), "ask");
        let write = |path: &str| call("write_file", json!({ "file_path": path }));
        assert_eq!(judged(&set, &ask, &write("src/new.rs")), "run");
        assert_eq!(judged(&set, &yes, &write("src/generated/x.rs")), "refuse");
        let grep = |path: &str| call("grep", json!({ "pattern": "x", "path": path }));
        assert_eq!(judged(&set, &yes, &grep(".env")), "refuse");
        assert_eq!(judged(&set, &yes, &grep(".")), "run");
        assert!(hides(&set, "grep", Path::new("/proj/.env")));
        assert!(hides(&set, "glob", Path::new("/proj/a/.env")));
        assert!(!hides(&set, "grep", Path::new("/proj/.envrc")));
        assert!(!hides(&rules(&[]), "grep", Path::new("/proj/.env")));
    }

    /// A hard link to a denied file is the same file under another name: refused too, and
    /// left out of grep and glob; a copy is another file.
    #[test]
    fn a_path_rule_holds_through_a_hard_link() {
        let dir = crate::tools::test_support::TempDir::new("rules-hard-link");
        let cwd = dir.0.canonicalize().unwrap();
        std::fs::write(cwd.join(".env"), "KEY=x").unwrap();
        std::fs::hard_link(cwd.join(".env"), cwd.join("notes.txt")).unwrap();
        std::fs::write(cwd.join("copy.txt"), "KEY=x").unwrap();
        let bases = Bases {
            home: "/home/u".into(),
            settings_root: cwd.clone(),
            cwd: cwd.clone(),
        };
        let rule = parse("Read(./.env)", List::Deny, Path::new("/s.json"), &bases).unwrap();
        assert_eq!(rule.names_file(), Some(cwd.join(".env").as_path()));
        let set = Rules {
            list: vec![rule],
            ..Rules::default()
        };
        let yes = Consent::new(Mode::AllowAll);
        let read = |path: &str| {
            let call = call("read_file", json!({ "file_path": path }));
            name(verdict(
                &set,
                (&Gate::default(), &ShellSafety::default()),
                &yes,
                &call,
                &cwd,
            ))
        };
        assert_eq!(read("notes.txt"), "refuse");
        assert_eq!(read("copy.txt"), "run");
        assert!(hides(&set, "grep", &cwd.join("notes.txt")));
        assert!(!hides(&set, "glob", &cwd.join("copy.txt")));
    }

    #[test]
    fn other_tools_by_name() {
        let set = rules(&[(List::Deny, "mcp__db__drop"), (List::Allow, "Task")]);
        let (ask, yes) = (Consent::new(Mode::Ask), Consent::new(Mode::AllowAll));
        assert_eq!(
            judged(&set, &yes, &call("mcp__db__drop", json!({}))),
            "refuse"
        );
        assert_eq!(judged(&set, &ask, &call("mcp__db__read", json!({}))), "ask");
        assert_eq!(
            judged(&set, &ask, &call("agent", json!({"task": "x"}))),
            "run"
        );
    }
}
