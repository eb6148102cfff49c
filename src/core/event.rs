//! What a turn hands back: the one `Event` its caller is told as it goes (the SSE parser emits
//! text, reasoning and ready calls, the client retries and fallbacks, the loop and the batch the
//! rest, each passing it on unchanged), then a `Finish`, or the one `Error`. An `Error` comes
//! from configuration, from the client once its retries are spent, and from the loop; a failed
//! *tool call* is never one: it is a result the model reads. Nothing here does anything.

use crate::core::message::{ToolCall, Usage};
use std::fmt;
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

/// How a task ended, when it did not end in an `Error`.
#[derive(Debug, Clone, PartialEq)]
pub enum Finish {
    Answer(String),
    /// The answer as far as it came before the provider's output limit (`max_tokens`) cut it.
    CutOff(String),
    RoundCap,
}

impl Finish {
    /// A reply without tool calls ends the task: its text is the answer (cut off where the
    /// output limit stopped it), unless there is none.
    pub(crate) fn of_answer(text: &str, cut_off: bool) -> Result<Finish, Error> {
        match cut_off {
            _ if text.trim().is_empty() && !cut_off => {
                Err(Error::Api("the model returned an empty reply".to_string()))
            }
            true => Ok(Finish::CutOff(text.to_string())),
            false => Ok(Finish::Answer(text.to_string())),
        }
    }
}

pub const ROUND_CAP_MESSAGE: &str = "(reached maximum tool-call rounds)";
pub(crate) const CUT_OFF_MESSAGE: &str =
    "(the answer was cut off at the output token limit; raise CORECODER_MAX_TOKENS)";

/// How a call ended, for whoever shows its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultKind {
    Ran,
    /// Not run: the loop guard, a hook, consent or plan mode said no.
    Refused,
    /// Run, and it failed (the tool's result starts with `Error`).
    Failed,
}

/// What can stop a whole run.
#[derive(Debug)]
pub enum Error {
    /// A bad flag, variable or value; the message names it. Exit code 2.
    Usage(String),
    /// The provider failed for good (after retries, or a non-retryable status). Exit code 1.
    Api(String),
    /// The prompt does not fit the window (the provider's message, which may give the numbers);
    /// the agent compacts harder and retries once before letting this through. Exit code 1.
    ContextTooLong(String),
    /// `--max-cost` was reached before a request. Exit code 4.
    Budget(String),
    /// The model made the same call five times in a row. Exit code 5.
    Looping(String),
    /// A UserPromptSubmit hook refused the task; the hook's reason. Exit code 1.
    Refused(String),
    /// A local failure outside any tool (e.g. the demo could not set up its directory). Exit code 1.
    Io(String),
    /// The user pressed Ctrl+C. Exit code 130.
    Interrupted,
    /// A streamed reply broke (`sse::read_stream`); the client retries or gives up with `Api`.
    Stream(Broke),
}

/// What broke in a streamed reply, as plain data for the client to decide on.
#[derive(Debug)]
pub enum Broke {
    /// Reading failed (including the idle/read timeout the client set).
    Io(std::io::Error),
    /// The stream closed before any finish_reason or `[DONE]`.
    Ended,
    /// An error object sent inside the stream; the provider's message text.
    Provider(String),
    /// A `data:` event that is no chunk we can read (its start): a reply missing a piece is void.
    Malformed(String),
    /// The stream itself shows a piece went missing (a `sequence_number` gap, a `.done` unlike the deltas).
    Lost(String),
    /// No `data:` event for `Limits::idle`.
    Idle(std::time::Duration),
    /// `Limits::deadline` passed before the reply was complete.
    Deadline,
    /// A line or the whole reply passed `MAX_LINE` or `MAX_REPLY`; what it was.
    TooLarge(&'static str),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(msg) | Error::Io(msg) => write!(f, "{msg}"),
            Error::Api(msg) => write!(f, "API error: {msg}"),
            Error::ContextTooLong(msg) => {
                let said = crate::tools::support::text::headline(msg);
                write!(f, "the prompt is too long for the model: {said}")
            }
            Error::Budget(why) => write!(f, "budget spent: {why}"),
            Error::Looping(why) => write!(f, "stopped: {why}"),
            Error::Refused(why) => write!(f, "a hook refused the prompt: {why}"),
            Error::Interrupted => write!(f, "interrupted"),
            Error::Stream(broke) => match broke {
                Broke::Io(err) => write!(f, "reading the stream failed: {err}"),
                Broke::Ended => write!(f, "the stream ended before the reply was complete"),
                Broke::Provider(msg) => write!(f, "provider error: {msg}"),
                Broke::Malformed(start) => {
                    write!(f, "the server sent a chunk that is not valid JSON: {start}")
                }
                Broke::Lost(what) => write!(f, "the reply lost a piece on the way: {what}"),
                Broke::Idle(wait) => write!(f, "no data from the server for {} s", wait.as_secs()),
                Broke::Deadline => write!(f, "the reply took longer than the request deadline"),
                Broke::TooLarge(what) => write!(f, "{what} of the reply is too large"),
            },
        }
    }
}

impl std::error::Error for Error {}
