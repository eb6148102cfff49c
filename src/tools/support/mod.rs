//! What the tools share: the process runner, the danger table and its shell-word splitter, the
//! parallel walk, diffs, text helpers (and text as a person is shown it before saying yes) and
//! atomic writes; and what the client uses: how deep in JSON a growing text is, what a connection needs (trusted roots, a URL's host), what a
//! provider's error answer says, and how Ctrl+C wakes a request. Nothing
//! here imports the core or the extras, so each helper can be read (and tested) on its own.

pub mod bounded;
pub mod cancel;
pub mod clocked;
pub mod danger;
mod danger_flow;
mod danger_match;
mod danger_places;
mod danger_rules;
mod danger_unread;
pub mod danger_words;
pub mod diff;
pub mod file_lock;
pub mod files;
pub mod glob_regex;
pub mod json_depth;
pub mod net;
pub mod process;
pub mod provider_errors;
pub mod shell_words;
pub mod shown;
pub mod snip;
pub mod text;
pub mod todos;
pub mod tokens;
pub mod walk;
