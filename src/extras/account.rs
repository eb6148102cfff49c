//! What the session spends and what the wire carried: prices, the ledger of every request,
//! the fallback models in use, and the `--trace` file. The client reports here through the
//! `Extras` seam; nothing here sends a request.
//!
//! (Skeleton: filled in as the client's optional parts move out of `core/llm*.rs`.)

/// Shared by the main agent and its sub-agents: cloning shares the same ledger and trace.
#[derive(Clone, Default)]
pub struct Account {}
