//! The one event type: what a turn tells its caller (the binary, an embedding program) as it
//! goes, from the first streamed word to the last tool result.
//!
//! The SSE parser emits the text, reasoning and ready calls; the client adds retries and
//! fallbacks; the loop and the batch add the rest. Each passes the same value on unchanged, so
//! a caller matches one enum. Nothing here does anything.

use crate::core::message::{ToolCall, Usage};
use std::time::Duration;

/// What the caller (the binary, an embedding program) is shown as a turn goes on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event<'a> {
    /// A request is about to go out (the model is "thinking" until text arrives).
    Requesting { round: u32 },
    /// Answer text as it streams (void if a `Retry` follows).
    Text(&'a str),
    /// Reasoning ("thinking") text as it streams, where the provider sends it.
    Reasoning(&'a str),
    /// A tool call is complete while the rest of the reply still streams: a later call began
    /// and this one's arguments are a whole JSON value. (Its id may still be empty.)
    CallReady(&'a ToolCall),
    /// The attempt failed and will be re-issued after `wait`; text already shown is void.
    Retry {
        attempt: u32,
        wait: Duration,
        why: &'a str,
    },
    /// The current model kept failing; from now on requests go to `model`.
    Fallback { model: &'a str, why: &'a str },
    /// A tool call is about to run: `> name(summary)`.
    ToolCall { name: &'a str, summary: &'a str },
    ToolResult {
        name: &'a str,
        text: &'a str,
        kind: ResultKind,
    },
    /// A call the user is about to be asked about, and what it would do (an edit's diff, the
    /// start of a write, a command and its directory), shown before the question.
    Proposed { name: &'a str, preview: &'a str },
    /// A reply arrived; the session's token totals so far.
    Replied { usage: &'a Usage },
    /// Something the user should know that is not part of the conversation.
    Notice(&'a str),
}

/// How a call ended, for whoever shows its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultKind {
    Ran,
    /// Not run: the loop guard, a hook, consent or plan mode said no.
    Refused,
    /// Run, and it failed (the tool's result starts with `Error`).
    Failed,
}
