//! Running a shell command as a child process group and collecting what it prints: the one
//! process runner, for the `bash` tool and for hooks (`extras/hooks.rs`).
//!
//! The caller decides *whether* and *what* to run: it takes the common part of the child from
//! `shell` (`PROGRAM -c COMMAND` in `cwd`, its own process group, stdin closed, stdout and
//! stderr piped), adds what its child needs (bash: secrets hidden, the sandbox entered; hooks:
//! a piped stdin, the project's directory) and spawns it. `run` then writes the caller's bytes
//! to stdin, reads stdout and stderr with `poll(2)` until they close and the shell ends (its
//! pidfd in the same `poll`), and kills the whole process group on timeout or Ctrl+C. It
//! knows nothing of the sandbox, secrets, the danger gate, `cd` tracking or output formatting.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often we look at the clock and Ctrl+C (and the shell, without a pidfd) while idle.
const POLL_MILLIS: i32 = 25;
/// How long we keep reading after the shell ended, for output still in flight. Past it,
/// whatever still holds the pipes (a `sleep 100 &`) is killed.
const GRACE: Duration = Duration::from_millis(500);
/// The most we read or write in one go.
const CHUNK: usize = 64 * 1024;

/// `program -c command` in `cwd`, in a process group of its own (so a timeout can kill
/// everything the command started), stdin closed, stdout and stderr piped to us.
pub fn shell(program: &str, command: &str, cwd: &Path) -> Command {
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
pub struct Limits {
    pub timeout: Duration,
    pub keep: Keep,
}

/// Per stream we keep the first `head` bytes and about the last `tail`; the middle is read and
/// dropped, so a command printing gigabytes neither blocks on a full pipe nor fills our memory.
#[derive(Debug, Clone, Copy, Default)]
pub struct Keep {
    pub(crate) head: usize,
    pub(crate) tail: usize,
}

/// How the command ended. A shell killed by a signal counts as exit code 128 + signal,
/// the way shells report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    TimedOut,
    Interrupted,
}

pub struct Finished {
    pub(crate) stdout: Stream,
    pub(crate) stderr: Stream,
    pub ending: Ending,
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
    // Owned here, so it stays open until `collect` is done with it.
    let exit = pidfd(&child);
    let shell = exit.as_ref().map(AsRawFd::as_raw_fd);
    collect(&mut child, feed, shell, limits, cancel)
}

/// Read both pipes until they close, while feeding stdin and watching the shell, the deadline
/// and Ctrl+C.
///
/// One thread and `poll(2)`, not a thread per pipe: a pipe a `setsid` child holds forever would
/// block that thread for good; `poll` stops when we decide (DESIGN.md, "Polling the pipes").
fn collect(
    child: &mut Child,
    mut feed: Feed,
    exit: Option<i32>,
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
        // Watched until the shell is reaped; past that it stays readable and would spin `poll`.
        let shell = exit.filter(|_| ending.is_none());
        exchange(&mut feed, &mut stdout, &mut stderr, shell);
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

/// The shell's pidfd, readable once the shell exits, so its end wakes `poll` (DESIGN.md,
/// "Waiting on the shell"). `None` before Linux 5.3; then the tick notices the end.
fn pidfd(child: &Child) -> Option<OwnedFd> {
    // SAFETY: integer arguments only; our child is not yet reaped, so its pid is not reused.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id() as libc::pid_t, 0) };
    // SAFETY: a non-negative result is a new descriptor that nothing else owns.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
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
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) } | libc::O_NONBLOCK;
            unsafe { libc::fcntl(fd, libc::F_SETFL, flags) };
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

/// Wait up to `POLL_MILLIS` for stdin to take bytes, a pipe to have data (or close) or the
/// `shell` pidfd to say it exited, then write and read what can be.
fn exchange(feed: &mut Feed, stdout: &mut Stream, stderr: &mut Stream, shell: Option<i32>) {
    let watch = |fd: Option<i32>, events| {
        fd.map(|fd| libc::pollfd {
            fd,
            events,
            revents: 0,
        })
    };
    let raw = |file: &Option<File>| file.as_ref().map(AsRawFd::as_raw_fd);
    let mut fds: Vec<libc::pollfd> = [
        watch(raw(&feed.file), libc::POLLOUT),
        watch(raw(&stdout.file), libc::POLLIN),
        watch(raw(&stderr.file), libc::POLLIN),
        watch(shell, libc::POLLIN),
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

    fn limits(timeout: Duration) -> Limits {
        let keep = Keep {
            head: 1000,
            tail: 1000,
        };
        Limits { timeout, keep }
    }

    /// `command` through `run`: how it ended and how long it took.
    fn timed_run(command: &str, timeout: Duration, cancel: &AtomicBool) -> (Ending, Duration) {
        let child = shell("sh", command, &std::env::temp_dir())
            .spawn()
            .expect("sh");
        let start = Instant::now();
        let finished = run(child, &[], limits(timeout), cancel).expect("ran");
        (finished.ending, start.elapsed())
    }

    /// The shell closes its pipes, then exits 2 ms later: the pidfd wakes us for its end, so it
    /// is reaped without waiting for a `POLL_MILLIS` tick (before pidfds, every such run took
    /// at least a whole tick, as it does below on the fallback).
    #[test]
    fn a_shell_that_exits_after_closing_its_pipes_is_reaped_at_once() {
        let mut probe = shell("sh", "true", Path::new("/")).spawn().expect("sh");
        let has_pidfd = pidfd(&probe).is_some();
        probe.wait().expect("reaped");
        if !has_pidfd {
            eprintln!("SKIPPED process::tests: this kernel has no pidfd_open (Linux < 5.3)");
            return;
        }
        let command = "exec >&- 2>&-; sleep 0.002";
        let fastest = (0..5)
            .map(|_| timed_run(command, Duration::from_secs(20), &AtomicBool::new(false)))
            .inspect(|(ending, _)| assert_eq!(*ending, Ending::Exited(0)))
            .map(|(_, took)| took)
            .min()
            .unwrap();
        let tick = Duration::from_millis(POLL_MILLIS as u64);
        assert!(fastest < tick * 3 / 5, "the fastest of 5 took {fastest:?}");
    }

    /// Without a pidfd (Linux < 5.3) the tick notices the shell's end, as before pidfds.
    #[test]
    fn without_a_pidfd_the_tick_still_reaps_the_shell() {
        let mut child = shell(
            "sh",
            "echo out; exec >&- 2>&-; sleep 0.1; exit 3",
            Path::new("/"),
        )
        .spawn()
        .expect("sh");
        let feed = Feed::new(None, &[]);
        let cancel = AtomicBool::new(false);
        let start = Instant::now();
        let finished = collect(
            &mut child,
            feed,
            None,
            limits(Duration::from_secs(20)),
            &cancel,
        );
        let finished = finished.expect("ran");
        assert_eq!(finished.ending, Ending::Exited(3));
        assert_eq!(finished.stdout.text(), "out\n");
        assert!(start.elapsed() >= Duration::from_millis(100));
    }

    /// A command that closed its pipes and never ends: the timeout still kills it.
    #[test]
    fn the_timeout_kills_a_command_that_closed_its_pipes() {
        let cancel = AtomicBool::new(false);
        let command = "exec >&- 2>&-; sleep 30";
        let (ending, took) = timed_run(command, Duration::from_millis(300), &cancel);
        assert_eq!(ending, Ending::TimedOut);
        assert!(took < Duration::from_secs(5), "took {took:?}");
    }

    /// The same command and Ctrl+C (the cancel flag) 200 ms in: killed at once.
    #[test]
    fn ctrl_c_kills_a_command_that_closed_its_pipes() {
        let cancel = AtomicBool::new(false);
        let (ending, took) = std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(200));
                cancel.store(true, Ordering::Relaxed);
            });
            timed_run("exec >&- 2>&-; sleep 30", Duration::from_secs(60), &cancel)
        });
        assert_eq!(ending, Ending::Interrupted);
        assert!(took < Duration::from_secs(5), "took {took:?}");
    }
}
