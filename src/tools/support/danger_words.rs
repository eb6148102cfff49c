//! The danger gate's reading of one simple command: which program it really runs, past
//! `sudo`, `timeout 5`, `time -p`, `xargs`, `env -S`, `{`, `if`, `do`, `!` and `VAR=value`.
//! `danger.rs` calls `invocation` for every command `shell_words` found (the rules then look
//! at the program and its arguments), `pipe_sources` and `substitution_children` to see how
//! the commands feed each other, the script finders (`dash_c_script`, `watch_script`,
//! `find_exec_commands`) for programs that run other commands, and `follow` after each
//! command, to remember what the next one's paths mean (a `cd /`, `D=/`). It does not judge
//! anything, and each step is linear in the number of words.

use super::danger_places::{Scope, expand_braces, expand_variables};
use super::shell_words::{Separator, SimpleCommand};

/// A program and its arguments, with every wrapper and keyword before it removed.
#[derive(Debug, Default, Clone)]
pub(crate) struct Program {
    /// The file name of the program (`/bin/rm` → `rm`); empty when there is none.
    pub(crate) name: String,
    pub(crate) args: Vec<String>,
    /// Run by `xargs`: more arguments come from its input.
    pub(crate) via_xargs: bool,
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

/// Shell keywords that may stand before a command: `if rm …`, `do rm …`, `! rm …`, `{ rm …`
/// (not `time`: a wrapper, whose `-p` is an option).
const KEYWORDS: &[&str] = &[
    "!", "{", "}", "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "coproc",
];

/// The program `words` run and its arguments. A function definition, a `for`/`case` head
/// and a line of assignments run nothing (an empty name). Braces first: `{rm,-rf,~}` is `rm`.
pub(crate) fn invocation(words: &[String]) -> Program {
    let expanded: Vec<String> = words.iter().flat_map(|w| expand_braces(w)).collect();
    let mut words = Words {
        front: Vec::new(),
        rest: expanded.iter(),
    };
    let mut via_xargs = false;
    loop {
        let Some(first) = words.next() else {
            return Program::default();
        };
        let is_assignment = first.contains('=') && !first.starts_with('=');
        if is_assignment || KEYWORDS.contains(&first.as_str()) {
            continue;
        }
        // `function f` (or `function f()`) defines a function; its body may follow on the
        // same line (`function f { rm …; }`), so read on after the name.
        if first == "function" {
            words.next();
            if words.peek() == Some("()") {
                words.next();
            }
            continue;
        }
        if matches!(first.as_str(), "for" | "case" | "select") {
            return Program::default();
        }
        let name = first.rsplit('/').next().unwrap_or(&first).to_string();
        let Some((_, valued, positional)) = WRAPPERS.iter().find(|(w, _, _)| *w == name) else {
            let args = words.remaining();
            return Program {
                name,
                args,
                via_xargs,
            };
        };
        via_xargs |= name == "xargs";
        skip_options(&mut words, valued, &name);
        for _ in 0..*positional {
            words.next();
        }
    }
}

/// A command's words, read front to back; `env -S` puts the words of its value in front.
/// Every word is copied once, so reading is linear however many wrappers there are.
struct Words<'a> {
    /// Words put in front, the next one last.
    front: Vec<String>,
    rest: std::slice::Iter<'a, String>,
}

impl Words<'_> {
    fn peek(&self) -> Option<&str> {
        let next = self.front.last().or_else(|| self.rest.as_slice().first());
        next.map(String::as_str)
    }

    fn next(&mut self) -> Option<String> {
        self.front.pop().or_else(|| self.rest.next().cloned())
    }

    fn remaining(self) -> Vec<String> {
        self.front
            .into_iter()
            .rev()
            .chain(self.rest.cloned())
            .collect()
    }
}

/// Drop a wrapper's options (and the values of those in `valued`); `--` ends them. `env -S
/// 'rm -rf /'` splits its value into words, which are read next.
fn skip_options(words: &mut Words, valued: &[&str], wrapper: &str) {
    while let Some(word) = words.peek().filter(|w| w.starts_with('-') && *w != "-") {
        let word = word.to_string();
        words.next();
        let split = match word.as_str() {
            _ if wrapper != "env" => None,
            "-S" | "--split-string" => Some(words.next().unwrap_or_default()),
            w => (w.strip_prefix("--split-string=").or(w.strip_prefix("-S"))).map(String::from),
        };
        if let Some(value) = split {
            let split = super::shell_words::split(&value).into_iter().next();
            let split_words = split.map(|c| c.words).unwrap_or_default();
            words.front.extend(split_words.into_iter().rev());
        } else if word == "--" {
            return;
        } else if valued.contains(&word.as_str()) {
            words.next();
        }
    }
}

/// For each command, the one piped into it: the previous command at the same depth, when
/// that one ended with `|`. One pass, remembering the last command seen at each depth.
pub(crate) fn pipe_sources(commands: &[SimpleCommand]) -> Vec<Option<usize>> {
    let mut last_at_depth: Vec<Option<usize>> = Vec::new();
    let mut feeds = Vec::with_capacity(commands.len());
    for (at, command) in commands.iter().enumerate() {
        if last_at_depth.len() <= command.depth {
            last_at_depth.resize(command.depth + 1, None);
        }
        let previous = last_at_depth[command.depth];
        feeds.push(previous.filter(|&p| commands[p].ends_with == Separator::Pipe));
        last_at_depth[command.depth] = Some(at);
    }
    feeds
}

/// For each command, the commands one level inside its substitutions. A command's inner
/// commands come right before it, so a stack per depth hands each one to its parent once.
pub(crate) fn substitution_children(commands: &[SimpleCommand]) -> Vec<Vec<usize>> {
    let mut waiting: Vec<Vec<usize>> = Vec::new();
    let mut children = Vec::with_capacity(commands.len());
    for (at, command) in commands.iter().enumerate() {
        if waiting.len() <= command.depth + 1 {
            waiting.resize(command.depth + 2, Vec::new());
        }
        let below = &mut waiting[command.depth + 1];
        let mut mine = Vec::new();
        while below.last().is_some_and(|&c| c >= command.inner.start) {
            mine.extend(below.pop());
        }
        mine.reverse();
        children.push(mine);
        waiting[command.depth].push(at);
    }
    children
}

/// What `watch` runs: its arguments after its options, joined, as `watch` hands them to `sh -c`.
pub(crate) fn watch_script(args: &[String]) -> String {
    let mut at = 0;
    while let Some(arg) = args.get(at).filter(|a| a.starts_with('-')) {
        at += 1 + usize::from(matches!(arg.as_str(), "-n" | "--interval" | "-q"));
    }
    args[at.min(args.len())..].join(" ")
}

/// The commands `find … -exec CMD … ;` (or `-execdir`, `-ok`, ending in `;` or `+`) runs, as
/// text to read again (each word quoted, since find passes them as they are).
pub(crate) fn find_exec_commands(args: &[String]) -> Vec<String> {
    let mut commands = Vec::new();
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        if arg.starts_with("-exec") || arg.starts_with("-ok") {
            let command = words.by_ref().take_while(|w| *w != ";" && *w != "+");
            let quoted: Vec<String> = command
                .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
                .collect();
            commands.push(quoted.join(" "));
        }
    }
    commands
}

/// The script after a shell's `-c` (also in `-lc`, `-ec`; a `--` after it is skipped).
pub(crate) fn dash_c_script(args: &[String]) -> Option<&String> {
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

/// What the shell remembers between the commands of one script: where a top-level `cd`
/// went, and variables set by `NAME=value`, `export` or `for NAME in …`.
pub(crate) fn follow(scope: &mut Scope, words: &[String], run: &Program) {
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
            // Each relative path is joined to it: a long one would make the gate quadratic.
            scope.cwd = scope.cwd.take().filter(|cwd| cwd.len() <= 256);
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
