//! A pseudo-terminal for driving the real binary as a person at a keyboard would.
//!
//! `Pty::spawn` opens a pty pair (80x24), starts the program on the slave as the leader of a
//! new session with the slave as its controlling terminal, so `\x03` written to the master
//! makes the line discipline send SIGINT to the foreground process group, as a real terminal
//! does. A reader thread appends all output to a shared buffer and answers the cursor-position
//! query (`ESC [6n`) that line editors send. `expect` matches on the visible text (escape
//! sequences, `\r` and other control bytes removed): it is a log, not a screen, so a line the
//! editor redraws shows up twice. Drop kills the process group and joins the reader; every
//! wait has a timeout. This file does not judge the output; the tests do.

use crate::run::Sandbox;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

const COLUMNS: u16 = 80;
const ROWS: u16 = 24;
/// A terminal's reply to `ESC [6n` is `ESC [row;colR`.
const CURSOR_QUERY: &[u8] = b"\x1b[6n";

pub struct Pty {
    master: File,
    child: Child,
    output: Arc<Mutex<Vec<u8>>>,
    stopping: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
    /// How far into the raw output the last successful `expect` matched.
    matched: usize,
}

impl Pty {
    /// Start the `corecoder` binary in `sandbox` (cwd `sandbox.dir`, `HOME` `sandbox.home`).
    pub fn spawn(args: &[&str], env: &[(&str, &str)], sandbox: &Sandbox) -> Pty {
        let program = env!("CARGO_BIN_EXE_corecoder");
        Pty::spawn_program(program, args, env, sandbox)
    }

    /// Start any program on a fresh terminal, with only `PATH`, `HOME`, `TERM=xterm`,
    /// `NO_COLOR=1` and `env` (which may override the last two) in its environment.
    pub fn spawn_program(
        program: &str,
        args: &[&str],
        env: &[(&str, &str)],
        sandbox: &Sandbox,
    ) -> Pty {
        let (master, slave) = open_pair();
        let mut command = Command::new(program);
        command
            .args(args)
            .current_dir(&sandbox.dir)
            .env_clear()
            .env("HOME", &sandbox.home)
            .env("TERM", "xterm")
            .env("NO_COLOR", "1");
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        command.envs(env.iter().copied());
        let child = spawn_on(command, slave, program);
        let output: Arc<Mutex<Vec<u8>>> = Arc::default();
        let stopping: Arc<AtomicBool> = Arc::default();
        let (out, stop) = (Arc::clone(&output), Arc::clone(&stopping));
        let reader_master = master.try_clone().expect("dup the pty master");
        let reader = thread::spawn(move || read_loop(reader_master, &out, &stop));
        Pty {
            master,
            child,
            output,
            stopping,
            reader: Some(reader),
            matched: 0,
        }
    }

    /// Type `text` (in raw mode "\r" is Enter, "\x03" Ctrl+C, "\x04" Ctrl+D).
    pub fn send(&mut self, text: &str) {
        self.master
            .write_all(text.as_bytes())
            .unwrap_or_else(|e| panic!("write {text:?} to the pty: {e}\n{}", self.screen()));
    }

    /// Type `line` and Enter; returns where the screen stood before, for `prompt_after`.
    pub fn enter(&mut self, line: &str) -> usize {
        let mark = self.screen().len();
        self.send(line);
        self.send("\r");
        mark
    }

    /// Wait for corecoder's prompt (`> `) drawn after `mark` (0: the first prompt); false if
    /// none came within `timeout`.
    pub fn prompt_after(&self, mark: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let screen = self.screen();
            let since = &screen.as_bytes()[mark.min(screen.len())..];
            if (mark == 0 || since.contains(&b'\n')) && screen.ends_with("> ") {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait until the visible output after the previous match contains `needle` (not empty).
    /// On timeout, the error holds the whole screen so far.
    pub fn expect(&mut self, needle: &str, timeout: Duration) -> Result<(), String> {
        assert!(!needle.is_empty(), "expect needs something to look for");
        let deadline = Instant::now() + timeout;
        loop {
            let raw = self.raw();
            let (text, ends) = visible(&raw[self.matched..]);
            if let Some(at) = find(&text, needle.as_bytes()) {
                self.matched += ends[at + needle.len() - 1];
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "did not see {needle:?} within {timeout:?}; after the last match:\n{}\n\
                     --- whole screen ---\n{}\n--------------------",
                    String::from_utf8_lossy(&text),
                    self.screen()
                ));
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Everything visible the program has printed so far.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&visible(&self.raw()).0).into_owned()
    }

    /// The exit code (128 + signal if killed by one), or None if still running at `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code().or(status.signal().map(|s| 128 + s));
            }
            if Instant::now() > deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn raw(&self) -> Vec<u8> {
        let output = self.output.lock();
        output.unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: `pid` is our unreaped child (or already exited and waited: then `kill`
        // fails harmlessly); as a session leader it leads a process group of the same id.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = self.child.wait();
        // A grandchild in another process group may still hold the slave open, so the
        // reader does not wait for EOF: it stops on the flag.
        self.stopping.store(true, Ordering::SeqCst);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// A master (close-on-exec) and its slave, with the window size set.
fn open_pair() -> (File, File) {
    // SAFETY: plain libc calls on a descriptor we own; each result is checked.
    let master = unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(fd >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        let owned = File::from(OwnedFd::from_raw_fd(fd));
        let ok = libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) == 0
            && libc::grantpt(fd) == 0
            && libc::unlockpt(fd) == 0;
        assert!(ok, "set up the pty: {}", std::io::Error::last_os_error());
        let size = libc::winsize {
            ws_row: ROWS,
            ws_col: COLUMNS,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let ok = libc::ioctl(fd, libc::TIOCSWINSZ, &size) == 0;
        assert!(ok, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
        owned
    };
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: `name` is writable for its whole length, which is what we pass.
    let failed = unsafe { libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()) };
    assert_eq!(failed, 0, "ptsname_r");
    // SAFETY: on success ptsname_r wrote a NUL-terminated string into `name`.
    let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(name.to_string_lossy().as_ref())
        .expect("open the pty slave");
    (master, slave)
}

/// Start `command` with the slave as its terminal; only the child keeps the slave open, so
/// the master reads EIO once the child and its children are gone.
fn spawn_on(mut command: Command, slave: File, program: &str) -> Child {
    let copy = |fd: &File| Stdio::from(fd.try_clone().expect("dup the pty slave"));
    command
        .stdin(copy(&slave))
        .stdout(copy(&slave))
        .stderr(copy(&slave));
    // SAFETY: between fork and exec only async-signal-safe calls (setsid, ioctl) are made.
    unsafe {
        command.pre_exec(|| {
            // A new session with the pty as its terminal: the child becomes the foreground
            // process group, so Ctrl+C on the master signals it.
            if libc::setsid() == -1 || libc::ioctl(0, libc::TIOCSCTTY, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command
        .spawn()
        .unwrap_or_else(|e| panic!("start {program}: {e}"))
}

/// Append all output to `output` until the slave is gone (EIO) or `stopping` is set.
fn read_loop(mut master: File, output: &Mutex<Vec<u8>>, stopping: &AtomicBool) {
    let mut buffer = [0u8; 4096];
    while !stopping.load(Ordering::SeqCst) {
        let mut poll = libc::pollfd {
            fd: master.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the length we pass.
        let ready = unsafe { libc::poll(&mut poll, 1, 50) };
        if ready <= 0 {
            continue;
        }
        let count = match master.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(count) => count,
        };
        let reply = {
            let mut output = output.lock().unwrap_or_else(PoisonError::into_inner);
            let start = output.len().saturating_sub(CURSOR_QUERY.len() - 1);
            output.extend_from_slice(&buffer[..count]);
            find(&output[start..], CURSOR_QUERY).map(|_| cursor_report(&output))
        };
        // Answer as a terminal would, or the line editor waits (and eats the next key).
        if let Some(reply) = reply {
            let _ = master.write_all(reply.as_bytes());
        }
    }
}

/// `ESC [row;colR` with the column after the last line's visible text (the row is a guess).
fn cursor_report(output: &[u8]) -> String {
    let line_start = output
        .iter()
        .rposition(|b| *b == b'\n' || *b == b'\r')
        .map_or(0, |at| at + 1);
    let (text, _) = visible(&output[line_start..]);
    let width = String::from_utf8_lossy(&text).chars().count();
    format!("\x1b[1;{}R", width % usize::from(COLUMNS) + 1)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The bytes a reader would see on screen (escape sequences and control bytes other than
/// `\n` and `\t` dropped), and for each kept byte, the offset in `raw` just past it.
/// An unfinished sequence at the end is dropped, so the text only grows as output arrives.
fn visible(raw: &[u8]) -> (Vec<u8>, Vec<usize>) {
    let (mut text, mut ends) = (Vec::new(), Vec::new());
    let mut at = 0;
    while at < raw.len() {
        let byte = raw[at];
        if byte == 0x1b {
            at = skip_escape(raw, at + 1);
            continue;
        }
        at += 1;
        if byte >= 0x20 && byte != 0x7f || byte == b'\n' || byte == b'\t' {
            text.push(byte);
            ends.push(at);
        }
    }
    (text, ends)
}

/// The offset just past the escape sequence whose body starts at `at` (after ESC).
fn skip_escape(raw: &[u8], at: usize) -> usize {
    let first = |from: usize, stop: fn(u8) -> bool| (from..raw.len()).find(|&i| stop(raw[i]));
    let past = |found: Option<usize>| found.map_or(raw.len(), |i| i + 1);
    match raw.get(at) {
        // CSI: parameters and intermediates, then one final byte in @..~.
        Some(b'[') => past(first(at + 1, |b| (0x40..=0x7e).contains(&b))),
        // OSC: up to BEL, or up to ST (ESC \), whose ESC is skipped as a sequence of its own.
        Some(b']') => match first(at + 1, |b| b == 0x07 || b == 0x1b) {
            Some(i) if raw[i] == 0x1b => i,
            found => past(found),
        },
        // Anything else: intermediates (space../), then one final byte.
        _ => past(first(at, |b| (0x30..=0x7e).contains(&b))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAIT: Duration = Duration::from_secs(5);

    fn must(result: Result<(), String>) {
        if let Err(screen) = result {
            panic!("{screen}");
        }
    }

    #[test]
    fn visible_text_drops_escape_sequences_and_maps_offsets() {
        let raw = b"\x1b[1mbold\x1b[0m\r\n\x1b]0;title\x07> \x1b]2;t\x1b\\\x1b(Bx\x1b[2";
        let (text, ends) = visible(raw);
        assert_eq!(String::from_utf8_lossy(&text), "bold\n> x");
        assert_eq!(ends[3], 8, "just past the d of bold");
        assert_eq!(*ends.last().expect("x"), raw.len() - 3);
    }

    #[test]
    fn cat_echoes_what_is_typed_and_expect_moves_on() {
        let sandbox = Sandbox::new("pty_cat");
        let mut pty = Pty::spawn_program("cat", &[], &[], &sandbox);
        pty.send("hello\r");
        // Once as the terminal echoes the typing, once as cat prints the line back.
        must(pty.expect("hello\nhello\n", WAIT));
        pty.send("again\r");
        must(pty.expect("again", WAIT));
        let missing = pty.expect("hello", Duration::from_millis(100));
        let screen = missing.expect_err("hello was already matched");
        assert!(screen.contains("hello\nhello\nagain"), "{screen}");
        pty.send("\x04");
        assert_eq!(pty.wait_exit(WAIT), Some(0), "{}", pty.screen());
    }

    #[test]
    fn ctrl_c_interrupts_the_foreground_process() {
        let sandbox = Sandbox::new("pty_ctrl_c");
        let mut pty = Pty::spawn_program("sh", &["-c", "echo ready; exec sleep 30"], &[], &sandbox);
        must(pty.expect("ready", WAIT));
        let started = Instant::now();
        pty.send("\x03");
        let code = pty.wait_exit(WAIT);
        assert_eq!(code, Some(128 + libc::SIGINT), "{}", pty.screen());
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn terminal_is_80_by_24_and_cursor_queries_are_answered() {
        let sandbox = Sandbox::new("pty_size");
        let script = "stty size; printf 'abc\\033[6n'; stty raw -echo; \
                      dd bs=1 count=6 2>/dev/null | od -c | head -1";
        let mut pty = Pty::spawn_program("sh", &["-c", script], &[], &sandbox);
        must(pty.expect("24 80", WAIT));
        // The query came after `abc`, so the cursor is in column 4.
        must(pty.expect("033   [   1   ;   4   R", WAIT));
    }

    #[test]
    fn drop_does_not_wait_for_a_grandchild_holding_the_terminal() {
        let sandbox = Sandbox::new("pty_drop");
        let script = "setsid sleep 5 & echo started; exec sleep 30";
        let mut pty = Pty::spawn_program("sh", &["-c", script], &[], &sandbox);
        must(pty.expect("started", WAIT));
        let started = Instant::now();
        drop(pty);
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
