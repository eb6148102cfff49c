//! The binary's faces: the command line, `.env` files, set-up, the REPL and its terminal, output
//! formats for scripts, the offline demo, and `--replay`. Nothing in `core/` imports these.

pub mod demo;
pub mod dotenv;
pub mod flags;
pub mod help;
pub mod json_output;
pub mod markdown;
pub mod one_shot;
pub mod process;
pub mod repl;
pub mod repl_commands;
pub mod repl_consent;
pub mod repl_trust;
pub mod replay;
pub mod resolve;
pub mod result_preview;
pub mod scripted_model;
pub mod setup;
pub mod spinner;
pub mod terminal;
pub mod variables;
