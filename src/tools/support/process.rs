//! Running a shell command as a child process group and collecting what it prints.
//!
//! Used only by the `bash` tool (`bash.rs` decides *whether* and *what* to run, and how to
//! present the result). This file starts `bash -c` (or `sh -c`), reads stdout and stderr with
//! `poll(2)` until they close, and kills the whole process group on timeout or Ctrl+C.
//! It applies the session's `ShellSafety` to the child (secret-looking variables removed, the
//! sandbox entered just before `exec`; see `sandbox.rs`) but does not choose it.
//! It knows nothing of the danger gate, `cd` tracking or output formatting.

use crate::extras::sandbox::ShellSafety;
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Per stream we keep the first and the last this many bytes; the middle is read and dropped,
/// so a command printing gigabytes neither blocks on a full pipe nor fills our memory.
const KEEP_BYTES: usize = 1 << 20;
/// How often we look at the shell, the clock and Ctrl+C while no output arrives.
const POLL_MILLIS: i32 = 25;
/// How long we keep reading after the shell ended, for output still in flight. Past it,
/// whatever still holds the pipes (a `sleep 100 &`) is killed.
const GRACE: Duration = Duration::from_millis(500);

/// Run `command` in `cwd` until it ends, `timeout` passes or `cancel` is set.
pub fn run(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    cancel: &AtomicBool,
    safety: &ShellSafety,
) -> Result<Finished, String> {
    let mut child = spawn(command, cwd, safety)?;
    collect(&mut child, timeout, cancel)
}

fn spawn(command: &str, cwd: &Path, safety: &ShellSafety) -> Result<Child, String> {
    // Built here, before the fork; the child only enters it. Closed when this returns.
    let confinement = safety.confinement()?;
    let shell = |program: &str| {
        let mut shell = Command::new(program);
        shell
            .arg("-c")
            .arg(command)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so a timeout can kill everything the command started.
            .process_group(0);
        for (name, value) in std::env::vars_os() {
            if safety.hides(&name.to_string_lossy(), &value.to_string_lossy()) {
                shell.env_remove(name);
            }
        }
        if let Some(confinement) = &confinement {
            // SAFETY: the closure makes a few syscalls and allocates nothing, which is what
            // may run between fork and exec.
            unsafe { shell.pre_exec(confinement.entry()) };
        }
        shell.spawn()
    };
    match shell("bash") {
        Err(e) if e.kind() == ErrorKind::NotFound => shell("sh"),
        started => started,
    }
    .map_err(|e| format!("could not start the shell: {e}"))
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
    pub stdout: Stream,
    pub stderr: Stream,
    pub ending: Ending,
    /// The shell ended but something it started kept the pipes open, so we killed it.
    pub stragglers_killed: bool,
}

/// Read both pipes until they close, while watching the shell, the deadline and Ctrl+C.
///
/// One thread and `poll(2)` rather than a reader thread per pipe: a process that left our
/// group (`setsid`) can hold a pipe open forever, and a thread blocked in `read` on it could
/// never be joined. `poll` lets us stop reading whenever we decide to.
fn collect(child: &mut Child, timeout: Duration, cancel: &AtomicBool) -> Result<Finished, String> {
    let group = child.id() as i32;
    let mut stdout = Stream::new(child.stdout.take().map(OwnedFd::from));
    let mut stderr = Stream::new(child.stderr.take().map(OwnedFd::from));
    let deadline = Instant::now() + timeout;
    let mut ending = None;
    // Only looked at once `ending` is known; then it is set to the end of the grace period.
    let mut stop_reading_at = deadline;
    let stragglers_killed = loop {
        read_ready(&mut stdout, &mut stderr);
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

/// One pipe being read. We keep its first `KEEP_BYTES`, its last `KEEP_BYTES` or so, and
/// count what fell between.
#[derive(Default)]
pub struct Stream {
    /// `None` once the pipe reached end of file.
    file: Option<File>,
    pub head: Vec<u8>,
    pub tail: Vec<u8>,
    pub dropped: usize,
}

impl Stream {
    fn new(fd: Option<OwnedFd>) -> Stream {
        let file = fd.map(File::from);
        Stream {
            file,
            ..Stream::default()
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = KEEP_BYTES.saturating_sub(self.head.len()).min(bytes.len());
        self.head.extend_from_slice(&bytes[..room]);
        self.tail.extend_from_slice(&bytes[room..]);
        // Trim only when twice over, so the copying stays rare.
        if self.tail.len() > 2 * KEEP_BYTES {
            let excess = self.tail.len() - KEEP_BYTES;
            self.tail.drain(..excess);
            self.dropped += excess;
        }
    }

    pub fn text(&self) -> String {
        let bytes = [self.head.as_slice(), self.tail.as_slice()].concat();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Wait up to `POLL_MILLIS` for either pipe to have data (or close), then read what is there.
/// With both pipes closed, this is just the pause between two looks at the shell.
fn read_ready(stdout: &mut Stream, stderr: &mut Stream) {
    let streams = [stdout, stderr];
    let mut fds: Vec<libc::pollfd> = streams
        .iter()
        .filter_map(|s| s.file.as_ref())
        .map(|file| libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `fds` is a live, exclusively borrowed array of exactly `fds.len()` pollfds.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, POLL_MILLIS) };
    // Nothing yet, or a signal interrupted the wait: the caller simply looks again.
    if ready <= 0 {
        return;
    }
    let mut buffer = [0u8; 64 * 1024];
    for stream in streams {
        // `poll` said readable (or closed), so this `read` does not block.
        if let Some(file) = &mut stream.file
            && fds
                .iter()
                .any(|p| p.fd == file.as_raw_fd() && p.revents != 0)
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
/// hooks (`hooks.rs`) and MCP servers (`mcp_wire.rs`) each start in a group of their own.
pub fn kill_group(group: i32) {
    // `kill(-1)` would signal every process we may signal; never let a bad id get there.
    if group > 1 {
        // SAFETY: kill(2) takes two integers and touches no memory of ours.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut capture = Stream::default();
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
}
