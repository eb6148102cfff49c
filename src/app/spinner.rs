//! An elapsed-time indicator on stderr while the model is silent or a tool runs: drawn by its
//! own scoped thread for the length of a turn, and erased the moment anything else is printed.
//!
//! `terminal.rs`'s `Display` owns one and starts or stops it at each event. It draws only on a
//! terminal that knows escape sequences (not `TERM=dumb`), and a write that fails (stderr
//! closed) is ignored: it is decoration.

use crate::core::event::Error;
use crate::core::event::Finish;
use crate::tools::support::text::printable;
use crossbeam_channel::{Receiver, RecvTimeoutError};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// An elapsed-time indicator on stderr, drawn by its own thread (see `Spinner::spin`) while
/// the model is silent or a tool runs, and erased the moment anything else is printed.
pub(crate) struct Spinner {
    /// Drawn only where a person watches: stderr is a terminal.
    on_terminal: bool,
    /// What we wait for and since when; `None` while output flows. `drawn` says whether the
    /// line on screen must be erased.
    state: Mutex<SpinState>,
}

struct SpinState {
    waiting: Option<(String, Instant)>,
    drawn: bool,
}

const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// `TERM=dumb` (Emacs' `M-x shell`, some CI logs): a terminal that obeys no escape sequence,
/// so neither the spinner (`\r\x1b[K`) nor colour is drawn there, as with `NO_COLOR`.
pub(crate) fn dumb_terminal() -> bool {
    std::env::var_os("TERM").is_some_and(|term| term == "dumb")
}

impl Spinner {
    /// A spinner for stderr, drawn only if stderr is a terminal.
    pub(crate) fn on_stderr() -> Spinner {
        let state = SpinState {
            waiting: None,
            drawn: false,
        };
        Spinner {
            on_terminal: std::io::stderr().is_terminal() && !dumb_terminal(),
            state: Mutex::new(state),
        }
    }

    /// Run a turn with the spinner's thread beside it; the thread ends with the turn.
    pub(crate) fn around(
        &self,
        turn: &mut dyn FnMut() -> Result<Finish, Error>,
    ) -> Result<Finish, Error> {
        let (done, finished) = crossbeam_channel::bounded::<()>(0);
        std::thread::scope(|scope| {
            scope.spawn(move || self.spin(&finished));
            let result = turn();
            // Dropping the sender wakes the spinner at once, so the turn ends without delay.
            drop(done);
            result
        })
    }

    /// Wait for `label` (a tool's name: the model's, so made printable).
    pub(crate) fn start(&self, label: &str) {
        if let Ok(mut state) = self.state.lock() {
            state.waiting = Some((printable(label), Instant::now()));
        }
    }

    pub(crate) fn stop(&self) {
        if let Ok(mut state) = self.state.lock() {
            if state.drawn {
                let _ = write!(std::io::stderr(), "\r\x1b[K");
                state.drawn = false;
            }
            state.waiting = None;
        }
    }

    /// Run on a scoped thread for the length of a turn; returns when `done` is dropped.
    pub(crate) fn spin(&self, done: &Receiver<()>) {
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
            if !self.on_terminal || elapsed < 0.5 {
                continue;
            }
            frame = (frame + 1) % FRAMES.len();
            let mut stderr = std::io::stderr();
            let _ = write!(stderr, "\r\x1b[K{} {label} {elapsed:.1}s", FRAMES[frame]);
            let _ = stderr.flush();
            state.drawn = true;
        }
        self.stop();
    }
}
