//! The danger gate's table: each rule says what it refuses, how bad it is, and why (the reason
//! is what the model, or the user, reads).
//!
//! `danger.rs` asks `matching` about every command it finds, once the program has been found
//! past its wrappers (`danger_words::invocation`). A rule is data; reading the table should be
//! enough to know what is refused. Scripts fed to shells, downloads run as scripts and fork
//! bombs need more than one command to see, so `danger.rs` finds those itself.

use super::danger_words::{Invocation, Place, Scope, places_of};
use super::shell_words::Redirect;

/// How bad a match is, which decides what consent does with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Wrecks the system, the home directory or a disk: refused in every mode.
    Catastrophic,
    /// Loses work but has real uses (the git history, a whole tree): never run silently. The
    /// name is how a user opts in under `--yes` (`CORECODER_ALLOW_DESTRUCTIVE=NAME`).
    Destructive(&'static str),
}

pub struct Rule {
    pub class: Class,
    pub reason: &'static str,
    pattern: Pattern,
}

enum Pattern {
    /// One of `programs`, with a flag among `flags` (if any are listed), and an operand (of
    /// those `operands` names) pointing to one of `places`.
    Targets {
        programs: &'static [&'static str],
        flags: &'static [Arg],
        operands: Operands,
        places: &'static [Place],
    },
    /// One of `programs`, whatever its arguments; `mkfs` also stands for `mkfs.ext4`.
    Program(&'static [&'static str]),
    /// `program` (with `subcommand` as its first operand, if given; git's own options before
    /// it are skipped) and one of `any` among its arguments (or none at all listed), and none of `unless`.
    Command {
        program: &'static str,
        subcommand: Option<&'static str>,
        any: &'static [Arg],
        unless: &'static [Arg],
    },
    /// `kill` aimed at every process (`-1`) or at init (`1`).
    KillEverything,
    /// `find PATHS … -delete` (or `-exec rm`) at one of `places`; with `targeted: false`,
    /// only when no test (`-name`, `-mtime`, …) narrows what it deletes.
    FindDelete {
        places: &'static [Place],
        targeted: bool,
    },
    /// Output redirected (`>`, `>>`, `&>`) onto one of `places`.
    RedirectOnto(&'static [Place]),
}

/// One argument shape.
pub enum Arg {
    /// `--name` or `--name=…`.
    Long(&'static str),
    /// The letter in a cluster of short options: `f` in `-f`, `-fdx`.
    Short(char),
    /// This exact word.
    Word(&'static str),
    /// A word (not an option) starting with this: `+main` in `git push origin +main`.
    Starts(&'static str),
}

/// Which arguments of a `Targets` rule are looked at.
#[derive(Clone, Copy)]
pub enum Operands {
    All,
    /// The destination: `cp a b /dev/sda`.
    Last,
    /// `dd`'s `of=PATH`.
    DdOutput,
}

const RECURSIVE_OR_FORCED: &[Arg] = &[
    Arg::Short('r'),
    Arg::Short('R'),
    Arg::Short('f'),
    Arg::Long("recursive"),
    Arg::Long("force"),
];
const RECURSIVE: &[Arg] = &[Arg::Short('R'), Arg::Long("recursive")];
/// What `rm` must never be pointed at; `..` and `.` may be the home directory or `/`.
const WIPE: &[Place] = &[
    Place::Root,
    Place::RootGlob,
    Place::SystemDir,
    Place::Home,
    Place::AboveHome,
    Place::Here,
    Place::Above,
    Place::Everything,
];
/// The system and every home directory: what a recursive chmod, chown or find must not touch.
const SYSTEM_OR_HOME: &[Place] = &[
    Place::Root,
    Place::RootGlob,
    Place::SystemDir,
    Place::Home,
    Place::AboveHome,
    Place::Above,
];
const DISK_OR_KERNEL: &[Place] = &[Place::Disk, Place::KernelControl];

pub const RULES: &[Rule] = &[
    catastrophic(
        "recursive or forced rm of /, a system directory, the home directory, ., .. or *",
        Pattern::Targets {
            programs: &["rm"],
            flags: RECURSIVE_OR_FORCED,
            operands: Operands::All,
            places: WIPE,
        },
    ),
    catastrophic(
        "recursive chmod, chown or chgrp of /, a system directory or the home directory",
        Pattern::Targets {
            programs: &["chmod", "chown", "chgrp", "setfacl"],
            flags: RECURSIVE,
            operands: Operands::All,
            places: SYSTEM_OR_HOME,
        },
    ),
    catastrophic(
        "find deleting under /, a system directory or the home directory",
        Pattern::FindDelete {
            places: SYSTEM_OR_HOME,
            targeted: true,
        },
    ),
    catastrophic(
        "mkfs, mkswap, wipefs or blkdiscard formats or wipes a disk",
        Pattern::Program(&["mkfs", "mke2fs", "mkswap", "wipefs", "blkdiscard", "sgdisk"]),
    ),
    catastrophic(
        "writing onto a disk device",
        Pattern::Targets {
            programs: &["shred", "tee", "fdisk", "sfdisk", "parted", "badblocks", "truncate"],
            flags: &[],
            operands: Operands::All,
            places: DISK_OR_KERNEL,
        },
    ),
    catastrophic(
        "copying onto a disk device",
        Pattern::Targets {
            programs: &["cp", "mv", "install", "rsync"],
            flags: &[],
            operands: Operands::Last,
            places: DISK_OR_KERNEL,
        },
    ),
    catastrophic(
        "dd writing onto a disk device",
        Pattern::Targets {
            programs: &["dd"],
            flags: &[],
            operands: Operands::DdOutput,
            places: DISK_OR_KERNEL,
        },
    ),
    catastrophic(
        "redirecting output onto a disk device or the kernel's controls",
        Pattern::RedirectOnto(DISK_OR_KERNEL),
    ),
    catastrophic(
        "shutting down or restarting the machine",
        Pattern::Program(&["shutdown", "reboot", "halt", "poweroff", "kexec", "killall5"]),
    ),
    catastrophic(
        "shutting down or restarting the machine",
        Pattern::Command {
            program: "systemctl",
            subcommand: None,
            any: &[
                Arg::Word("poweroff"),
                Arg::Word("reboot"),
                Arg::Word("halt"),
                Arg::Word("kexec"),
                Arg::Word("rescue"),
                Arg::Word("emergency"),
            ],
            unless: &[],
        },
    ),
    catastrophic(
        "changing the machine's runlevel (init 0 stops it, init 6 restarts it)",
        Pattern::Command {
            program: "init",
            subcommand: None,
            any: &[Arg::Word("0"), Arg::Word("1"), Arg::Word("6")],
            unless: &[],
        },
    ),
    catastrophic(
        "killing every process (kill -1) or init",
        Pattern::KillEverything,
    ),
    catastrophic(
        "crontab -r removes every cron job of the user",
        Pattern::Command {
            program: "crontab",
            subcommand: None,
            any: &[Arg::Short('r'), Arg::Long("remove")],
            unless: &[],
        },
    ),
    catastrophic(
        "a fork bomb written in perl",
        Pattern::Command {
            program: "perl",
            subcommand: None,
            any: &[Arg::Word("fork while fork"), Arg::Word("fork while fork;")],
            unless: &[],
        },
    ),
    destructive(
        "rm-git-dir",
        "deleting a repository's .git directory (its whole history)",
        Pattern::Targets {
            programs: &["rm"],
            flags: RECURSIVE_OR_FORCED,
            operands: Operands::All,
            places: &[Place::GitDir],
        },
    ),
    destructive(
        "find-delete",
        "find deleting everything under a directory",
        Pattern::FindDelete {
            places: &[Place::Here, Place::Everything],
            targeted: false,
        },
    ),
    destructive(
        "git-push-force",
        "git push that rewrites or deletes remote history (--force, +ref, --delete, --mirror)",
        Pattern::Command {
            program: "git",
            subcommand: Some("push"),
            any: &[
                Arg::Long("force"),
                Arg::Long("force-with-lease"),
                Arg::Short('f'),
                Arg::Long("mirror"),
                Arg::Long("delete"),
                Arg::Short('d'),
                Arg::Starts("+"),
                Arg::Starts(":"),
            ],
            unless: &[],
        },
    ),
    destructive(
        "git-reset-hard",
        "git reset --hard throws uncommitted changes away",
        Pattern::Command {
            program: "git",
            subcommand: Some("reset"),
            any: &[Arg::Long("hard"), Arg::Long("merge")],
            unless: &[],
        },
    ),
    destructive(
        "git-clean",
        "git clean -f deletes untracked files",
        Pattern::Command {
            program: "git",
            subcommand: Some("clean"),
            any: &[Arg::Short('f'), Arg::Long("force")],
            unless: &[Arg::Short('n'), Arg::Long("dry-run")],
        },
    ),
    destructive(
        "git-discard",
        "git checkout/restore that throws uncommitted changes away",
        Pattern::Command {
            program: "git",
            subcommand: Some("checkout"),
            any: &[Arg::Word("--"), Arg::Word("."), Arg::Short('f'), Arg::Long("force")],
            unless: &[],
        },
    ),
    destructive(
        "git-discard",
        "git checkout/restore that throws uncommitted changes away",
        Pattern::Command {
            program: "git",
            subcommand: Some("restore"),
            any: &[],
            unless: &[Arg::Long("staged"), Arg::Short('S')],
        },
    ),
    destructive(
        "git-discard",
        "git checkout/restore that throws uncommitted changes away",
        Pattern::Command {
            program: "git",
            subcommand: Some("switch"),
            any: &[Arg::Long("discard-changes"), Arg::Short('f'), Arg::Long("force")],
            unless: &[],
        },
    ),
    destructive(
        "git-branch-delete",
        "git branch -D deletes a branch even when it is not merged",
        Pattern::Command {
            program: "git",
            subcommand: Some("branch"),
            any: &[Arg::Short('D')],
            unless: &[],
        },
    ),
    destructive(
        "git-stash-clear",
        "git stash clear/drop throws stashed work away",
        Pattern::Command {
            program: "git",
            subcommand: Some("stash"),
            any: &[Arg::Word("clear"), Arg::Word("drop")],
            unless: &[],
        },
    ),
];

const fn catastrophic(reason: &'static str, pattern: Pattern) -> Rule {
    Rule {
        class: Class::Catastrophic,
        reason,
        pattern,
    }
}

const fn destructive(name: &'static str, reason: &'static str, pattern: Pattern) -> Rule {
    Rule {
        class: Class::Destructive(name),
        reason,
        pattern,
    }
}

/// The names a user may opt in to, each once, in table order.
pub fn destructive_names() -> Vec<&'static str> {
    let mut names = Vec::new();
    for rule in RULES {
        if let Class::Destructive(name) = rule.class
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
}

/// The rules one command breaks.
pub fn matching<'a>(
    run: &'a Invocation,
    redirects: &'a [Redirect],
    scope: &'a Scope,
) -> impl Iterator<Item = &'static Rule> + 'a {
    RULES
        .iter()
        .filter(move |rule| matches(&rule.pattern, run, redirects, scope))
}

fn matches(pattern: &Pattern, run: &Invocation, redirects: &[Redirect], scope: &Scope) -> bool {
    let (name, args) = (run.name.as_str(), run.args.as_slice());
    match pattern {
        Pattern::Targets {
            programs,
            flags,
            operands,
            places,
        } => {
            programs.contains(&name)
                && (flags.is_empty() || flags.iter().any(|f| has(args, f)))
                && operands_of(args, *operands)
                    .any(|a| places_of(a, scope).iter().any(|p| places.contains(p)))
        }
        Pattern::Program(programs) => programs.iter().any(|p| is_program(name, p)),
        Pattern::Command {
            program,
            subcommand,
            any,
            unless,
        } => {
            let args = match subcommand {
                Some(sub) => match git_subcommand(args) {
                    Some((found, rest)) if found == *sub => rest,
                    _ => return false,
                },
                None => args,
            };
            name == *program
                && (any.is_empty() || any.iter().any(|a| has(args, a)))
                && !unless.iter().any(|a| has(args, a))
        }
        Pattern::KillEverything => name == "kill" && kills_everything(args),
        Pattern::FindDelete { places, targeted } => {
            name == "find" && find_deletes(args, scope, places, *targeted)
        }
        Pattern::RedirectOnto(places) => redirects.iter().any(|r| {
            r.op.contains('>') && places_of(&r.target, scope).iter().any(|p| places.contains(p))
        }),
    }
}

/// `mkfs` is `mkfs` and `mkfs.ext4`, not `mkfs-helper.sh`.
fn is_program(name: &str, program: &str) -> bool {
    name.strip_prefix(program)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

fn operands_of(args: &[String], operands: Operands) -> Box<dyn Iterator<Item = &str> + '_> {
    match operands {
        Operands::All => Box::new(args.iter().map(String::as_str)),
        Operands::Last => Box::new(args.last().map(String::as_str).into_iter()),
        Operands::DdOutput => Box::new(args.iter().filter_map(|a| a.strip_prefix("of="))),
    }
}

fn has(args: &[String], arg: &Arg) -> bool {
    args.iter().any(|a| match arg {
        Arg::Long(long) => a
            .strip_prefix("--")
            .is_some_and(|l| l == *long || l.strip_prefix(long).is_some_and(|r| r.starts_with('='))),
        Arg::Short(letter) => {
            a.starts_with('-') && !a.starts_with("--") && a[1..].contains(*letter)
        }
        Arg::Word(word) => a == word,
        Arg::Starts(prefix) => a.starts_with(prefix) && a.len() > prefix.len(),
    })
}

/// git's subcommand and what follows it, past `-C DIR`, `-c KEY=VALUE` and other options.
fn git_subcommand(args: &[String]) -> Option<(&str, &[String])> {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        if !arg.starts_with('-') {
            return Some((arg, &args[at + 1..]));
        }
        let takes_value = matches!(arg.as_str(), "-C" | "-c" | "--git-dir" | "--work-tree");
        at += 1 + usize::from(takes_value);
    }
    None
}

/// `kill -9 -1`, `kill -s KILL -1`, `kill -- -1`, `kill 1`: the first option is the signal.
fn kills_everything(args: &[String]) -> bool {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        match arg.as_str() {
            "--" => return args[at + 1..].iter().any(|a| a == "-1" || a == "1"),
            "-s" | "-n" => at += 2,
            "1" => return true,
            // `kill -1 PID` sends signal 1; `-1` is every process only after the signal.
            "-1" if at > 0 => return true,
            _ => at += 1,
        }
    }
    false
}

/// Tests that narrow what `find` matches; without one, `-delete` takes everything.
const FIND_TESTS: &[&str] = &[
    "-name", "-iname", "-path", "-ipath", "-wholename", "-regex", "-iregex", "-newer", "-mtime",
    "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size", "-empty", "-user", "-group", "-perm",
    "-links", "-inum", "-samefile", "-lname",
];

fn find_deletes(args: &[String], scope: &Scope, places: &[Place], targeted: bool) -> bool {
    let paths_end = args
        .iter()
        .position(|a| a.starts_with(['-', '(', '!']))
        .unwrap_or(args.len());
    let (paths, expression) = args.split_at(paths_end);
    let deletes = expression.windows(2).any(|w| {
        w[0] == "-delete" || (w[0].starts_with("-exec") || w[0] == "-ok") && w[1].ends_with("rm")
    }) || expression.last().is_some_and(|a| a == "-delete");
    let narrowed = expression.iter().any(|a| FIND_TESTS.contains(&a.as_str()));
    let here = [".".to_string()];
    let paths = if paths.is_empty() { &here[..] } else { paths };
    let at_place = paths
        .iter()
        .any(|p| places_of(p, scope).iter().any(|place| places.contains(place)));
    deletes && at_place && (targeted || !narrowed)
}
