//! Every optional feature, each off (a no-op) unless the binary or an embedding program turns
//! it on: hooks, MCP servers, the sandbox and secret filter, sessions, checkpoints, cost, the
//! trace, project instructions and trust.

pub mod account;
pub mod checkpoint;
pub mod cost;
pub mod hooks;
pub mod hooks_config;
pub mod instructions;
pub mod mcp;
pub mod mcp_config;
pub mod mcp_protocol;
pub mod mcp_wire;
pub mod sandbox;
pub mod secrets;
pub mod session;
pub mod sha256;
pub mod trace;
pub mod trust;

/// The one seam between the core and every optional feature: the loop holds one `Extras` and
/// calls one method per step of a turn, each a no-op when its feature is off; the client is
/// handed the same value to report what it sent, spent and read. `Extras::default()` is a
/// plain agent with every feature off.
#[derive(Default)]
pub struct Extras {
    /// Prices, the ledger, fallbacks and the trace: what the client reports to.
    pub account: account::Account,
}
