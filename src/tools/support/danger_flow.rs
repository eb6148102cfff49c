//! What flows between the commands of one script, as far as the text tells: what a command
//! prints (an `echo`'s words, a here-document passed on by `cat`, a download) and what it
//! reads on its stdin (a here-string, a here-document, a pipe).
//!
//! `danger.rs` builds a `Pipeline` for each script it reads and asks here what a shell, `eval`
//! or `xargs` is fed; `danger_unread.rs` asks what a substitution prints. Nothing here judges.

use super::danger_words::Program;
use super::shell_words::{SUBSTITUTED, SimpleCommand};

const DOWNLOADERS: &[&str] = &["curl", "wget", "fetch", "aria2c", "http", "https"];

/// A script one command runs: text we can read, something downloaded, or something whose
/// text is not known before it runs (why).
pub(crate) enum Script {
    Text(String),
    Downloaded,
    Unreadable(String),
}

/// One script's commands with what `read_script` worked out about them, by index.
pub(crate) struct Pipeline<'a> {
    pub(crate) commands: &'a [SimpleCommand],
    pub(crate) runs: &'a [Program],
    /// The command whose output each one reads on its stdin (`a | b`: `b` is fed by `a`).
    pub(crate) feeds: &'a [Option<usize>],
    /// The commands right inside each one's `$( … )`, backticks and `<( … )`.
    pub(crate) children: &'a [Vec<usize>],
}

/// What command `at` reads on its stdin, when we can tell: a here-string, a here-document (an
/// unquoted one's `$HOME` left for `places_of`), or what a command piped into it prints.
pub(crate) fn stdin_of(at: usize, pipeline: &Pipeline) -> Option<Script> {
    match redirected_input(&pipeline.commands[at]) {
        Some(text) => Some(Script::Text(text)),
        None => pipeline.feeds[at].and_then(|f| output_of(f, pipeline)),
    }
}

/// `args` of command `at` with its one substitution's output in place, when it has one and
/// that output is known: `rm -rf "$(pwd)"` is `rm -rf .`.
pub(crate) fn with_printed(at: usize, pipeline: &Pipeline, args: &mut [String]) {
    let substituted = |a: &String| a.matches(SUBSTITUTED).count();
    if let [child] = pipeline.children[at].as_slice()
        && args.iter().map(substituted).sum::<usize>() == 1
        && let Some(Script::Text(printed)) = output_of(*child, pipeline)
        && let Some(arg) = args.iter_mut().find(|a| a.contains(SUBSTITUTED))
    {
        *arg = arg.replace(SUBSTITUTED, printed.trim());
    }
}

/// The text of the last here-string or here-document of a command (the one the shell uses).
fn redirected_input(command: &SimpleCommand) -> Option<String> {
    (command.redirects.iter().rev()).find_map(|r| match r.op.as_str() {
        "<<<" => Some(r.target.clone()),
        "<<" | "<<-" => Some(r.body.clone()),
        _ => None,
    })
}

/// What command `at` prints, when we can tell: an echo's words, a here-document passed on by
/// `cat`, or a download. `tee` and a bare `cat` pass on what they were fed.
pub(crate) fn output_of(mut at: usize, pipeline: &Pipeline) -> Option<Script> {
    loop {
        let (run, command) = (&pipeline.runs[at], &pipeline.commands[at]);
        if DOWNLOADERS.contains(&run.name.as_str()) {
            return Some(Script::Downloaded);
        }
        match run.name.as_str() {
            "echo" => {
                let words = run
                    .args
                    .iter()
                    .skip_while(|a| matches!(a.as_str(), "-n" | "-e" | "-E"));
                return Some(Script::Text(words.cloned().collect::<Vec<_>>().join(" ")));
            }
            // Its format's `\n` and `\t` are the word breaks a shell (or xargs) sees.
            "printf" => {
                let text = run.args.join(" ").replace("\\n", "\n").replace("\\t", "\t");
                return Some(Script::Text(text));
            }
            // Where it is (`"$(pwd)"` is `.`, which the scope resolves after a `cd`), and
            // where a program is (`$(which rm)` is `rm`).
            "pwd" => return Some(Script::Text(".".to_string())),
            "which" => {
                let program = run.args.iter().find(|a| !a.starts_with('-'));
                return program.map(|p| Script::Text(p.clone()));
            }
            "tee" => {}
            "cat" if run.args.iter().all(|a| a.starts_with('-')) => {}
            _ => return None,
        }
        if let Some(text) = redirected_input(command) {
            return Some(Script::Text(text));
        }
        at = pipeline.feeds[at]?;
    }
}
