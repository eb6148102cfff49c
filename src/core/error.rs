//! The one error type of corecoder: what can stop a whole run.
//!
//! It is returned by configuration, by the LLM client once its retries are spent, and by the agent
//! loop. A failed *tool call* is never an `Error`: it becomes a tool result the model reads.

use std::fmt;

#[derive(Debug)]
pub enum Error {
    /// A bad flag, variable or value; the message names it. Exit code 2.
    Usage(String),
    /// The provider failed for good (after retries, or a non-retryable status). Exit code 1.
    Api(String),
    /// The provider said the prompt does not fit the model's context window (its whole message,
    /// which may give the numbers). The agent compacts harder and retries once before letting
    /// this through. Exit code 1.
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
    /// A streamed reply broke (`sse::read_stream`). The client retries it or gives up with an
    /// `Api` error, so no caller meets this one. Exit code 1.
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
    /// A `data:` event that is not a chunk we can read (the start of it): a reply with a piece
    /// missing cannot be trusted.
    Malformed(String),
    /// No `data:` event for `Limits::idle`.
    Idle(std::time::Duration),
    /// `Limits::deadline` passed before the reply was complete.
    Deadline,
    /// A line or the whole reply passed `MAX_LINE` or `MAX_REPLY`; what it was.
    TooLarge(&'static str),
}

impl Error {
    /// The process exit code the binary uses for this error in `-p` mode.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            Error::Api(_) | Error::ContextTooLong(_) | Error::Refused(_) | Error::Io(_) => 1,
            Error::Stream(_) => 1,
            Error::Budget(_) => 4,
            Error::Looping(_) => 5,
            Error::Interrupted => 130,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(msg) => write!(f, "{msg}"),
            Error::Api(msg) => write!(f, "API error: {msg}"),
            Error::ContextTooLong(msg) => {
                let said = crate::tools::support::text::headline(msg);
                write!(f, "the prompt is too long for the model: {said}")
            }
            Error::Budget(why) => write!(f, "budget spent: {why}"),
            Error::Looping(why) => write!(f, "stopped: {why}"),
            Error::Refused(why) => write!(f, "a hook refused the prompt: {why}"),
            Error::Io(msg) => write!(f, "{msg}"),
            Error::Interrupted => write!(f, "interrupted"),
            Error::Stream(broke) => match broke {
                Broke::Io(err) => write!(f, "reading the stream failed: {err}"),
                Broke::Ended => write!(f, "the stream ended before the reply was complete"),
                Broke::Provider(msg) => write!(f, "provider error: {msg}"),
                Broke::Malformed(start) => {
                    write!(f, "the server sent a chunk that is not valid JSON: {start}")
                }
                Broke::Idle(wait) => write!(f, "no data from the server for {} s", wait.as_secs()),
                Broke::Deadline => write!(f, "the reply took longer than the request deadline"),
                Broke::TooLarge(what) => write!(f, "{what} of the reply is too large"),
            },
        }
    }
}

impl std::error::Error for Error {}
