//! What the user sees: streamed answers (as Markdown, `markdown.rs`, when colour is allowed),
//! dimmed reasoning, tool lines, result previews and coloured diffs (the lines picked in
//! `result_preview.rs`), a spinner while nothing moves.
//!
//! The binary hands every agent `Event` to `Display::show`. Answer text goes to stdout, the
//! rest to stderr. Colour only on a terminal and never with `NO_COLOR` or `TERM=dumb`. It makes no decision
//! about the conversation; it only prints. What a provider, tool or file sent reaches stderr,
//! and stdout on a terminal, only through `text::printable` (in `paint`, or the answer's own
//! renderer): only this file's styles are escapes. stdout in a pipe is the model's bytes.
//! Over 300 lines (about 320) on purpose: every byte that reaches the terminal passes here,
//! so the sanitising is read and audited in one file.

use crate::app::markdown::{CYAN, DIM, GREEN, Markdown, RED, RESET, YELLOW};
use crate::app::result_preview;
use crate::app::spinner::Spinner;
use crate::core::event::{CUT_OFF_MESSAGE, Event, Finish, ROUND_CAP_MESSAGE, ResultKind};
use crate::tools::support::text::{cut_at_word, printable};
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether tool results are previewed under their call (interactive, demo) or not (`-p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    Calls,
    CallsAndResults,
}

/// Where the answer goes: streamed (as Markdown with colour), or printed once at the end (a pipe).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AnswerShown {
    Live,
    AtTheEnd,
}

pub struct Display {
    show: Show,
    answer: AnswerShown,
    markdown: Option<RefCell<Markdown>>,
    color: bool,
    /// Something was printed without its newline yet (stdout text or stderr reasoning).
    open_line: Cell<Open>,
    pub(crate) spinner: Spinner,
    /// Call lines shown whose results have not come yet, oldest first: a batch shows all its
    /// calls, then all its results, so a result names its call unless it follows it directly.
    calls: RefCell<VecDeque<String>>,
    /// Results shown since the last call line.
    results_since_call: Cell<usize>,
    /// The answer so far when it is printed at the end: shown if the run is interrupted.
    partial: RefCell<String>,
    /// stdout or stderr was closed (`corecoder -p … | head -1`): nothing more is printed.
    closed: Cell<bool>,
    /// Set when the output closes, so the run it shows stops at its next safe point.
    stop: OnceCell<Arc<AtomicBool>>,
}

/// Where a line goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Out,
    Err,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Nothing,
    Text,
    Reasoning,
}

impl Display {
    pub fn new(show: Show) -> Display {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let colour_allowed = !no_color && !crate::app::spinner::dumb_terminal();
        let stdout_tty = std::io::stdout().is_terminal();
        Display {
            show,
            answer: match stdout_tty {
                true => AnswerShown::Live,
                false => AnswerShown::AtTheEnd,
            },
            markdown: (stdout_tty && colour_allowed).then(RefCell::default),
            color: std::io::stderr().is_terminal() && colour_allowed,
            open_line: Cell::new(Open::Nothing),
            spinner: Spinner::on_stderr(),
            calls: RefCell::new(VecDeque::new()),
            results_since_call: Cell::new(0),
            partial: RefCell::new(String::new()),
            closed: Cell::new(false),
            stop: OnceCell::new(),
        }
    }

    /// When stdout or stderr closes, set `flag` (the agent's cancel flag): a reader that went
    /// away has no use for the rest of the run.
    pub(crate) fn stop_on_closed_output(&self, flag: Arc<AtomicBool>) {
        let _ = self.stop.set(flag);
    }

    /// Whether the output was closed; the run then ends quietly with exit code 141, as a
    /// program killed by SIGPIPE would.
    pub(crate) fn output_closed(&self) -> bool {
        self.closed.get()
    }

    /// Every print goes through here: a write that fails (the reader hung up) closes the
    /// display instead of panicking, as `print!` would.
    fn write(&self, stream: Stream, text: &str) {
        if self.closed.get() {
            return;
        }
        let written = match stream {
            Stream::Out => {
                let mut stdout = std::io::stdout().lock();
                stdout
                    .write_all(text.as_bytes())
                    .and_then(|()| stdout.flush())
            }
            Stream::Err => std::io::stderr().write_all(text.as_bytes()),
        };
        if written.is_err() {
            self.closed.set(true);
            if let Some(flag) = self.stop.get() {
                flag.store(true, Ordering::Relaxed);
            }
        }
    }

    pub fn show(&self, event: Event) {
        if !matches!(event, Event::Requesting { .. } | Event::Text(_)) {
            self.spinner.stop();
        }
        match event {
            Event::Requesting { .. } => self.spinner.start("thinking"),
            Event::Text(text) => self.answer_text(text),
            Event::Reasoning(text) => {
                // Without colour nothing else tells reasoning from the answer: a marker does.
                if !self.color && self.open_line.get() != Open::Reasoning {
                    self.close_line_unless(Open::Nothing);
                    self.write(Stream::Err, "[reasoning] ");
                }
                self.close_line_unless(Open::Reasoning);
                self.write(Stream::Err, &self.paint(DIM, text));
                self.open_line.set(Open::Reasoning);
            }
            Event::Retry { attempt, wait, why } => {
                let secs = wait.as_secs_f64();
                self.retrying(&format!("[retry {attempt} in {secs:.1}s: {why}]"));
            }
            Event::Fallback { model, why } => {
                self.retrying(&format!("[switching to model {model}: {why}]"));
            }
            Event::ToolCall { name, summary } => {
                if self.results_since_call.replace(0) > 0 {
                    self.calls.borrow_mut().clear();
                }
                let call = format!("{name}({summary})");
                self.calls.borrow_mut().push_back(call.clone());
                self.close_line_unless(Open::Nothing);
                self.line(&self.paint(CYAN, &format!("> {call}")));
                self.spinner.start(name);
            }
            Event::ToolResult { name, text, kind } => self.result(name, text, kind),
            // A call's preview is its consent question's to show (`repl_consent.rs`).
            Event::Proposed { .. } | Event::Replied { .. } | Event::CallReady(_) => {}
            Event::Notice(text) => {
                self.close_line_unless(Open::Nothing);
                self.line(&self.paint(YELLOW, text));
            }
        }
    }

    /// The request is sent again: the answer so far is void (what was shown stays shown).
    fn retrying(&self, text: &str) {
        self.partial.borrow_mut().clear();
        self.close_line_unless(Open::Nothing);
        self.line(&self.paint(YELLOW, text));
        self.spinner.start("retrying");
    }

    /// A call's result: previewed (interactive, demo), or in `-p` one line if the call did not
    /// run or failed, so it does not look like one that ran. Named after its call unless it
    /// comes right under that call's line.
    fn result(&self, name: &str, text: &str, kind: ResultKind) {
        let label = self.calls.borrow_mut().pop_front().unwrap_or_default();
        let shown_since = self.results_since_call.get();
        let directly_under = shown_since == 0 && self.calls.borrow().is_empty();
        self.results_since_call.set(shown_since + 1);
        let name_it = |prefix: &str| match directly_under {
            true => prefix.to_string(),
            false => format!("{prefix}{label}: "),
        };
        if self.show == Show::CallsAndResults {
            if !directly_under {
                self.line(&self.paint(DIM, name_it("  ").trim_end()));
            }
            return self.preview(name, text);
        }
        if kind != ResultKind::Ran {
            let first = cut_at_word(text.lines().next().unwrap_or(""), 160);
            let line = format!("{}{first}", name_it("  ↳ "));
            self.line(&self.paint(YELLOW, &line));
        }
    }

    /// End a task's output; returns the `-p` exit code for it.
    pub fn finish(&self, finish: &Finish) -> i32 {
        self.spinner.stop();
        let code = match finish {
            Finish::Answer(text) | Finish::CutOff(text) => {
                match self.answer {
                    AnswerShown::Live => self.close_line_unless(Open::Nothing),
                    AnswerShown::AtTheEnd => self.write(Stream::Out, &format!("{text}\n")),
                }
                if let Finish::CutOff(_) = finish {
                    self.line(&self.paint(YELLOW, CUT_OFF_MESSAGE));
                    return 6;
                }
                0
            }
            Finish::RoundCap => {
                self.close_line_unless(Open::Nothing);
                self.line(&self.paint("", ROUND_CAP_MESSAGE));
                3
            }
        };
        match self.output_closed() {
            true => 141,
            false => code,
        }
    }

    /// After Ctrl+C: the part of the answer that arrived, if it was held back for the end
    /// (a pipe), so a script still gets what the user saw stream in.
    pub(crate) fn interrupted(&self) {
        let partial = std::mem::take(&mut *self.partial.borrow_mut());
        if !partial.is_empty() {
            self.write(Stream::Out, &format!("{partial}\n"));
        }
    }

    /// A line on stderr for the user (errors, command output), after any open line.
    pub fn note(&self, text: &str) {
        self.note_parts(&[("", text)]);
    }

    /// A note in one style (`markdown::DIM`, ...).
    pub(crate) fn note_in(&self, style: &str, text: &str) {
        self.note_parts(&[(style, text)]);
    }

    /// A note of pieces, each in its style ("" for none), every piece made printable.
    pub(crate) fn note_parts(&self, parts: &[(&str, &str)]) {
        self.spinner.stop();
        self.close_line_unless(Open::Nothing);
        let line: String = parts.iter().map(|(s, text)| self.paint(s, text)).collect();
        self.line(&line);
    }

    /// One line on stderr.
    fn line(&self, text: &str) {
        self.write(Stream::Err, &format!("{text}\n"));
    }

    /// `text` made printable (whoever sent it), in `color` where colour is on: the one way
    /// text reaches stderr, so the only escapes there are these styles.
    fn paint(&self, color: &str, text: &str) -> String {
        let text = printable(text);
        match self.color && !color.is_empty() {
            true => format!("{color}{text}{RESET}"),
            false => text,
        }
    }

    /// Text held back (for the end, or until its line ends) leaves the spinner going.
    fn answer_text(&self, text: &str) {
        let shown = match (&self.markdown, self.answer) {
            (_, AnswerShown::AtTheEnd) => return self.partial.borrow_mut().push_str(text),
            (Some(markdown), _) => markdown.borrow_mut().feed(text),
            // NO_COLOR on a terminal: not drawn, but still a terminal.
            (None, _) => printable(text),
        };
        if !shown.is_empty() {
            self.spinner.stop();
        }
        self.close_line_unless(Open::Text);
        self.write(Stream::Out, &shown);
        self.open_line.set(Open::Text);
    }

    /// Finish a half-printed line unless it is of the kind about to continue it.
    fn close_line_unless(&self, continuing: Open) {
        let open = self.open_line.get();
        if open == Open::Nothing || open == continuing {
            return;
        }
        match open {
            Open::Text => {
                let held = self.markdown.as_ref().map(|m| m.borrow_mut().finish());
                self.write(Stream::Out, held.as_deref().unwrap_or("\n"));
            }
            _ => self.write(Stream::Err, "\n"),
        }
        self.open_line.set(Open::Nothing);
    }

    /// The first lines of a result, dimmed; a diff's `+`/`-` lines in colour.
    fn preview(&self, name: &str, text: &str) {
        let (lines, more) = result_preview::lines(name, text);
        for (tone, line) in lines {
            let color = [GREEN, RED, DIM][tone as usize];
            self.line(&format!("  {}", self.paint(color, &line)));
        }
        if more > 0 {
            self.line(&self.paint(DIM, &format!("  … {more} more lines")));
        }
    }
}
