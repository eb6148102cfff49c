//! The core: one turn of the agent, top to bottom. Read these files in this order.
//!
//! Everything optional (hooks, MCP, the sandbox, sessions, checkpoints, cost, the trace…) is in
//! `extras/`; the tools themselves are in `tools/`; the binary's faces are in `app/`.

pub mod agent;
pub mod batch;
pub mod config;
pub mod consent;
pub mod context;
pub mod dispatch;
pub mod error;
pub mod event;
pub mod guard;
pub mod http;
pub mod llm;
pub mod message;
pub mod pool;
pub mod prompt;
pub mod sse;
pub mod wire;
