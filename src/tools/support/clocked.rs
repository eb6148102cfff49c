//! A body reader with a clock: every refill checks a deadline for the whole read and the time
//! since data last arrived, so a server trickling a byte at a time, or sending only comments,
//! still meets them (a read timeout alone stops only a silent one). The SSE reader
//! (`client/sse.rs`) reads a reply through it; nothing here knows what the bytes mean.

use std::io::{BufRead, Read};
use std::time::{Duration, Instant};

/// Which limit passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expired {
    Deadline,
    /// No data for this long.
    Idle(Duration),
}

pub(crate) struct Clocked<'a> {
    inner: &'a mut dyn BufRead,
    idle: Duration,
    deadline: Option<Instant>,
    last_data: Instant,
    /// Set when a limit passed; the read then fails and the caller asks `expired` why.
    expired: Option<Expired>,
}

impl Clocked<'_> {
    /// Read `inner` until `deadline` (`None`: no limit), with at most `idle` between data.
    pub fn new(inner: &mut dyn BufRead, idle: Duration, deadline: Option<Instant>) -> Clocked<'_> {
        let (last_data, expired) = (Instant::now(), None);
        Clocked {
            inner,
            idle,
            deadline,
            last_data,
            expired,
        }
    }

    /// What the caller counts as data arrived now (comments and keep-alives do not).
    pub(crate) fn data_arrived(&mut self) {
        self.last_data = Instant::now();
    }

    /// The limit that made the last read fail, if one did.
    pub(crate) fn expired(&mut self) -> Option<Expired> {
        self.expired.take()
    }

    fn check(&mut self) -> std::io::Result<()> {
        let now = Instant::now();
        if self.deadline.is_some_and(|deadline| now > deadline) {
            self.expired = Some(Expired::Deadline);
        } else if now.duration_since(self.last_data) > self.idle {
            self.expired = Some(Expired::Idle(self.idle));
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
