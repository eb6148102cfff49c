//! The danger gate's reading of one simple command: which program it really runs, past
//! `sudo`, `timeout 5`, `xargs`, `env -S`, `{`, `if`, `do`, `!` and `VAR=value`.
//!
//! `danger.rs` calls `invocation` for every command `shell_words` found (the rules then look
//! at the program and its arguments), `dash_c_script` for shells, and `follow` after each top-level one, to remember
//! what the next command's paths mean (a `cd /`, `D=/`). It does not judge anything, and each
//! step is linear in the number of words.

use super::danger_places::{Scope, expand_variables};

/// A program and its arguments, with every wrapper and keyword before it removed.
#[derive(Debug, Default, Clone)]
pub struct Invocation {
    /// The file name of the program (`/bin/rm` → `rm`); empty when there is none.
    pub name: String,
    pub args: Vec<String>,
    /// Run by `xargs`: more arguments come from its input.
    pub via_xargs: bool,
}

/// Words that run the rest of the command, with the options that take a value and how many
/// plain arguments come before the command (`timeout 5 rm …`, `chroot /mnt rm …`).
/// `busybox rm` and `xargs rm` are here too: the applet or command is the next word.
const WRAPPERS: &[(&str, &[&str], usize)] = &[
    (
        "sudo",
        &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-R"],
        0,
    ),
    ("doas", &["-u", "-C"], 0),
    ("run0", &["-u", "--user"], 0),
    ("pkexec", &["--user"], 0),
    ("env", &["-u", "-C", "--unset", "--chdir"], 0),
    ("command", &[], 0),
    ("builtin", &[], 0),
    ("exec", &["-a"], 0),
    ("nohup", &[], 0),
    ("time", &["-f", "-o"], 0),
    ("nice", &["-n"], 0),
    ("ionice", &["-c", "-n"], 0),
    ("timeout", &["-s", "-k", "--signal", "--kill-after"], 1),
    ("setsid", &[], 0),
    ("stdbuf", &["-i", "-o", "-e"], 0),
    ("unbuffer", &[], 0),
    ("watch", &["-n", "-d", "--interval"], 0),
    ("chroot", &["--userspec", "--groups"], 1),
    ("busybox", &[], 0),
    (
        "xargs",
        &["-I", "-n", "-P", "-L", "-d", "-s", "-a", "-E"],
        0,
    ),
    ("flock", &["-w", "-E", "--timeout"], 1),
    ("taskset", &[], 1),
    ("chrt", &[], 1),
    ("unshare", &[], 0),
    ("firejail", &[], 0),
    ("strace", &["-o", "-e", "-p"], 0),
];

/// Shell keywords that may stand before a command: `if rm …`, `do rm …`, `! rm …`, `{ rm …`.
const KEYWORDS: &[&str] = &[
    "!", "{", "}", "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "time",
];

/// The program `words` run and its arguments. A function definition, a `for`/`case` head
/// and a line of assignments run nothing (an empty name).
pub fn invocation(words: &[String]) -> Invocation {
    let mut words: Vec<String> = words.to_vec();
    let (mut at, mut via_xargs) = (0, false);
    loop {
        let Some(first) = words.get(at) else {
            return Invocation::default();
        };
        let is_assignment = first.contains('=') && !first.starts_with('=');
        if is_assignment || KEYWORDS.contains(&first.as_str()) {
            at += 1;
            continue;
        }
        // `function f` (or `function f()`) defines a function; its body may follow on the
        // same line (`function f { rm …; }`), so read on after the name.
        if first == "function" {
            at += 2;
            at += usize::from(words.get(at).is_some_and(|w| w == "()"));
            continue;
        }
        if matches!(first.as_str(), "for" | "case" | "select") {
            return Invocation::default();
        }
        let name = first.rsplit('/').next().unwrap_or(first).to_string();
        if name == "env" {
            split_env_s(&mut words, at + 1);
        }
        let Some((_, valued, positional)) = WRAPPERS.iter().find(|(w, _, _)| *w == name) else {
            let args = words.split_off(at + 1);
            return Invocation {
                name,
                args,
                via_xargs,
            };
        };
        via_xargs |= name == "xargs";
        at = skip_options(&words, at + 1, valued) + positional;
    }
}

/// The script after a shell's `-c` (also in `-lc`, `-ec`; a `--` after it is skipped).
pub fn dash_c_script(args: &[String]) -> Option<&String> {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        if !arg.starts_with(['-', '+']) {
            return None;
        }
        if matches!(arg.as_str(), "-o" | "+o" | "-O" | "+O") {
            at += 2;
            continue;
        }
        at += 1;
        if arg.starts_with('-') && !arg.starts_with("--") && arg.contains('c') {
            let script = args.get(at)?;
            return if script == "--" {
                args.get(at + 1)
            } else {
                Some(script)
            };
        }
    }
    None
}

/// `env -S 'rm -rf /'` splits its value into words: put them in its place.
fn split_env_s(words: &mut Vec<String>, from: usize) {
    let Some(s) = (from..words.len()).find(|&i| words[i] == "-S" || words[i] == "--split-string")
    else {
        return;
    };
    if s + 1 >= words.len() {
        return;
    }
    let value = words.remove(s + 1);
    words.remove(s);
    let split = super::shell_words::split(&value);
    let inner = split
        .into_iter()
        .next()
        .map(|c| c.words)
        .unwrap_or_default();
    words.splice(s..s, inner);
}

/// The index of the first word after `from` that is not an option (or the value of one of
/// `valued`); `--` ends the options.
fn skip_options(words: &[String], mut at: usize, valued: &[&str]) -> usize {
    while let Some(word) = words.get(at) {
        if !word.starts_with('-') || word == "-" {
            break;
        }
        at += 1;
        if word == "--" {
            break;
        }
        if valued.contains(&word.as_str()) {
            at += 1;
        }
    }
    at
}

/// What the shell remembers between the commands of one script: where a top-level `cd`
/// went, and variables set by `NAME=value`, `export` or `for NAME in …`.
pub fn follow(scope: &mut Scope, words: &[String], run: &Invocation) {
    let first = |text: &str| expand_variables(text, scope).swap_remove(0);
    match (run.name.as_str(), words.first().map(String::as_str)) {
        ("cd" | "pushd", _) => {
            let target = run.args.iter().find(|a| !a.starts_with('-') || *a == "-");
            scope.cwd = match target.map(|t| first(t)) {
                None => Some("~".to_string()),
                Some(t) if t.starts_with(['/', '~']) => Some(t),
                Some(t) if t != "-" => scope.cwd.as_ref().map(|cwd| format!("{cwd}/{t}")),
                Some(_) => None,
            };
        }
        ("export" | "local" | "declare" | "readonly", _) => assign(scope, &run.args),
        ("", Some("for")) => {
            if let [_, name, keyword, values @ ..] = words
                && keyword == "in"
            {
                let values: Vec<String> = values.iter().take(16).map(|v| first(v)).collect();
                remember(scope, name, values);
            }
        }
        ("", _) => assign(scope, words),
        _ => {}
    }
}

fn assign(scope: &mut Scope, words: &[String]) {
    for word in words {
        if let Some((name, value)) = word.split_once('=') {
            let value = expand_variables(value, scope).swap_remove(0);
            remember(scope, name, vec![value]);
        }
    }
}

/// Keep short values only: each `$NAME` copies them, and a path is short. A long one makes
/// the variable unknown again (so `X=<1 MB>; rm $X $X …` cannot make the gate quadratic).
fn remember(scope: &mut Scope, name: &str, values: Vec<String>) {
    if values.iter().map(String::len).sum::<usize>() <= 256 {
        scope.variables.insert(name.to_string(), values);
    } else {
        scope.variables.remove(name);
    }
}
