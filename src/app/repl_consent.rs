//! The interactive session's consent question: what the call would do (its preview, made in
//! `tools/preview.rs`) shown short under the call line, the question, and the answer. What a
//! "y" allows is exactly what was shown: when the short view is not all of it, the question
//! line says how much it shows and offers `[v] view all`, and a "y" (or "a") is refused until
//! `v` has printed all of it, wrapped, never cut. Where no rule could allow the call (a bash
//! line writing a file by redirection), `[a]` is not offered and the question line says why
//! (`consent_rules/always.rs`). The trust question (`repl_trust.rs`) follows the same rule with
//! the same words.
//!
//! `repl.rs` calls `ask` from the agent's `ask` closure, on the main thread. How text is shown
//! (escaped, blank runs counted, cut or wrapped) is `tools/support/shown.rs`; which calls are
//! asked about is `core/consent.rs`. Nothing here decides what runs.

use crate::app::markdown::{DIM, GREEN, RED};
use crate::app::result_preview;
use crate::app::terminal::Display;
use crate::core::consent::Answer;
use crate::extras::consent_rules::always::NOT_OFFERED;
use crate::tools::support::shown::{self, FALLBACK_WIDTH};
use crate::tools::support::text::printable;
use rustyline::DefaultEditor;

/// Said when "y" comes before all of it was on screen; the question is asked again.
pub(crate) const NOT_ALL_SHOWN: &str =
    "(not all of it was shown yet: [v] shows all of it, then [y] allows it)";

/// The call the question is about; `always` says what `[a]` allows (a rule, the tool).
pub(crate) struct Call<'a> {
    pub(crate) name: &'a str,
    pub(crate) summary: &'a str,
    pub(crate) always: &'a str,
}

/// How much of what a "y" would allow has been on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Viewed {
    All,
    /// What the short view left out, as the question line says it.
    Part(String),
}

/// Lines of a preview shown before the question; an edit's diff gets more.
fn short_lines(name: &str) -> usize {
    match name {
        "edit_file" => 14,
        _ => 8,
    }
}

/// The consent question. Anything but y/a/n/v asks again; Ctrl+C or Ctrl+D means no.
pub(crate) fn ask(
    editor: &mut DefaultEditor,
    display: &Display,
    call: Call,
    preview: Option<&str>,
) -> Answer {
    display.spinner.stop();
    let mut viewed = match preview {
        Some(preview) => show_short(display, call.name, preview),
        None => Viewed::All,
    };
    let answer = loop {
        let typed = editor
            .readline(&question(&call, &viewed))
            .map(|a| a.trim().to_ascii_lowercase());
        let all_shown = viewed == Viewed::All;
        let never = call.always.strip_prefix(NOT_OFFERED);
        match typed.as_deref() {
            Ok("a" | "always") if let Some(why) = never => {
                display.note(&format!(
                    "(\"always\" is not offered: {why}; [y] allows it once)"
                ));
            }
            Ok("y" | "yes" | "a" | "always") if !all_shown => display.note(NOT_ALL_SHOWN),
            Ok("y" | "yes") => break Answer::Once,
            Ok("a" | "always") => break Answer::Always,
            Ok("v" | "view") => {
                show_all(display, call.name, preview.unwrap_or(""), width(editor));
                viewed = Viewed::All;
            }
            Ok("n" | "no") | Err(_) => break Answer::Deny,
            Ok(_) => continue,
        }
    };
    // The call runs next (or the model is told no): either way, something is being waited for.
    display.spinner.start(call.name);
    answer
}

/// The question line: what is not shown yet, if anything, comes before the choices.
fn question(call: &Call, viewed: &Viewed) -> String {
    let Call {
        name,
        summary,
        always,
    } = call;
    let part = match viewed {
        Viewed::All => String::new(),
        Viewed::Part(part) => format!("({part} — [v] view all)  "),
    };
    let question = match always.strip_prefix(NOT_OFFERED) {
        Some(why) => format!(
            "Allow {name}({summary})? ({NOT_OFFERED}{why})  {part}[y] allow once  [n] deny: "
        ),
        None => format!("Allow {name}({summary})? {part}[y] allow once  [a] {always}  [n] deny: "),
    };
    // The model chose the summary: a `\r` or an escape in it must not redraw the question.
    printable(&question)
}

/// The first lines of `preview` (a diff's lines in colour); whether that was all of it.
fn show_short(display: &Display, name: &str, preview: &str) -> Viewed {
    let view = shown::short(preview, short_lines(name));
    for line in &view.lines {
        show_line(display, name, line);
    }
    match view.part() {
        None => Viewed::All,
        Some(part) => {
            display.note_in(DIM, &format!("  … {part}: [v] view all"));
            Viewed::Part(part)
        }
    }
}

/// All of `preview`, long lines wrapped at `width`, between two rules saying where it is.
fn show_all(display: &Display, name: &str, preview: &str, width: usize) {
    let lines = shown::full(preview, width.saturating_sub(2));
    display.note_in(DIM, "  ── all of it (a long line goes on after ↪) ──");
    for line in &lines {
        show_line(display, name, line);
    }
    display.note_in(DIM, "  ── end ──");
}

fn show_line(display: &Display, name: &str, line: &str) {
    let tone = result_preview::tone(name, line);
    let color = [GREEN, RED, DIM][tone as usize];
    display.note_parts(&[("", "  "), (color, line)]);
}

/// The terminal's width, for wrapping; `FALLBACK_WIDTH` when it is not a terminal.
pub(crate) fn width(editor: &mut DefaultEditor) -> usize {
    let columns = editor.dimensions().map(|(columns, _)| usize::from(columns));
    columns.filter(|&c| c > 0).unwrap_or(FALLBACK_WIDTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_says_what_is_not_shown_yet() {
        let call = Call {
            name: "bash",
            summary: "a\u{202e}b",
            always: "always allow this tool",
        };
        let whole = question(&call, &Viewed::All);
        assert_eq!(
            whole,
            r"Allow bash(a\u{202e}b)? [y] allow once  [a] always allow this tool  [n] deny: "
        );
        let part = question(&call, &Viewed::Part("showing 8 of 37 lines".into()));
        assert!(
            part.contains("? (showing 8 of 37 lines — [v] view all)  [y] allow once"),
            "{part}"
        );
        let never = Call {
            always: "no [a]: no rule fits this line",
            ..call
        };
        assert_eq!(
            question(&never, &Viewed::All),
            r"Allow bash(a\u{202e}b)? (no [a]: no rule fits this line)  [y] allow once  [n] deny: "
        );
    }
}
