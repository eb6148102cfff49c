//! Where a path argument of a dangerous command points, as far as the text tells: `/`, a
//! system directory, the home directory, a disk, … once `$HOME`, `${HOME:?}`, `..`, braces
//! (`{/,}`), globs (`/[a-z]*`), variables set in the same command and a `cd` to an absolute
//! path are accounted for.
//!
//! The rules ask `places_of` about arguments (`danger_match.rs`), in the `Scope` that
//! `danger_words::follow` keeps up to date from one command to the next. Everything here is
//! lexical: no file is looked at, no variable is read from the environment, and each step is
//! linear in the length of the words (brace expansion and variable values are capped).

use super::shell_words::SUBSTITUTED;
use std::collections::HashMap;

/// Where a path argument points, as far as the gate can tell from the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
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
    "/dev/sd",
    "/dev/hd",
    "/dev/vd",
    "/dev/xvd",
    "/dev/nvme",
    "/dev/mmcblk",
    "/dev/mapper/",
    "/dev/loop",
    "/dev/md",
    "/dev/dm-",
    "/dev/disk",
    "/dev/nbd",
    "/dev/rbd",
    "/dev/bcache",
    "/dev/zd",
    "/dev/root",
    "/dev/sr",
    "/dev/ubd",
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
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "opt",
    "proc",
    "root",
    "sbin",
    "srv",
    "sys",
    "usr",
    "var",
    "snap",
    "Users",
    "System",
    "Library",
    "Applications",
];

/// What the gate knows of the shell it reads: variables set in the same command (`D=/`,
/// `for d in / ~`) and the directory a `cd` to an absolute path (or home) moved to.
#[derive(Debug, Default)]
pub(crate) struct Scope {
    pub(crate) variables: HashMap<String, Vec<String>>,
    /// `None` while we are still where the command started (which we do not know).
    pub(crate) cwd: Option<String>,
}

/// Every place `arg` may point to: one per value of a variable and per brace alternative.
pub(crate) fn places_of(arg: &str, scope: &Scope) -> Vec<Place> {
    let words = expand_variables(arg, scope).into_iter();
    let words = words.flat_map(|expanded| expand_braces(&expanded)).take(16);
    words.map(|word| place_of(&word, scope)).collect()
}

/// Replace a leading `$NAME`, `${NAME}`, `${NAME:?…}` or `${NAME:-…}` by what it holds:
/// `HOME` is `~`, `PWD` the tracked directory (or `.`), others as set in the command.
pub(crate) fn expand_variables(arg: &str, scope: &Scope) -> Vec<String> {
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
pub(crate) fn expand_braces(word: &str) -> Vec<String> {
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
        // Pushed last first, so the words come out in the order written (`{rm,-rf}` is `rm -rf`).
        todo.extend(
            inside
                .split(',')
                .rev()
                .map(|alt| format!("{head}{alt}{tail}")),
        );
    }
    done
}

/// The first `{…,…}` without braces inside it (`${a,b}` is a variable, not braces).
fn brace_group(word: &str) -> Option<(usize, usize)> {
    let close = word.find('}')?;
    let open = word[..close].rfind('{')?;
    (word[open..close].contains(',') && !word[..open].ends_with('$')).then_some((open, close))
}

/// Where one expanded word points.
fn place_of(word: &str, scope: &Scope) -> Place {
    // What a substitution prints (`"$(mktemp -d)"`) cannot be known: not a place we refuse.
    // But everything in it (`"$(pwd)"/*`) is everything in some directory, as `*` is.
    if let Some(glob) = word
        .strip_prefix(SUBSTITUTED)
        .and_then(|w| w.strip_prefix('/'))
        && is_glob_of_everything(glob)
    {
        return Place::Everything;
    }
    if word.starts_with('-') || word.contains(SUBSTITUTED) {
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
    DISKS
        .iter()
        .any(|d| word.starts_with(d))
        .then_some(Place::Disk)
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
        (
            Base::Home,
            word.split_once('/').map_or("", |(_, rest)| rest),
        )
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
        (Base::Root, ["home" | "Users", user]) if user.starts_with('$') => Place::Home,
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
pub(crate) fn is_glob_of_everything(part: &str) -> bool {
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
