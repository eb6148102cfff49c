//! What the danger gate cannot read before a command runs, said as such rather than guessed
//! safe: a program that is a variable not set in the command (`$CMD ~`), what a substitution
//! prints used as a program (`$(get_cmd) -rf ~`) or as the script of `eval` or `sh -c`
//! (`eval "$(x)"`), and a here-document nested too deep to read.
//!
//! `danger.rs` asks here for each command whose program is an expansion, and for each script
//! `eval` or a shell's `-c` runs. What can be known is read instead: a variable set earlier in
//! the command (`X=rm; Y=-rf; $X $Y ~` is `rm -rf ~`), what an `echo` prints. A substitution
//! whose output is a file's text (`sh -c "$(cat x.sh)"`) is a script file, which the gate
//! never reads (SECURITY.md says so): not unreadable. Inside arithmetic (`$(( $n + 1 ))`) a
//! first word is a value, not a program.

use super::danger_flow::{Pipeline, Script, output_of};
use super::danger_places::{Scope, expand_variables};
use super::shell_words::{Kind, SUBSTITUTED};

/// Why a here-document marked `Body::Unread` cannot be checked.
pub(crate) const TOO_DEEP_BODY: &str = "a here-document whose end or text cannot be read (nested \
     more than 8 deep, or a delimiter spelled with escapes)";

/// Once the command sets `IFS`, a word with an expansion splits where the text does not show
/// (`IFS=_; x=rm_-rf_~; $x`): such a word is not read.
pub(crate) fn split_by_ifs(scope: &Scope, words: &[String]) -> Option<String> {
    let expands = words.iter().any(|w| w.contains(['$', SUBSTITUTED]));
    (expands && scope.variables.contains_key("IFS")).then(|| {
        "IFS is set in the command, so its expansions split where the text does not show"
            .to_string()
    })
}

/// A program name the text does not spell out: a variable, or what a substitution prints.
pub(crate) fn is_expansion(name: &str) -> bool {
    name.contains(['$', SUBSTITUTED])
}

/// `$FUNCNAME` and its spellings: inside a function, the function's own name.
pub(crate) fn is_funcname(name: &str) -> bool {
    matches!(name, "$FUNCNAME" | "${FUNCNAME}" | "${FUNCNAME[0]}")
}

/// The scripts command `at` runs when its program is an expansion: the program and its
/// arguments with the variables set earlier in place (each argument quoted, as the values are
/// words), what an `echo` in its substitution prints, a download, or unreadable.
pub(crate) fn program_from_expansion(at: usize, pipeline: &Pipeline, scope: &Scope) -> Vec<Script> {
    let (run, command) = (&pipeline.runs[at], &pipeline.commands[at]);
    // In arithmetic an unknown first word is a value; one set earlier may still be a program
    // (`$(($X ~) )` runs `$X` when it is no arithmetic).
    let unreadable = |why: String| match command.kind {
        Kind::Command => vec![Script::Unreadable(why)],
        Kind::MaybeArithmetic => Vec::new(),
    };
    let args = (run.args.iter())
        .flat_map(|arg| expand_variables(arg, scope))
        .map(|arg| format!("'{}'", arg.replace('\'', "'\\''")));
    let args = args.collect::<Vec<_>>().join(" ");
    let name = run.name.as_str();
    if name.contains(SUBSTITUTED) {
        let printed: Vec<Option<Script>> = (pipeline.children[at].iter())
            .map(|&child| output_of(child, pipeline))
            .collect();
        if printed
            .iter()
            .any(|p| matches!(p, Some(Script::Downloaded)))
        {
            return vec![Script::Downloaded];
        }
        let whole = name.chars().eq([SUBSTITUTED]);
        return match printed.as_slice() {
            [Some(Script::Text(program))] if whole => {
                vec![Script::Text(format!("{program} {args}"))]
            }
            _ => unreadable(format!(
                "its program is what a substitution prints ({}), which is not known before it runs",
                shown(name)
            )),
        };
    }
    let values = expand_variables(name, scope).into_iter();
    let known: Vec<Script> = (values.filter(|value| value != name))
        .map(|value| Script::Text(format!("{value} {args}")))
        .collect();
    if known.is_empty() {
        return unreadable(format!(
            "its program is {name}, a variable not set in the command"
        ));
    }
    known
}

/// The script `eval` or `sh -c` (command `at`) runs, from its text. What its substitutions
/// print was read as scripts of their own by the caller; one whose output is not known (and is
/// no file's text) makes it unreadable, added to `scripts`.
pub(crate) fn printed_script(
    text: String,
    at: usize,
    pipeline: &Pipeline,
    scripts: &mut Vec<Script>,
) -> String {
    if !text.contains(SUBSTITUTED) {
        return text;
    }
    // From a variable that held a substitution's output (`x="$(…)"; eval "$x"`).
    if pipeline.children[at].is_empty() {
        let why = "it runs what a substitution printed earlier in the command";
        scripts.push(Script::Unreadable(why.to_string()));
    }
    for &child in &pipeline.children[at] {
        let run = &pipeline.runs[child];
        let reads_file = run.name == "cat" && run.args.iter().any(|a| !a.starts_with('-'));
        if output_of(child, pipeline).is_none() && !reads_file {
            scripts.push(Script::Unreadable(format!(
                "{} runs what `{}` prints, which is not known before it runs",
                pipeline.runs[at].name,
                shown(&run.name)
            )));
        }
    }
    text.replace(SUBSTITUTED, " ")
}

/// A word as the user wrote it, near enough: a substitution shows as `$(…)`.
fn shown(word: &str) -> String {
    word.replace(SUBSTITUTED, "$(…)")
}
