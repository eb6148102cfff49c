//! What the user sees: streamed answers, dimmed reasoning, tool lines, result previews,
//! coloured diffs and a spinner while nothing else moves.
//!
//! The binary hands every agent `Event` to `Display::show`. Answer text goes to stdout, the
//! rest to stderr. Colour only on a terminal and never with `NO_COLOR`. It makes no decision
//! about the conversation; it only prints.

use crate::agent::{CUT_OFF_MESSAGE, Event, Finish, ROUND_CAP_MESSAGE};
use crate::error::Error;
use crate::llm;
use crossbeam_channel::{Receiver, RecvTimeoutError};
use std::cell::Cell;
use std::io::{IsTerminal, Write};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Whether tool results are previewed under their call (interactive, demo) or not (`-p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    Calls,
    CallsAndResults,
}

/// Where the answer goes: streamed as it arrives, or printed once at the end (a pipe).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Live,
    AtTheEnd,
}

pub struct Display {
    show: Show,
    answer: Answer,
    color: bool,
    /// Something was printed without its newline yet (stdout text or stderr reasoning).
    open_line: Cell<Open>,
    pub spinner: Spinner,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Nothing,
    Text,
    Reasoning,
}

const PREVIEW_LINES: usize = 4;
const DIFF_PREVIEW_LINES: usize = 14;

impl Display {
    pub fn new(show: Show) -> Display {
        let stderr_tty = std::io::stderr().is_terminal();
        Display {
            show,
            answer: match std::io::stdout().is_terminal() {
                true => Answer::Live,
                false => Answer::AtTheEnd,
            },
            color: stderr_tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            open_line: Cell::new(Open::Nothing),
            spinner: Spinner::new(stderr_tty),
        }
    }

    pub fn show(&self, event: Event) {
        if !matches!(event, Event::Requesting { .. }) {
            self.spinner.stop();
        }
        match event {
            Event::Requesting { .. } => self.spinner.start("thinking"),
            Event::Llm(llm::Event::Text(text)) => self.answer_text(text),
            Event::Llm(llm::Event::Reasoning(text)) => {
                self.close_line_unless(Open::Reasoning);
                eprint!("{}", self.paint(DIM, text));
                self.open_line.set(Open::Reasoning);
            }
            Event::Llm(llm::Event::Retry { attempt, wait, why }) => {
                self.close_line_unless(Open::Nothing);
                let secs = wait.as_secs_f64();
                eprintln!(
                    "{}",
                    self.paint(YELLOW, &format!("[retry {attempt} in {secs:.1}s: {why}]"))
                );
                self.spinner.start("retrying");
            }
            Event::Llm(llm::Event::Fallback { model, why }) => {
                self.close_line_unless(Open::Nothing);
                let text = format!("[switching to model {model}: {why}]");
                eprintln!("{}", self.paint(YELLOW, &text));
                self.spinner.start("retrying");
            }
            Event::ToolCall { name, summary } => {
                self.close_line_unless(Open::Nothing);
                eprintln!("{}", self.paint(CYAN, &format!("> {name}({summary})")));
                self.spinner.start(name);
            }
            Event::ToolResult { name, text } if self.show == Show::CallsAndResults => {
                self.preview(name, text);
            }
            Event::ToolResult { .. } | Event::Replied { .. } => {}
            Event::Llm(llm::Event::CallReady(_)) => {}
            Event::Notice(text) => {
                self.close_line_unless(Open::Nothing);
                eprintln!("{}", self.paint(YELLOW, text));
            }
        }
    }

    /// End a task's output; returns the `-p` exit code for it.
    pub fn finish(&self, finish: &Finish) -> i32 {
        self.spinner.stop();
        match finish {
            Finish::Answer(text) | Finish::CutOff(text) => {
                match self.answer {
                    Answer::Live => self.close_line_unless(Open::Nothing),
                    Answer::AtTheEnd => println!("{text}"),
                }
                if let Finish::CutOff(_) = finish {
                    eprintln!("{}", self.paint(YELLOW, CUT_OFF_MESSAGE));
                    return 6;
                }
                0
            }
            Finish::RoundCap => {
                self.close_line_unless(Open::Nothing);
                eprintln!("{ROUND_CAP_MESSAGE}");
                3
            }
        }
    }

    /// A line on stderr for the user (errors, command output), after any open line.
    pub fn note(&self, text: &str) {
        self.spinner.stop();
        self.close_line_unless(Open::Nothing);
        eprintln!("{text}");
    }

    pub fn paint(&self, color: &str, text: &str) -> String {
        match self.color {
            true => format!("{color}{text}{RESET}"),
            false => text.to_string(),
        }
    }

    fn answer_text(&self, text: &str) {
        if self.answer == Answer::AtTheEnd {
            return;
        }
        self.close_line_unless(Open::Text);
        print!("{text}");
        let _ = std::io::stdout().flush();
        self.open_line.set(Open::Text);
    }

    /// Finish a half-printed line unless it is of the kind about to continue it.
    fn close_line_unless(&self, continuing: Open) {
        let open = self.open_line.get();
        if open == Open::Nothing || open == continuing {
            return;
        }
        match open {
            Open::Text => println!(),
            _ => eprintln!(),
        }
        self.open_line.set(Open::Nothing);
    }

    /// The first lines of a result, dimmed; a diff's `+`/`-` lines in colour.
    fn preview(&self, name: &str, text: &str) {
        let limit = match name {
            "edit_file" => DIFF_PREVIEW_LINES,
            _ => PREVIEW_LINES,
        };
        let lines: Vec<&str> = text.lines().collect();
        for line in lines.iter().take(limit) {
            let line: String = line.chars().take(120).collect();
            let color = match name == "edit_file" {
                true if line.starts_with('+') && !line.starts_with("+++") => GREEN,
                true if line.starts_with('-') && !line.starts_with("---") => RED,
                _ => DIM,
            };
            eprintln!("  {}", self.paint(color, &line));
        }
        if lines.len() > limit {
            let more = format!("  … {} more lines", lines.len() - limit);
            eprintln!("{}", self.paint(DIM, &more));
        }
    }
}

pub const DIM: &str = "\x1b[2m";
pub const RED: &str = "\x1b[31m";
pub const GREEN: &str = "\x1b[32m";
pub const YELLOW: &str = "\x1b[33m";
pub const CYAN: &str = "\x1b[36m";
pub const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

/// An elapsed-time indicator on stderr, drawn by its own thread (see `Spinner::spin`) while
/// the model is silent or a tool runs, and erased the moment anything else is printed.
pub struct Spinner {
    enabled: bool,
    /// What we wait for and since when; `None` while output flows. `drawn` says whether the
    /// line on screen must be erased.
    state: Mutex<SpinState>,
}

struct SpinState {
    waiting: Option<(String, Instant)>,
    drawn: bool,
}

const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

impl Spinner {
    fn new(enabled: bool) -> Spinner {
        let state = SpinState {
            waiting: None,
            drawn: false,
        };
        Spinner {
            enabled,
            state: Mutex::new(state),
        }
    }

    pub fn start(&self, label: &str) {
        if let Ok(mut state) = self.state.lock() {
            state.waiting = Some((label.to_string(), Instant::now()));
        }
    }

    pub fn stop(&self) {
        if let Ok(mut state) = self.state.lock() {
            if state.drawn {
                eprint!("\r\x1b[K");
                state.drawn = false;
            }
            state.waiting = None;
        }
    }

    /// Run on a scoped thread for the length of a turn; returns when `done` is dropped.
    pub fn spin(&self, done: &Receiver<()>) {
        let mut frame = 0;
        while let Err(RecvTimeoutError::Timeout) = done.recv_timeout(Duration::from_millis(100)) {
            let Ok(mut state) = self.state.lock() else {
                return;
            };
            let Some((label, since)) = &state.waiting else {
                continue;
            };
            // Short waits pass without a flicker.
            let elapsed = since.elapsed().as_secs_f64();
            if !self.enabled || elapsed < 0.5 {
                continue;
            }
            frame = (frame + 1) % FRAMES.len();
            eprint!("\r\x1b[K{} {label} {elapsed:.1}s", FRAMES[frame]);
            let _ = std::io::stderr().flush();
            state.drawn = true;
        }
        self.stop();
    }
}

impl Display {
    /// Run a turn with the spinner's thread beside it; the thread ends with the turn.
    pub fn with_spinner(
        &self,
        turn: &mut dyn FnMut() -> Result<Finish, Error>,
    ) -> Result<Finish, Error> {
        let spinner = &self.spinner;
        let (done, finished) = crossbeam_channel::bounded::<()>(0);
        std::thread::scope(|scope| {
            scope.spawn(move || spinner.spin(&finished));
            let result = turn();
            // Dropping the sender wakes the spinner at once, so the turn ends without delay.
            drop(done);
            result
        })
    }
}

/// The first Ctrl+C sets `flag`: the agent stops at the next safe point and the history stays
/// valid. A second one, while the first is still being handled, ends the process at once.
pub fn watch_ctrl_c(flag: Arc<AtomicBool>) -> Result<(), Error> {
    use signal_hook::consts::SIGINT;
    let failed = |e: std::io::Error| Error::Io(format!("cannot watch for Ctrl+C: {e}"));
    signal_hook::flag::register_conditional_shutdown(SIGINT, 130, flag.clone()).map_err(failed)?;
    signal_hook::flag::register(SIGINT, flag).map_err(failed)?;
    Ok(())
}
