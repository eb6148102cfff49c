//! The binary's faces: `.env` files, set-up, the REPL and its terminal, output formats for
//! scripts, and the offline demo. Nothing in `core/` or `extras/` imports these.

pub mod demo;
pub mod dotenv;
pub mod output;
pub mod repl;
pub mod repl_trust;
pub mod setup;
pub mod spinner;
pub mod terminal;
