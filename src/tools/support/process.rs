//! Running a shell command as a child process group and collecting what it prints: the one
//! process runner, for the `bash` tool and for hooks (`extras/hooks.rs`).
//!
//! The caller decides *whether* and *what* to run: it takes the common part of the child from
//! `shell` (`PROGRAM -c COMMAND` in `cwd`, its own process group, stdin closed, stdout and
//! stderr piped), adds what its child needs (bash: secrets hidden, the sandbox entered; hooks:
//! a piped stdin, the project's directory) and spawns it. `run` then writes the caller's bytes
//! to stdin, reads stdout and stderr with `poll(2)` until they close, and kills the whole
//! process group on timeout or Ctrl+C. It knows nothing of the sandbox, secrets, the danger
//! gate, `cd` tracking or output formatting.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often we look at the shell, the clock and Ctrl+C while no output arrives.
const POLL_MILLIS: i32 = 25;
/// How long we keep reading after the shell ended, for output still in flight. Past it,
/// whatever still holds the pipes (a `sleep 100 &`) is killed.
const GRACE: Duration = Duration::from_millis(500);
/// The most we read or write in one go.
const CHUNK: usize = 64 * 1024;

/// `program -c command` in `cwd`, in a process group of its own (so a timeout can kill
/// everything the command started), stdin closed, stdout and stderr piped to us.
pub(crate) fn shell(program: &str, command: &str, cwd: &Path) -> Command {
    let mut shell = Command::new(program);
    shell
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    shell
}

/// How long a command may run and how much of what it prints we keep.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) timeout: Duration,
    pub(crate) keep: Keep,
}

/// Per stream we keep the first `head` bytes and about the last `tail`; the middle is read and
/// dropped, so a command printing gigabytes neither blocks on a full pipe nor fills our memory.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Keep {
    pub(crate) head: usize,
    pub(crate) tail: usize,
}

/// How the command ended. A shell killed by a signal counts as exit code 128 + signal,
/// the way shells report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    Exited(i32),
    TimedOut,
    Interrupted,
}

pub(crate) struct Finished {
    pub(crate) stdout: Stream,
    pub(crate) stderr: Stream,
    pub(crate) ending: Ending,
    /// The shell ended but something it started kept the pipes open, so we killed it.
    pub(crate) stragglers_killed: bool,
}

/// Feed `input` to the child's stdin (if the caller piped it) and collect what it prints,
/// until it ends, `limits.timeout` passes or `cancel` is set.
pub fn run(
    mut child: Child,
    input: &[u8],
    limits: Limits,
    cancel: &AtomicBool,
) -> Result<Finished, String> {
    let feed = Feed::new(child.stdin.take().map(OwnedFd::from), input);
    collect(&mut child, feed, limits, cancel)
}

/// Read both pipes until they close, while feeding stdin and watching the shell, the deadline
/// and Ctrl+C.
///
/// One thread and `poll(2)` rather than a thread per pipe: a process that left our group
/// (`setsid`) can hold a pipe open forever, and a thread blocked in `read` or `write` on it
/// could never be joined. `poll` lets us stop whenever we decide to (DESIGN.md, "Polling the
/// pipes").
fn collect(
    child: &mut Child,
    mut feed: Feed,
    limits: Limits,
    cancel: &AtomicBool,
) -> Result<Finished, String> {
    let group = child.id() as i32;
    let mut stdout = Stream::new(child.stdout.take().map(OwnedFd::from), limits.keep);
    let mut stderr = Stream::new(child.stderr.take().map(OwnedFd::from), limits.keep);
    let deadline = Instant::now() + limits.timeout;
    let mut ending = None;
    // Only looked at once `ending` is known; then it is set to the end of the grace period.
    let mut stop_reading_at = deadline;
    let stragglers_killed = loop {
        exchange(&mut feed, &mut stdout, &mut stderr);
        let now = Instant::now();
        if ending.is_none() {
            let status = child
                .try_wait()
                .map_err(|e| format!("waiting for the shell: {e}"))?;
            ending = Some(match status {
                Some(status) => Ending::Exited(
                    status
                        .code()
                        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
                ),
                None if cancel.load(Ordering::Relaxed) => Ending::Interrupted,
                None if now >= deadline => Ending::TimedOut,
                None => continue,
            });
            if matches!(ending, Some(Ending::Interrupted | Ending::TimedOut)) {
                kill_group(group);
            }
            stop_reading_at = now + GRACE;
        }
        if stdout.file.is_none() && stderr.file.is_none() {
            break false;
        }
        if now >= stop_reading_at {
            kill_group(group);
            break matches!(ending, Some(Ending::Exited(_)));
        }
    };
    // Reap the shell; after a kill this returns at once.
    child
        .wait()
        .map_err(|e| format!("waiting for the shell: {e}"))?;
    Ok(Finished {
        stdout,
        stderr,
        ending: ending.unwrap_or(Ending::Interrupted),
        stragglers_killed,
    })
}

/// What is still to be written to the child's stdin. Closed (`None`) once all is written or
/// the child stopped reading (a hook may exit without reading; the `EPIPE` is then fine).
struct Feed<'a> {
    file: Option<File>,
    rest: &'a [u8],
}

impl Feed<'_> {
    fn new(fd: Option<OwnedFd>, input: &[u8]) -> Feed<'_> {
        // Non-blocking, so a write never waits for a child that reads slowly or not at all.
        let file = fd.filter(|_| !input.is_empty()).map(File::from);
        if let Some(file) = &file {
            let fd = file.as_raw_fd();
            // SAFETY: fcntl(2) on a descriptor we own, with integer arguments only.
            unsafe {
                libc::fcntl(
                    fd,
                    libc::F_SETFL,
                    libc::fcntl(fd, libc::F_GETFL) | libc::O_NONBLOCK,
                )
            };
        }
        Feed { file, rest: input }
    }

    /// `poll` said writable (or closed): write what fits.
    fn write_some(&mut self) {
        let Some(file) = &mut self.file else { return };
        match file.write(&self.rest[..self.rest.len().min(CHUNK)]) {
            Ok(written) => self.rest = &self.rest[written..],
            Err(e) if matches!(e.kind(), ErrorKind::Interrupted | ErrorKind::WouldBlock) => {}
            Err(_) => self.rest = &[],
        }
        if self.rest.is_empty() {
            self.file = None;
        }
    }
}

/// One pipe being read. We keep its first `keep.head` bytes, its last `keep.tail` or so, and
/// count what fell between.
#[derive(Default)]
pub(crate) struct Stream {
    /// `None` once the pipe reached end of file.
    file: Option<File>,
    keep: Keep,
    pub(crate) head: Vec<u8>,
    pub(crate) tail: Vec<u8>,
    pub(crate) dropped: usize,
}

impl Stream {
    fn new(fd: Option<OwnedFd>, keep: Keep) -> Stream {
        let file = fd.map(File::from);
        Stream {
            file,
            keep,
            ..Stream::default()
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = self
            .keep
            .head
            .saturating_sub(self.head.len())
            .min(bytes.len());
        self.head.extend_from_slice(&bytes[..room]);
        self.tail.extend_from_slice(&bytes[room..]);
        // Trim only when twice over, so the copying stays rare.
        if self.tail.len() > 2 * self.keep.tail {
            let excess = self.tail.len() - self.keep.tail;
            self.tail.drain(..excess);
            self.dropped += excess;
        }
    }

    pub(crate) fn text(&self) -> String {
        let bytes = [self.head.as_slice(), self.tail.as_slice()].concat();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Wait up to `POLL_MILLIS` for stdin to take bytes or either pipe to have data (or close),
/// then write and read what can be. With every pipe closed, this is just the pause between two
/// looks at the shell.
fn exchange(feed: &mut Feed, stdout: &mut Stream, stderr: &mut Stream) {
    let watch = |file: &Option<File>, events| {
        (file.as_ref()).map(|file| libc::pollfd {
            fd: file.as_raw_fd(),
            events,
            revents: 0,
        })
    };
    let mut fds: Vec<libc::pollfd> = [
        watch(&feed.file, libc::POLLOUT),
        watch(&stdout.file, libc::POLLIN),
        watch(&stderr.file, libc::POLLIN),
    ]
    .into_iter()
    .flatten()
    .collect();
    // SAFETY: `fds` is a live, exclusively borrowed array of exactly `fds.len()` pollfds.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, POLL_MILLIS) };
    // Nothing yet, or a signal interrupted the wait: the caller simply looks again.
    if ready <= 0 {
        return;
    }
    let is_ready = |file: &Option<File>| {
        (file.as_ref()).is_some_and(|f| fds.iter().any(|p| p.fd == f.as_raw_fd() && p.revents != 0))
    };
    if is_ready(&feed.file) {
        feed.write_some();
    }
    let mut buffer = [0u8; CHUNK];
    for stream in [stdout, stderr] {
        // `poll` said readable (or closed), so this `read` does not block.
        if is_ready(&stream.file)
            && let Some(file) = &mut stream.file
        {
            match file.read(&mut buffer) {
                Ok(n) if n > 0 => stream.keep(&buffer[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                _ => stream.file = None,
            }
        }
    }
}

/// SIGKILL the whole process group a child leads (its pid is the group id): the shells here,
/// hooks and MCP servers (`mcp_wire.rs`) each start in a group of their own.
pub(crate) fn kill_group(group: i32) {
    // `kill(-1)` would signal every process we may signal; never let a bad id get there.
    if group > 1 {
        // SAFETY: kill(2) takes two integers and touches no memory of ours.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEEP_BYTES: usize = 1 << 20;

    #[test]
    fn capture_keeps_head_and_tail() {
        let keep = Keep {
            head: KEEP_BYTES,
            tail: KEEP_BYTES,
        };
        let mut capture = Stream::new(None, keep);
        for _ in 0..4 {
            capture.keep(&vec![b'x'; KEEP_BYTES]);
        }
        assert_eq!(capture.head.len(), KEEP_BYTES);
        assert!(capture.tail.len() <= 2 * KEEP_BYTES);
        assert_eq!(
            capture.head.len() + capture.tail.len() + capture.dropped,
            4 * KEEP_BYTES
        );
    }

    #[test]
    fn stdin_is_fed_whole_and_output_kept_as_asked() {
        let mut cat = shell("sh", "cat; echo done >&2", &std::env::temp_dir());
        let child = cat.stdin(Stdio::piped()).spawn().expect("sh");
        let input = vec![b'y'; 3 << 20];
        let limits = Limits {
            timeout: Duration::from_secs(20),
            keep: Keep {
                head: 1000,
                tail: 0,
            },
        };
        let finished = run(child, &input, limits, &AtomicBool::new(false)).expect("ran");
        assert_eq!(finished.ending, Ending::Exited(0));
        assert_eq!(finished.stdout.head.len(), 1000);
        assert_eq!(finished.stdout.dropped, input.len() - 1000);
        assert_eq!(finished.stderr.text(), "done\n");
    }
}
