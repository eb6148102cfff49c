//! What the tools share: the process runner, the danger table and its shell-word splitter, the
//! parallel walk, diffs, text helpers (and text as a person is shown it before saying yes) and
//! atomic writes; and what the client uses: how deep in JSON a growing text is, what a connection needs (trusted roots, a URL's host), what a
//! provider's error answer says, what `read_file` has shown the model, and how Ctrl+C wakes a request. Nothing
//! here imports the core or the extras, so each helper can be read (and tested) on its own.

pub(crate) mod bounded;
pub(crate) mod cancel;
pub(crate) mod clocked;
pub mod danger;
mod danger_flow;
mod danger_match;
mod danger_places;
mod danger_rules;
mod danger_unread;
pub(crate) mod danger_words;
pub(crate) mod diff;
pub(crate) mod file_lock;
pub(crate) mod files;
pub(crate) mod glob_regex;
pub(crate) mod json_depth;
pub mod net;
pub mod process;
pub(crate) mod provider_errors;
pub(crate) mod seen;
pub mod shell_words;
pub(crate) mod shown;
pub(crate) mod snip;
pub mod text;
pub(crate) mod todos;
pub(crate) mod tokens;
pub(crate) mod walk;
