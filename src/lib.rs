//! corecoder as a library: a minimal coding agent you can read, step through and fork.
//!
//! `Config` says where the model is, `Llm` talks to it over a blocking SSE stream, and `Agent`
//! runs the loop (prompt → stream → tools → results → repeat). Read `core/` first, in the order
//! `core/mod.rs` lists it: that is one turn; then `client/`, one streamed request. `tools/`
//! holds the tools, `extras/` every optional feature behind one seam (`Extras`, set up between
//! turns through `Agent::extras`), and `app/` the binary's faces; `main.rs` is a thin shell
//! around them. The re-exports below are all a plain embedding program needs
//! (`examples/minimal.rs` uses nothing else); an extra's types are reached through its module.

pub mod app;
pub mod client;
pub mod core;
pub mod extras;
pub mod tools;

pub use crate::client::llm::Llm;
pub use crate::core::agent::Agent;
pub use crate::core::config::Config;
pub use crate::core::consent::{Consent, Mode};
pub use crate::core::event::{Error, Event, Finish};
pub use crate::extras::Extras;
