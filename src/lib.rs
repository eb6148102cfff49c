//! corecoder as a library: a minimal coding agent you can read, step through and fork.
//!
//! `Config` says where the model is, `Llm` talks to it over a blocking SSE stream, and `Agent`
//! runs the loop (prompt → stream → tools → results → repeat). The binary in `main.rs` is a thin
//! shell around these three.

pub mod agent;
pub mod batch;
pub mod checkpoint;
pub mod config;
pub mod consent;
pub mod context;
pub mod cost;
pub mod demo;
pub mod diff;
pub mod dotenv;
pub mod error;
pub mod guard;
pub mod hooks;
pub mod http;
pub mod instructions;
pub mod llm;
pub mod mcp;
pub mod mcp_config;
pub mod mcp_wire;
pub mod message;
pub mod output;
pub mod prompt;
pub mod repl;
pub mod repl_trust;
pub mod sandbox;
pub mod secrets;
pub mod session;
pub mod setup;
pub mod sha256;
pub mod spinner;
pub mod sse;
pub mod terminal;
pub mod text;
pub mod tools;
pub mod trace;
pub mod trust;

pub use agent::Agent;
pub use config::Config;
pub use error::Error;
pub use llm::Llm;
