//! The binary's faces: the command line, `.env` files, set-up, the REPL and its terminal, output
//! formats for scripts, the offline demo, `--replay`, and `--acp` (the Agent Client Protocol, for
//! editors). Nothing in `core/` imports these.

pub mod acp;
pub mod demo;
pub(crate) mod dotenv;
pub mod flags;
pub mod help;
pub(crate) mod json_output;
pub(crate) mod markdown;
pub mod one_shot;
pub mod process;
pub mod repl;
pub(crate) mod repl_commands;
pub(crate) mod repl_consent;
pub(crate) mod repl_trust;
pub mod replay;
pub mod resolve;
pub(crate) mod result_preview;
pub(crate) mod scripted_model;
pub(crate) mod setup;
pub(crate) mod spinner;
pub mod terminal;
pub mod variables;
