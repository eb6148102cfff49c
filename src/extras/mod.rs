//! Every optional feature, each off (a no-op) unless the binary or an embedding program turns
//! it on: hooks, MCP servers, the sandbox and secret filter, sessions, checkpoints, cost, the
//! trace, project instructions and trust.

pub mod checkpoint;
pub mod cost;
pub mod hooks;
pub mod hooks_config;
pub mod instructions;
pub mod mcp;
pub mod mcp_config;
pub mod mcp_wire;
pub mod sandbox;
pub mod secrets;
pub mod session;
pub mod sha256;
pub mod trace;
pub mod trust;
