//! The kinds of pattern the danger table (`danger_rules.rs`) is written in, and whether one
//! command matches a pattern: each kind is read the same way for every rule that uses it.
//!
//! `danger.rs` calls `matches` with each rule's pattern for every command it finds, with the
//! program found past its wrappers (`danger_words.rs`) and the scope that resolves paths
//! (`danger_places.rs`). It only looks at that one command; each check is linear in its words.
//! It does not know the table: the rules import these kinds, never the other way.

use super::danger_places::{Place, Scope, is_glob_of_everything, places_of};
use super::danger_words::Program;
use super::shell_words::Redirect;

/// What a rule looks for in one command.
pub(crate) enum Pattern {
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
    /// `program` (with `subcommand` as its first operand, if given, past git's own options),
    /// one of `any` among its arguments (if any are listed), and none of `unless`.
    Command {
        program: &'static str,
        subcommand: Option<&'static str>,
        any: &'static [Arg],
        unless: &'static [Arg],
    },
    /// `kill` aimed at every process (`-1`) or at init (`1`).
    KillEverything,
    /// `find PATHS … -delete` (or `-exec rm`) at one of `places`.
    FindDelete {
        places: &'static [Place],
        narrowed: Narrowed,
    },
    /// Output redirected (`>`, `>>`, `&>`) onto one of `places`.
    RedirectOnto(&'static [Place]),
}

/// One argument shape.
pub(crate) enum Arg {
    /// `--name` or `--name=…`.
    Long(&'static str),
    /// The letter in a cluster of short options: `f` in `-f`, `-fdx`.
    Short(char),
    /// This exact word.
    Word(&'static str),
    /// A word (not an option) starting with this: `+main` in `git push origin +main`.
    Starts(&'static str),
}

/// Does a test such as `-name` or `-mtime` make a `find … -delete` acceptable?
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Narrowed {
    /// No: it is refused however narrow.
    StillRefused,
    /// Yes: only a delete of everything under the path is caught.
    Allowed,
}

/// Which arguments of a `Targets` rule are looked at.
#[derive(Clone, Copy)]
pub(crate) enum Operands {
    All,
    /// The destination: `cp a b /dev/sda`.
    Last,
    /// `dd`'s `of=PATH`.
    DdOutput,
}

/// Does one command (its program past wrappers, its redirects) match `pattern`?
pub(crate) fn matches(
    pattern: &Pattern,
    run: &Program,
    redirects: &[Redirect],
    scope: &Scope,
) -> bool {
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
            if name != *program {
                return false;
            }
            let args = match subcommand {
                Some(sub) => match git_subcommand(args) {
                    Some((found, rest)) if found == *sub => rest,
                    _ => return false,
                },
                None => args,
            };
            (any.is_empty() || any.iter().any(|a| has(args, a)))
                && !unless.iter().any(|a| has(args, a))
        }
        Pattern::KillEverything => name == "kill" && kills_everything(args),
        Pattern::FindDelete { places, narrowed } => {
            name == "find" && find_deletes(args, scope, places, *narrowed)
        }
        Pattern::RedirectOnto(places) => redirects.iter().any(|r| {
            r.op.contains('>')
                && places_of(&r.target, scope)
                    .iter()
                    .any(|p| places.contains(p))
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
        Arg::Long(long) => a.strip_prefix("--").is_some_and(|l| {
            l == *long || l.strip_prefix(long).is_some_and(|r| r.starts_with('='))
        }),
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
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-regex",
    "-iregex",
    "-newer",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-size",
    "-empty",
    "-user",
    "-group",
    "-perm",
    "-links",
    "-inum",
    "-samefile",
    "-lname",
];

fn find_deletes(args: &[String], scope: &Scope, places: &[Place], narrowed: Narrowed) -> bool {
    let paths_end = args
        .iter()
        .position(|a| a.starts_with(['-', '(', '!']))
        .unwrap_or(args.len());
    let (paths, expression) = args.split_at(paths_end);
    let runs_rm = |w: &[String]| {
        let program = w[1].rsplit('/').next().unwrap_or_default();
        (w[0].starts_with("-exec") || w[0].starts_with("-ok")) && matches!(program, "rm" | "shred")
    };
    let deletes = expression.iter().any(|a| a == "-delete") || expression.windows(2).any(runs_rm);
    // `-name '*'` matches everything: it narrows nothing.
    let narrows = |w: &[String]| {
        FIND_TESTS.contains(&w[0].as_str()) && !w.get(1).is_some_and(|v| is_glob_of_everything(v))
    };
    let has_test = (expression.iter().enumerate()).any(|(i, _)| narrows(&expression[i..]));
    let here = [".".to_string()];
    let paths = if paths.is_empty() { &here[..] } else { paths };
    let at_place = paths.iter().any(|p| {
        places_of(p, scope)
            .iter()
            .any(|place| places.contains(place))
    });
    deletes && at_place && !(narrowed == Narrowed::Allowed && has_test)
}
