//! The core: one turn of the agent, top to bottom. Read these files in this order (each entry
//! stands apart, so `cargo fmt` keeps the order).
//!
//! Everything optional (hooks, MCP, the sandbox, sessions, checkpoints, cost, the trace…) is in
//! `extras/`, reached through its one seam `extras::Extras`; the tools themselves are in
//! `tools/`; the binary's faces are in `app/`.

/// The loop and all of `impl Agent`: prompt → stream → run tools → append results → repeat.
pub mod agent;

/// What a turn hands back: the one `Event` as it goes, `Finish`, the one `Error` when it fails.
pub mod event;

/// What we tell the model (the system prompt, the summary request) and its token estimate.
pub mod prompt;

/// The history types and their repair.
pub mod message;

/// Compaction: snip, summarise or collapse the history to fit the window.
pub mod context;

/// The LLM client: one streamed request, with retries.
pub mod llm;

/// HTTP for the client.
pub mod http;

/// The SSE parser: lines in, text and reassembled tool calls out.
pub mod sse;

/// The wire shapes: the request body, the 400 adaptations, a chunk's fields.
pub mod wire;

/// One reply's calls: the guard's ruling, hooks, consent, checkpoints, the pool, the results.
pub mod batch;

/// Consent (may this call run, must the user be asked?) and the loop guard.
pub mod consent;

/// The tools' schemas, the one dispatch `match`, and the pool of worker threads.
pub mod dispatch;

/// The config struct.
pub mod config;
