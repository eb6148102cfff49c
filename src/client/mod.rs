//! The client: one streamed chat-completions request, in reading order (a blank line between
//! entries keeps `cargo fmt` from sorting them). The loop (`core/agent.rs`) calls `Llm::stream`
//! once per round; nothing here touches the history or runs a tool.

pub mod llm; // one streamed request: retries, what a failed answer means, Ctrl+C

pub mod http; // HTTP for the client: the agent, the POST, the time limits

pub mod sse; // the SSE parser: lines in, text and reassembled tool calls out

pub(crate) mod wire; // the wire shapes: the request body, a chunk's fields, calls from their fragments

pub(crate) mod quirks; // what a 400 teaches (`max_tokens` renamed, …), "too long" and the window it names

pub(crate) mod not_a_stream; // a 200 that is not an event stream: a whole completion, a page, an error
