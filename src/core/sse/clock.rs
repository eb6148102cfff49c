//! The clock on a streamed reply: `Limits` says how long a reply may take, and `Clocked` wraps
//! the body reader so that every refill checks them, which a server trickling one byte at a
//! time or sending only `: ping` comments cannot dodge.
//!
//! Part of the SSE reader (see `sse.rs`), which resets the idle clock at each `data:` line.
//! It does not time the connection or the wait for the first byte; the HTTP client does.

use super::StreamError;
use std::io::{BufRead, Read};
use std::time::{Duration, Instant};

/// How long a reply may take, checked as its bytes arrive (so a trickle cannot dodge it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Longest wait between two `data:` events; comments such as `: ping` do not count.
    pub idle: Duration,
    /// When the whole reply must be in; `None` for no limit.
    pub deadline: Option<Instant>,
}

impl Limits {
    /// No limit at all (replays from memory: tests, benches, fuzzing).
    pub const NONE: Limits = Limits {
        idle: Duration::MAX,
        deadline: None,
    };
}

/// The body reader with the clock checked on every refill: a server that trickles one byte at
/// a time, or sends only comments, still meets `Limits`. (A silent one is stopped by the HTTP
/// client's own read timeout.)
pub(super) struct Clocked<'a> {
    pub(super) inner: &'a mut dyn BufRead,
    pub(super) limits: Limits,
    pub(super) last_data: Instant,
    /// Set when a limit passed; the read then fails and `read_stream` reports this instead.
    pub(super) expired: Option<StreamError>,
}

impl Clocked<'_> {
    fn check(&mut self) -> std::io::Result<()> {
        let now = Instant::now();
        if self.limits.deadline.is_some_and(|deadline| now > deadline) {
            self.expired = Some(StreamError::Deadline);
        } else if now.duration_since(self.last_data) > self.limits.idle {
            self.expired = Some(StreamError::Idle(self.limits.idle));
        }
        match self.expired {
            Some(_) => Err(std::io::ErrorKind::TimedOut.into()),
            None => Ok(()),
        }
    }
}

impl Read for Clocked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.check()?;
        self.inner.read(buf)
    }
}

impl BufRead for Clocked<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.check()?;
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.inner.consume(amount);
    }
}
