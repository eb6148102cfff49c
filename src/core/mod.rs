//! The core: one turn of the agent, top to bottom, in reading order (a blank line between
//! entries keeps `cargo fmt` from sorting them). One streamed request is `client/`; everything
//! optional is in `extras/`, reached through its one seam `extras::Extras`; the tools are in
//! `tools/`, the binary in `app/`.

pub(crate) mod agent; // the loop, all of `impl Agent`: prompt → stream → run tools → append → repeat

pub mod event; // what a turn hands back: the one `Event`, its `Finish`, the one `Error`

pub mod prompt; // what we tell the model (system prompt, the task lines), its token estimate

pub(crate) mod notes; // what changed since the model was last told (a `cd`, the todos), as a note

pub mod message; // the history types and their repair

pub mod context; // compaction: snip, summarise or collapse the history to fit the window

pub(crate) mod summary; // compaction's summary: the request to the model, and one made without it

pub(crate) mod batch; // one reply's calls: the guard, hooks, consent, checkpoints, the pool, results

pub mod consent; // consent (may this call run, must the user be asked?) and the loop guard

pub mod dispatch; // the tools' schemas, the one dispatch `match`, the pool of 8 workers

pub mod config; // the config struct
