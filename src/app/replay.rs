//! `--replay FILE`: a session recorded with `--trace` runs again, offline. The trace's replies
//! are served on 127.0.0.1 by the demo's scripted model (`scripted_model::start_model`), while the real
//! client, loop and tools run in the current directory, set up as `-p` sets them up.
//!
//! Each request the replay sends is judged against the recorded one (`trace/replay.rs`); at
//! the first that differs the run stops (exit 7), or goes on under `--replay-loose`, and the
//! report says how many rounds matched. The tasks are the recorded ones, in order, unless
//! `-p TEXT` gives one. Consent, plan mode, hooks and the sandbox are a live run's: mutating
//! tools run only with `--yes`, which a replay does not imply. It never opens the REPL.

use crate::app::flags::{Replay, RunOptions};
use crate::app::process;
use crate::app::scripted_model;
use crate::app::setup::{self, Started};
use crate::app::terminal::{Display, Show};
use crate::core::consent::{Mode, Plan};
use crate::core::event::Error;
use crate::extras::trace::divergence::Rebase;
use crate::extras::trace::replay::{OnDivergence, Progress, Recording, Task};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The exit code of a replay that left its trace.
pub(crate) const DIVERGED: i32 = 7;

pub fn run(mut options: RunOptions, replay: &Replay) -> Result<i32, Error> {
    let same = |trace: &PathBuf| trace.canonicalize().ok() == replay.file.canonicalize().ok();
    if options.trace.as_ref().is_some_and(same) {
        let why = "--trace names the file --replay reads: it would be lost; write elsewhere";
        return Err(Error::Usage(why.to_string()));
    }
    let recording = Recording::read(&replay.file).map_err(Error::Usage)?;
    let display = Display::new(Show::Calls);
    notes_on(&recording).iter().for_each(|n| display.note(n));
    let cwd =
        std::env::current_dir().map_err(|e| Error::Io(format!("no working directory: {e}")))?;
    let rebase = Rebase {
        from: recording.cwd.clone(),
        to: cwd.display().to_string(),
    };
    let progress = Progress::new(recording.rounds.clone(), rebase, replay.on_divergence);
    let progress = Arc::new(Mutex::new(progress));
    let judge = progress.clone();
    let answer = Box::new(move |body: &[u8]| lock(&judge).answer(body));
    let model = scripted_model::start_model(Duration::ZERO, answer)?;
    served_by(&mut options, &recording, &model.url);
    let (from, rounds) = (replay.file.display(), recording.rounds.len());
    let name = &options.config.model;
    display.note(&format!(
        "Replaying {from}: {rounds} rounds of {name}, served at {}; the tools run in {}",
        model.url,
        cwd.display()
    ));
    let code = run_tasks(&options, &recording, &display);
    drop(model);
    let progress = lock(&progress);
    progress.report().iter().for_each(|line| display.note(line));
    match (code, replay.on_divergence, progress.all_matched()) {
        (Err(Error::Interrupted), _, _) => Err(Error::Interrupted),
        (_, OnDivergence::Stop, false) => {
            display.note("the replay left its trace (--replay-loose goes on past a difference)");
            Ok(DIVERGED)
        }
        (code, _, _) => code,
    }
}

/// The session set up as `-p` sets one up, then each task in turn (the recorded ones, each in
/// plan mode if it was, or the `-p` text) until one fails; the exit code of the last.
fn run_tasks(options: &RunOptions, recording: &Recording, display: &Display) -> Result<i32, Error> {
    let tasks = match &options.prompt {
        Some(text) => vec![Task {
            text: text.clone(),
            plan: Plan::Off,
        }],
        None => recording.tasks.clone(),
    };
    let mode = match options.approve_all {
        true => Mode::AllowAll,
        false => Mode::ReadOnly,
    };
    let Started { mut agent, notes } = setup::start(options, mode)?;
    process::watch_ctrl_c(agent.cancel.clone())?;
    notes.iter().for_each(|note| display.note(note));
    let mut code = 0;
    for Task { text, plan } in &tasks {
        // Plan mode as the user had it for this task (`/plan`, then `approve`).
        agent.consent.plan = *plan;
        agent.extras.account().trace_task(text, *plan);
        let finish =
            (display.spinner).around(&mut || agent.run(text, &mut |event| display.show(event)));
        code = display.finish(&finish?);
    }
    Ok(code)
}

/// What the user should know about the trace before it runs: its age, and what was lost.
fn notes_on(recording: &Recording) -> Vec<String> {
    let this = env!("CARGO_PKG_VERSION");
    let mut notes = Vec::new();
    match recording.version.as_deref() {
        Some(version) if version == this => {}
        Some(version) => notes.push(format!(
            "warning: this trace was written by corecoder {version}, this is {this}: \
             requests may differ where corecoder changed"
        )),
        None => notes.push(format!(
            "warning: this trace has no header (written before corecoder {this}?): \
             the model and working directory it used are not known"
        )),
    }
    if recording.unreadable > 0 {
        let lines = recording.unreadable;
        notes.push(format!(
            "{lines} lines of the trace are not JSON and were skipped"
        ));
    }
    notes
}

/// The session talks to the scripted model, in the recorded dialect, with the recorded model
/// and context window, and no key: the user's own never leaves for a replay.
fn served_by(options: &mut RunOptions, recording: &Recording, url: &str) {
    let config = &mut options.config;
    config.base_url = url.to_string();
    config.api_key = None;
    if let Some(dialect) = recording.dialect {
        config.dialect = dialect;
    }
    if let Some(model) = &recording.model {
        config.model = model.clone();
    }
    if let Some(window) = recording.max_context {
        config.max_context = window;
    }
}

fn lock(progress: &Mutex<Progress>) -> std::sync::MutexGuard<'_, Progress> {
    progress.lock().unwrap_or_else(PoisonError::into_inner)
}
