//! The danger gate's reading of one simple command: which program it really runs (past
//! `sudo`, `timeout 5`, `xargs`, `{`, `if`, …), and where each path argument points (`/`, the
//! home directory, a disk, …) once `$HOME`, `..`, braces and globs are accounted for.
//!
//! `danger.rs` calls `invocation` for every command `shell_words` found and the rules in
//! `danger_rules.rs` ask `place_of` about arguments. Everything here is lexical: no file is
//! looked at, no variable is read from the environment, and every step is linear in the
//! length of the words (brace expansion is capped), so the gate stays linear too.

use std::collections::HashMap;

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
    ("sudo", &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-R"], 0),
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
    ("xargs", &["-I", "-n", "-P", "-L", "-d", "-s", "-a", "-E"], 0),
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
    let inner = split.into_iter().next().map(|c| c.words).unwrap_or_default();
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

/// Where a path argument points, as far as the gate can tell from the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `/`, `/tmp/..`
    Root,
    /// A glob right under the root: `/*`, `/[a-z]*`.
    RootGlob,
    /// `/usr`, `/etc`, … (see `SYSTEM_DIRS`).
    SystemDir,
    /// The home directory or everything in it: `~`, `$HOME`, `${HOME:?}`, `~/*`.
    Home,
    /// Above the home directory: `~/..` (every user's home).
    AboveHome,
    /// The working directory: `.`, `$PWD`.
    Here,
    /// Above the working directory, which may be anything: `..`, `../..`.
    Above,
    /// Everything in the working directory: `*`, `.*`, `./[a-z]*`.
    Everything,
    /// A repository's history: `.git`, `path/.git`.
    GitDir,
    /// A disk or partition: `/dev/sda`, `/dev/mapper/root`, `/dev/disk/by-id/…`.
    Disk,
    /// Files that control the kernel: `/proc/sysrq-trigger`, `/dev/mem`.
    KernelControl,
    Other,
}

/// Device names that are disks or partitions (everything that can hold a filesystem).
const DISKS: &[&str] = &[
    "/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk", "/dev/mapper/",
    "/dev/loop", "/dev/md", "/dev/dm-", "/dev/disk", "/dev/nbd", "/dev/rbd", "/dev/bcache",
    "/dev/zd", "/dev/root", "/dev/sr", "/dev/ubd",
];

const KERNEL_CONTROL: &[&str] = &[
    "/proc/sysrq-trigger",
    "/proc/sys/kernel/sysrq",
    "/dev/mem",
    "/dev/kmem",
    "/dev/port",
    "/sys/power/state",
];

/// Directories right under `/` whose loss breaks the system (Linux and macOS).
const SYSTEM_DIRS: &[&str] = &[
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "opt", "proc", "root",
    "sbin", "srv", "sys", "usr", "var", "snap", "Users", "System", "Library", "Applications",
];

/// What the gate knows of the shell it reads: variables set in the same command (`D=/`,
/// `for d in / ~`) and the directory a top-level `cd` to an absolute path moved to.
#[derive(Debug, Default)]
pub struct Scope {
    pub variables: HashMap<String, Vec<String>>,
    /// `None` while we are still where the command started (which we do not know).
    pub cwd: Option<String>,
}

/// Every place `arg` may point to: one per value of a variable and per brace alternative.
pub fn places_of(arg: &str, scope: &Scope) -> Vec<Place> {
    let mut places = Vec::new();
    for expanded in expand_variables(arg, scope) {
        for word in expand_braces(&expanded) {
            places.push(place_of(&word, scope));
        }
    }
    places
}

/// Replace a leading `$NAME`, `${NAME}`, `${NAME:?…}` or `${NAME:-…}` by what it holds:
/// `HOME` is `~`, `PWD` the tracked directory (or `.`), others as set in the command.
pub fn expand_variables(arg: &str, scope: &Scope) -> Vec<String> {
    let Some(rest) = arg.strip_prefix('$') else {
        return vec![arg.to_string()];
    };
    let (name, after) = match rest.strip_prefix('{') {
        Some(braced) => match braced.split_once('}') {
            Some((inside, after)) => (inside.split([':', '-', '?', '%', '#']).next(), after),
            None => return vec![arg.to_string()],
        },
        None => {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (Some(&rest[..end]), &rest[end..])
        }
    };
    let values = match name.unwrap_or("") {
        "HOME" => vec!["~".to_string()],
        "PWD" => vec![scope.cwd.clone().unwrap_or_else(|| ".".to_string())],
        name => match scope.variables.get(name) {
            Some(values) => values.clone(),
            None => return vec![arg.to_string()],
        },
    };
    values.into_iter().map(|v| format!("{v}{after}")).collect()
}

/// `{/,}` → `/` and ``; `/{bin,etc}` → `/bin`, `/etc`. At most 16 words come out; past that
/// the word is kept as it is (a command that needs more is not a slip).
fn expand_braces(word: &str) -> Vec<String> {
    let mut done = Vec::new();
    let mut todo = vec![word.to_string()];
    while let Some(word) = todo.pop() {
        let Some((open, close)) = brace_group(&word) else {
            done.push(word);
            continue;
        };
        let (head, inside, tail) = (&word[..open], &word[open + 1..close], &word[close + 1..]);
        if done.len() + todo.len() + inside.matches(',').count() >= 16 {
            return vec![word];
        }
        todo.extend(inside.split(',').map(|alt| format!("{head}{alt}{tail}")));
    }
    done
}

/// The first `{…,…}` without braces inside it.
fn brace_group(word: &str) -> Option<(usize, usize)> {
    let close = word.find('}')?;
    let open = word[..close].rfind('{')?;
    word[open..close].contains(',').then_some((open, close))
}

/// Where one expanded word points.
fn place_of(word: &str, scope: &Scope) -> Place {
    if word.starts_with('-') {
        return Place::Other;
    }
    if let Some(place) = device_place(word) {
        return place;
    }
    let joined;
    let word = match (&scope.cwd, word.starts_with(['/', '~'])) {
        (Some(cwd), false) => {
            joined = format!("{cwd}/{word}");
            joined.as_str()
        }
        _ => word,
    };
    let (base, parts) = normalize(word);
    classify(base, &parts)
}

fn device_place(word: &str) -> Option<Place> {
    if KERNEL_CONTROL.iter().any(|k| word.starts_with(k)) {
        return Some(Place::KernelControl);
    }
    DISKS.iter().any(|d| word.starts_with(d)).then_some(Place::Disk)
}

/// What a path is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Base {
    Root,
    Home,
    /// `~/..`: the directory holding the home directory.
    AboveHome,
    Here,
    /// `..` once or more: above the working directory.
    Above,
}

/// The base and the components left after `.` and `..` are applied, lexically.
fn normalize(word: &str) -> (Base, Vec<&str>) {
    let (mut base, rest) = if let Some(rest) = word.strip_prefix('/') {
        (Base::Root, rest)
    } else if word.starts_with('~') {
        (Base::Home, word.split_once('/').map_or("", |(_, rest)| rest))
    } else {
        (Base::Here, word)
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.pop().is_some() => {}
            ".." => {
                base = match base {
                    Base::Root => Base::Root,
                    Base::Home => Base::AboveHome,
                    Base::AboveHome => Base::Root,
                    Base::Here | Base::Above => Base::Above,
                }
            }
            part => parts.push(part),
        }
    }
    (base, parts)
}

fn classify(base: Base, parts: &[&str]) -> Place {
    let all_glob = parts.first().is_some_and(|p| is_glob_of_everything(p));
    match (base, parts) {
        (_, [.., ".git"]) => Place::GitDir,
        (Base::Root, []) => Place::Root,
        (Base::Root, [first]) if first.contains(['*', '?', '[']) => Place::RootGlob,
        (Base::Root, [first, ..]) if first.contains(['*', '?', '[']) => Place::RootGlob,
        (Base::Root, [first]) if SYSTEM_DIRS.contains(first) => Place::SystemDir,
        (Base::Root, [first, second])
            if SYSTEM_DIRS.contains(first) && is_glob_of_everything(second) =>
        {
            Place::SystemDir
        }
        (Base::Home, []) => Place::Home,
        (Base::Home, [_]) if all_glob => Place::Home,
        (Base::AboveHome, []) => Place::AboveHome,
        (Base::AboveHome, [_]) if all_glob => Place::AboveHome,
        (Base::Here, []) => Place::Here,
        (Base::Here, [_]) if all_glob => Place::Everything,
        (Base::Above, []) => Place::Above,
        (Base::Above, [_]) if all_glob => Place::Above,
        _ => Place::Other,
    }
}

/// `*`, `.*`, `**`, `[a-z]*`, `?*`: a name pattern with no fixed letter, so it matches nearly
/// everything (`*.o` has one, and is fine).
fn is_glob_of_everything(part: &str) -> bool {
    let mut letters = String::new();
    let mut in_class = false;
    for c in part.chars() {
        match c {
            '[' => in_class = true,
            ']' => in_class = false,
            _ if in_class => {}
            c => letters.push(c),
        }
    }
    letters.contains(['*', '?']) && !letters.chars().any(|c| c.is_alphanumeric())
}
