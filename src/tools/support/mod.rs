//! What the tools share: the process runner, the danger table and its shell-word splitter, the
//! parallel walk, diffs, text helpers, atomic writes and the todo list's type; what the core
//! uses: a text's token estimate, a long result snipped; and two the client uses: how deep in
//! JSON a growing text is, and what a connection needs (trusted roots, a URL's host). Nothing
//! here imports the core or the extras, so each helper can be read (and tested) on its own.

pub mod bounded;
pub mod clocked;
pub mod danger;
mod danger_match;
mod danger_places;
mod danger_rules;
mod danger_words;
pub mod diff;
pub mod files;
pub mod glob_regex;
pub mod json_depth;
pub mod net;
pub mod process;
pub mod shell_words;
pub mod snip;
pub mod text;
pub mod todos;
pub mod tokens;
pub mod walk;
