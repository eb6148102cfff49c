//! The danger gate's table: each rule says what it refuses, how bad it is, and why (the reason
//! is what the model, or the user, reads).
//!
//! A rule is data: reading `RULES` should be enough to know what is refused. The kinds of
//! pattern, and how each matches one command, are in `danger_match.rs`. Scripts fed to
//! shells, downloads run as scripts and fork bombs need more than one command to see, so
//! `danger.rs` finds those itself. To add a rule, add it here and a command to the tests.

use super::danger_match::{Arg, Narrowed, Operands, Pattern};
use super::danger_places::Place;

/// How bad a match is, which decides what consent does with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Wrecks the system, the home directory or a disk: refused in every mode.
    Catastrophic,
    /// Loses work but has real uses (the git history, a whole tree): never run silently. The
    /// name is how a user opts in under `--yes` (`CORECODER_ALLOW_DESTRUCTIVE=NAME`).
    Destructive(&'static str),
}

pub(crate) struct Rule {
    pub(crate) class: Class,
    pub(crate) reason: &'static str,
    pub(crate) pattern: Pattern,
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
const PERMISSION_CHANGERS: &[&str] = &["chmod", "chown", "chgrp", "setfacl", "chattr"];
/// Programs that write (or erase) whatever device they are given.
const DISK_WRITERS: &[&str] = &[
    "shred",
    "tee",
    "fdisk",
    "sfdisk",
    "parted",
    "truncate",
    "cryptsetup",
    "badblocks",
];

pub(crate) const RULES: &[Rule] = &[
    catastrophic(
        "recursive or forced rm of /, a system directory, the home directory, ., .. or *",
        targets(&["rm"], RECURSIVE_OR_FORCED, WIPE),
    ),
    catastrophic(
        "recursive chmod, chown or chgrp of /, a system directory or the home directory",
        targets(PERMISSION_CHANGERS, RECURSIVE, SYSTEM_OR_HOME),
    ),
    catastrophic(
        "find deleting under /, a system directory or the home directory",
        Pattern::FindDelete {
            places: SYSTEM_OR_HOME,
            narrowed: Narrowed::StillRefused,
        },
    ),
    catastrophic(
        "mkfs, mkswap, wipefs or blkdiscard formats or wipes a disk",
        Pattern::Program(&["mkfs", "mke2fs", "mkswap", "wipefs", "blkdiscard", "sgdisk"]),
    ),
    catastrophic(
        "writing onto a disk device",
        targets(DISK_WRITERS, &[], DISK_OR_KERNEL),
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
        Pattern::Program(&[
            "shutdown", "reboot", "halt", "poweroff", "kexec", "telinit", "killall5",
        ]),
    ),
    catastrophic(
        "shutting down or restarting the machine",
        command(
            "systemctl",
            &[word("poweroff"), word("reboot"), word("halt")],
        ),
    ),
    catastrophic(
        "changing the machine's runlevel (init 0 stops it, init 6 restarts it)",
        command("init", &[word("0"), word("1"), word("6")]),
    ),
    catastrophic(
        "killing every process (kill -1) or init",
        Pattern::KillEverything,
    ),
    catastrophic(
        "crontab -r removes every cron job of the user",
        command("crontab", &[short('r'), long("remove"), word("/dev/null")]),
    ),
    catastrophic(
        "a fork bomb written in perl",
        command("perl", &[word("fork while fork"), word("fork while fork;")]),
    ),
    destructive(
        "rm-git-dir",
        "deleting a repository's .git directory (its whole history)",
        targets(&["rm"], RECURSIVE_OR_FORCED, &[Place::GitDir]),
    ),
    destructive(
        "find-delete",
        "find deleting everything under a directory",
        Pattern::FindDelete {
            places: &[Place::Here, Place::Everything],
            narrowed: Narrowed::Allowed,
        },
    ),
    destructive(
        "git-push-force",
        "git push that rewrites or deletes remote history (--force, +ref, --delete, --mirror)",
        git(
            "push",
            &[
                long("force"),
                long("force-with-lease"),
                short('f'),
                long("mirror"),
                long("delete"),
                short('d'),
                long("prune"),
                Arg::Starts("+"),
                Arg::Starts(":"),
            ],
            &[],
        ),
    ),
    destructive(
        "git-reset-hard",
        "git reset --hard throws uncommitted changes away",
        git("reset", &[long("hard"), long("merge")], &[]),
    ),
    destructive(
        "git-clean",
        "git clean -f deletes untracked files",
        git(
            "clean",
            &[short('f'), long("force")],
            &[short('n'), long("dry-run")],
        ),
    ),
    destructive(
        "git-discard",
        "git checkout/restore/switch that throws uncommitted changes away",
        git(
            "checkout",
            &[word("--"), word("."), short('f'), long("force")],
            &[],
        ),
    ),
    destructive(
        "git-discard",
        "git checkout/restore/switch that throws uncommitted changes away",
        git("restore", &[], &[long("staged"), short('S')]),
    ),
    destructive(
        "git-discard",
        "git checkout/restore/switch that throws uncommitted changes away",
        git(
            "switch",
            &[long("discard-changes"), short('f'), long("force")],
            &[],
        ),
    ),
    destructive(
        "git-branch-delete",
        "git branch -D deletes a branch even when it is not merged",
        git("branch", &[short('D')], &[]),
    ),
    destructive(
        "git-stash-clear",
        "git stash clear/drop throws stashed work away",
        git("stash", &[word("clear"), word("drop")], &[]),
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

/// `Targets` on every operand.
const fn targets(
    programs: &'static [&'static str],
    flags: &'static [Arg],
    places: &'static [Place],
) -> Pattern {
    Pattern::Targets {
        programs,
        flags,
        operands: Operands::All,
        places,
    }
}

const fn command(program: &'static str, any: &'static [Arg]) -> Pattern {
    Pattern::Command {
        program,
        subcommand: None,
        any,
        unless: &[],
    }
}

const fn git(subcommand: &'static str, any: &'static [Arg], unless: &'static [Arg]) -> Pattern {
    Pattern::Command {
        program: "git",
        subcommand: Some(subcommand),
        any,
        unless,
    }
}

const fn long(name: &'static str) -> Arg {
    Arg::Long(name)
}

const fn short(letter: char) -> Arg {
    Arg::Short(letter)
}

const fn word(word: &'static str) -> Arg {
    Arg::Word(word)
}

/// The names a user may opt in to, each once, in table order.
pub(crate) fn destructive_names() -> Vec<&'static str> {
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
