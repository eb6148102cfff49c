//! Notes on what changed, so no earlier byte of a request moves. A provider's prompt cache
//! serves a request's prefix only when it repeats the previous request byte for byte, so the
//! system prompt describes the session as it started (`core/prompt.rs`) and stays the same;
//! what changes later (the working directory after a `cd`, plan mode, the todo list, the date,
//! the project's instructions) is told in a `[session state]` note that the loop adds to the
//! end of the message it is about to append: a user's task or a batch's last result. After a
//! compaction every change since the start is told again, since the notes may be gone with
//! what was summarised. It decides the text only; the loop adds it (`Agent::with_state_note`).
//! The notes are the core's: the prompt promises them to every agent, plain or not.

use crate::core::consent::Plan;
use crate::core::message::{Message, Role};
use crate::core::prompt::Situation;
use crate::extras::Extras;
use crate::tools::support::text::today_utc;
use crate::tools::support::todos::{self, Todo};
use std::path::{Path, PathBuf};

/// What plan mode means, told when it is switched on.
const PLAN_MODE: &str = "PLAN MODE IS ON. Do not change anything: bash, write_file, edit_file \
and agent will be refused. Investigate with read_file, glob and grep, then present a numbered \
plan and stop. The user will approve it before you carry it out.";
/// What starts every note (and what `forget` looks for).
const HEADING: &str = "[session state]";
const PLAN_OFF: &str = "Plan mode is off: you may change files and run commands again.";

/// The situation as it stands now (today's date).
pub(crate) fn situation(cwd: &Path, plan: Plan, todos: &[Todo], instructions: String) -> Situation {
    Situation {
        cwd: cwd.to_path_buf(),
        date: today_utc(),
        plan,
        todos: todos.to_vec(),
        instructions,
    }
}

/// Per agent (a sub-agent starts with nothing told); `Agent` holds one.
#[derive(Debug, Clone, Default)]
pub(crate) struct StateNotes {
    /// What the system prompt describes: the first situation asked about.
    start: Option<Situation>,
    /// What the model was last told; `None` when only the system prompt holds.
    told: Option<Situation>,
    /// The notes may be gone or wrong: the next one says where and when the session is.
    lost: bool,
}

impl StateNotes {
    /// The system prompt's situation (`start`), the project's instructions read through `extras`.
    pub(crate) fn at_start(
        &mut self,
        cwd: &Path,
        plan: Plan,
        todos: &[Todo],
        extras: &mut Extras,
    ) -> &Situation {
        self.start(|| situation(cwd, plan, todos, extras.instructions(cwd)))
    }

    /// What changed since the model was last told (`note`), as it stands now.
    pub(crate) fn now(
        &mut self,
        cwd: &Path,
        plan: Plan,
        todos: &[Todo],
        extras: &mut Extras,
    ) -> Option<String> {
        self.note(situation(cwd, plan, todos, extras.instructions(cwd)))
    }

    /// The situation the system prompt describes: the first one asked for (`now` is called
    /// only then), kept for the session.
    pub(crate) fn start(&mut self, now: impl FnOnce() -> Situation) -> &Situation {
        self.start.get_or_insert_with(now)
    }

    /// What changed since the model was last told, as a note to end a message with.
    pub(crate) fn note(&mut self, now: Situation) -> Option<String> {
        let start = self.start.get_or_insert_with(|| now.clone());
        let told = self.told.take();
        let mut told = told.unwrap_or_else(|| as_the_prompt_says(start));
        if std::mem::take(&mut self.lost) {
            (told.cwd, told.date) = (PathBuf::new(), String::new());
        }
        let note = changes(&told, &now);
        self.told = Some(now);
        note
    }

    /// The history was rewritten (a compaction, `/clear`) or resumed: what the notes in it say
    /// may be gone or no longer hold. If any note is left in `history`, the next one says where
    /// and when the session is, besides what differs from the start.
    pub(crate) fn forget(&mut self, history: &[Message]) {
        let noted = |m: &Message| m.content.as_deref().is_some_and(|c| c.contains(HEADING));
        // The system prompt names the heading too: it is not a note.
        let mut messages = history.iter().filter(|m| m.role != Role::System);
        (self.told, self.lost) = (None, messages.any(noted));
    }
}

/// What the model knows from the system prompt alone: plan mode off, no todo list.
fn as_the_prompt_says(start: &Situation) -> Situation {
    Situation {
        plan: Plan::Off,
        todos: Vec::new(),
        ..start.clone()
    }
}

/// One line (or block) per thing that differs, under one heading; `None` when nothing does.
fn changes(told: &Situation, now: &Situation) -> Option<String> {
    let mut lines = Vec::new();
    if told.cwd != now.cwd {
        lines.push(format!("Working directory: {}", now.cwd.display()));
    }
    if told.date != now.date {
        lines.push(format!("Date: {}", now.date));
    }
    if told.plan != now.plan {
        lines.push(match now.plan {
            Plan::On => PLAN_MODE.to_string(),
            Plan::Off => PLAN_OFF.to_string(),
        });
    }
    if told.todos != now.todos {
        let list = match now.todos.is_empty() {
            true => "(empty)".to_string(),
            false => todos::render(&now.todos),
        };
        lines.push(format!("Current todo list:\n{list}"));
    }
    if told.instructions != now.instructions {
        let text = now.instructions.trim();
        let text = if text.is_empty() { "(none)" } else { text };
        lines.push(format!(
            "The project instructions changed; they now read:\n{text}"
        ));
    }
    (!lines.is_empty()).then(|| format!("\n\n{HEADING}\n{}", lines.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::support::todos::Status;

    fn at(dir: &str) -> Situation {
        Situation {
            cwd: PathBuf::from(dir),
            date: "2026-12-01".to_string(),
            plan: Plan::Off,
            todos: Vec::new(),
            instructions: String::new(),
        }
    }

    #[test]
    fn only_what_changed_is_told_and_only_once() {
        let mut notes = StateNotes::default();
        assert_eq!(notes.start(|| at("/p")).cwd, PathBuf::from("/p"));
        assert_eq!(notes.note(at("/p")), None);
        let moved = notes.note(at("/p/src")).unwrap();
        assert_eq!(moved, "\n\n[session state]\nWorking directory: /p/src");
        assert_eq!(notes.note(at("/p/src")), None);
        let mut planning = at("/p/src");
        planning.plan = Plan::On;
        planning.todos = vec![Todo {
            content: "read".into(),
            status: Status::Pending,
        }];
        let note = notes.note(planning.clone()).unwrap();
        assert!(
            note.contains("PLAN MODE IS ON") && note.contains("[ ] read"),
            "{note}"
        );
        assert!(!note.contains("Working directory"), "{note}");
        let note = notes.note(at("/p/src")).unwrap();
        assert!(
            note.contains("Plan mode is off") && note.contains("(empty)"),
            "{note}"
        );
        // The system prompt still describes the start.
        assert_eq!(notes.start(|| at("/elsewhere")).cwd, PathBuf::from("/p"));
    }

    #[test]
    fn after_a_rewrite_every_change_since_the_start_is_told_again() {
        let mut notes = StateNotes::default();
        notes.start(|| at("/p"));
        assert!(notes.note(at("/p/a")).is_some());
        assert_eq!(notes.note(at("/p/a")), None);
        let noted = [Message::user(
            "ls\n\n[session state]\nWorking directory: /p/a",
        )];
        notes.forget(&noted);
        let again = notes.note(at("/p/a")).unwrap();
        assert!(again.contains("Working directory: /p/a"), "{again}");
        notes.forget(&noted);
        let back = notes.note(at("/p")).unwrap();
        assert!(
            back.contains("Working directory: /p\nDate: 2026-12-01"),
            "{back}"
        );
        assert_eq!(notes.note(at("/p")), None);
        // With no note left (a `/clear`), the system prompt says it all.
        notes.forget(&[Message::user("hi")]);
        assert_eq!(notes.note(at("/p")), None);
    }

    #[test]
    fn plan_mode_on_from_the_start_is_told_in_the_first_note() {
        let mut notes = StateNotes::default();
        let mut start = at("/p");
        start.plan = Plan::On;
        notes.start(|| start.clone());
        assert!(notes.note(start).unwrap().contains("PLAN MODE IS ON"));
    }
}
