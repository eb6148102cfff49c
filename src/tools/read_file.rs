//! The `read_file` tool: show a window of a text file with line numbers.
//!
//! Runs when the model calls it (read-only, no consent needed). It streams the file line by line,
//! so a huge file costs memory only for the lines shown, and says when more lines remain so the
//! model can page on with `offset`. It does not show binary files, directories or devices, and
//! caps very long lines, the total output and how far it counts past the window, so neither a
//! minified file nor a 2 GB log can flood the context or the memory. A FIFO is read without
//! waiting: only what is already in it. The reading runs on a helper thread (`bounded`), so a
//! file on a hung mount costs at most `READ_LIMIT`, or one Ctrl+C.

use crate::core::message::Outcome;
use crate::tools::ToolContext;
use crate::tools::support::bounded;
use crate::tools::support::files::resolve;
use crate::tools::support::seen::{self, Seen};
use crate::tools::support::text::echo;
use serde::Deserialize;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::time::Duration;

/// What the model is told about this tool (plain data, with the other tools' schemas).
pub(crate) use crate::tools::schemas::read_file as schema;

const DEFAULT_LIMIT: usize = 2000;
const MAX_LINE_CHARS: usize = 2000;
/// Past this much output the window ends early; the closing note tells the model where.
const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// A NUL byte in this much of the start marks a file as binary (the same test git uses).
const BINARY_PROBE: usize = 8192;
/// Bytes kept of one line; the rest of a longer line is read past, never held.
const MAX_LINE_BYTES: usize = 4 * MAX_LINE_CHARS;
/// After the window, lines are counted for the note only this far; a bigger file says so.
const COUNT_BUDGET: u64 = 32 * 1024 * 1024;
/// Reading the window and counting on takes well under a second on a local disk; a read still
/// running after this long is on a hung mount, and the tool stops waiting for it.
const READ_LIMIT: Duration = Duration::from_secs(20);

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    pub(crate) file_path: String,
    #[serde(default)]
    pub(crate) offset: Option<usize>,
    #[serde(default)]
    pub(crate) limit: Option<usize>,
}

pub fn run(args: Args, ctx: &ToolContext) -> Result<Outcome, String> {
    let path = resolve(&ctx.cwd, &args.file_path);
    let shown = echo(&path.display().to_string());
    let job = {
        let (shown, reads) = (shown.clone(), ctx.reads.clone());
        move |_: &_| read(&path, &shown, &args, &reads)
    };
    bounded::off_thread(&ctx.cancel, &ctx.reads_running, READ_LIMIT, job)
        .map_err(|why| format!("gave up reading {shown}: {why}"))?
}

/// The whole read, on the helper thread: `shown` is the path as messages may repeat it. A
/// window the model was shown of a file unchanged since is a short note (`seen.rs`).
fn read(path: &Path, shown: &str, args: &Args, reads: &Seen) -> Result<Outcome, String> {
    let (reader, kind, meta) = open_text(path, shown)?;
    let first = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).max(1);
    let regular = kind == Kind::Regular;
    if regular && reads.unchanged(path, (first, limit), &meta) {
        return Ok(Outcome::text(seen::UNCHANGED));
    }
    let window =
        read_window(reader, first, limit).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if window.total == 0 && kind == Kind::Fifo {
        return Ok(Outcome::text(
            "(a FIFO with nothing in it; not waiting for a writer)",
        ));
    }
    if window.total == 0 {
        return Ok(Outcome::text("(empty file)"));
    }
    if first > window.total {
        let total = window.total;
        return Err(format!(
            "offset {first} is past the end of {shown} ({total} lines)"
        ));
    }
    let mut text = window.text;
    let (last, total) = (window.last, window.total);
    if window.counted_all && last < total {
        let next = last + 1;
        text.push_str(&format!(
            "(… {total} lines total, showing {first}-{last}; use offset {next} to read on)"
        ));
    } else if !window.counted_all {
        text.push_str(&format!(
            "(… more than {total} lines, not all counted; showing {first}-{last}; \
             use offset {} to read on)",
            last + 1
        ));
    }
    if kind == Kind::Fifo {
        text.push_str("\n(a FIFO: showing only what was already in it, not waiting for more)");
    }
    if regular {
        reads.read(path, (first, limit), &meta, &text);
    }
    Ok(Outcome::text(text))
}

/// What `open_text` opened: a FIFO is read without waiting, so the output says so.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Regular,
    Fifo,
}

/// Open `path` for reading, refusing what is not a regular text file or a FIFO. The type is
/// checked before opening (opening a device can do things: a tape rewinds, a watchdog starts)
/// and again on what was opened, in case the path changed in between.
fn open_text(path: &Path, shown: &str) -> Result<(BufReader<Drained>, Kind, Metadata), String> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => format!("file not found: {shown}"),
        _ => format!("cannot open {shown}: {e}"),
    })?;
    let kind = meta.file_type();
    let kind = match () {
        _ if kind.is_file() => Kind::Regular,
        _ if kind.is_fifo() => Kind::Fifo,
        _ if kind.is_dir() => {
            return Err(format!(
                "{shown} is a directory, not a file (use glob to list it)"
            ));
        }
        _ if kind.is_socket() => return Err(format!("{shown} is a socket, not a file")),
        _ => return Err(format!("{shown} is a device, not a regular file")),
    };
    // O_NONBLOCK: a FIFO opens at once and a read returns what is there (EAGAIN, or EOF
    // without a writer) instead of waiting for a writer that may never come; `/proc/kmsg`
    // answers EAGAIN too. Regular files on disk ignore it.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| format!("cannot open {shown}: {e}"))?;
    let meta = file.metadata().ok().filter(|m| match kind {
        Kind::Regular => m.file_type().is_file(),
        Kind::Fifo => m.file_type().is_fifo(),
    });
    let Some(meta) = meta else {
        return Err(format!("{shown} changed while it was being opened"));
    };
    let mut reader = BufReader::with_capacity(64 * 1024, Drained(file));
    let start = reader
        .fill_buf()
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if start[..start.len().min(BINARY_PROBE)].contains(&0) {
        return Err(format!(
            "{shown} looks binary (it contains NUL bytes); read_file shows text only"
        ));
    }
    Ok((reader, kind, meta))
}

/// A file whose "nothing there yet" (EAGAIN from a FIFO opened with O_NONBLOCK) reads as the end.
struct Drained(File);

impl Read for Drained {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            other => other,
        }
    }
}

/// The numbered lines shown, the last line number shown (0 if none), the lines counted, and
/// whether that count reached the end of the file.
struct Window {
    text: String,
    last: usize,
    total: usize,
    counted_all: bool,
}

fn read_window(mut reader: impl BufRead, first: usize, limit: usize) -> io::Result<Window> {
    let mut window = Window {
        text: String::new(),
        last: 0,
        total: 0,
        counted_all: true,
    };
    let (mut line, mut consumed, mut past_window_at) = (Vec::new(), 0u64, None::<u64>);
    // Keep reading past the window only to count lines, reusing one buffer, within a budget.
    loop {
        let spent = past_window_at.map_or(0, |start| consumed - start);
        let budget = COUNT_BUDGET.saturating_sub(spent);
        let (length, whole) = read_line_capped(&mut reader, &mut line, budget)?;
        if length == 0 {
            return Ok(window);
        }
        consumed += length as u64;
        window.total += 1;
        let n = window.total;
        let in_window =
            n >= first && n < first.saturating_add(limit) && window.text.len() < MAX_OUTPUT_BYTES;
        if in_window {
            push_numbered(&mut window.text, n, &line, (length, whole));
            window.last = n;
        } else if n >= first {
            past_window_at.get_or_insert(consumed - length as u64);
        }
        // A line longer than the budget (a 2 GB file without newlines) is not read to its end.
        let spent = past_window_at.map_or(0, |start| consumed - start);
        if !whole || spent > COUNT_BUDGET {
            window.counted_all = false;
            return Ok(window);
        }
    }
}

/// Read one line into `line`, keeping at most `MAX_LINE_BYTES` of it and reading no further
/// than `budget` bytes; returns the bytes read (0 at the end) and whether the line ended
/// (newline or end of file) within the budget. A 2 GB line costs neither memory nor time.
fn read_line_capped(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    budget: u64,
) -> io::Result<(usize, bool)> {
    line.clear();
    let mut length = 0;
    loop {
        if length as u64 > budget {
            return Ok((length, false));
        }
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok((length, true));
        }
        let (used, ended) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        let room = MAX_LINE_BYTES.saturating_sub(line.len()).min(used);
        line.extend_from_slice(&available[..room]);
        reader.consume(used);
        length += used;
        if ended {
            return Ok((length, true));
        }
    }
}

/// Append `N:text\n` (the cheapest form measured to keep a separator of its own: BENCHMARKS.md,
/// issue 32), cutting a very long line and saying so. `length` is the bytes read
/// of the line (all of it when `whole`), of which `raw` may hold only the start.
fn push_numbered(out: &mut String, number: usize, raw: &[u8], (length, whole): (usize, bool)) {
    let more = if whole { "" } else { "more than " };
    let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let text = String::from_utf8_lossy(raw);
    out.push_str(&number.to_string());
    out.push(':');
    match text.char_indices().nth(MAX_LINE_CHARS) {
        None if length <= MAX_LINE_BYTES => out.push_str(&text),
        None => {
            out.push_str(&text);
            out.push_str(&format!(" … [line cut: {more}{length} bytes]"));
        }
        Some((cut, _)) if length > MAX_LINE_BYTES => {
            out.push_str(&text[..cut]);
            out.push_str(&format!(" … [line cut: {more}{length} bytes]"));
        }
        Some((cut, _)) => {
            out.push_str(&text[..cut]);
            let total = text.chars().count();
            out.push_str(&format!(" … [line cut: {total} characters]"));
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::{TempDir, test_context};

    fn read(
        dir: &TempDir,
        path: &str,
        offset: Option<usize>,
        limit: Option<usize>,
    ) -> Result<String, String> {
        let args = Args {
            file_path: path.into(),
            offset,
            limit,
        };
        run(args, &test_context(&dir.0)).map(|o| o.text)
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn whole_file_has_numbers_and_no_note() {
        let dir = TempDir::new("read-whole");
        dir.write("f.txt", "a\r\nb\nc");
        assert_eq!(read(&dir, "f.txt", None, None).unwrap(), "1:a\n2:b\n3:c\n");
    }

    #[test]
    fn window_in_the_middle_has_a_note() {
        let dir = TempDir::new("read-window");
        dir.write("f.txt", numbered(12));
        let text = read(&dir, "f.txt", Some(3), Some(2)).unwrap();
        assert_eq!(
            text,
            "3:line 3\n4:line 4\n(… 12 lines total, showing 3-4; use offset 5 to read on)"
        );
        let tail = read(&dir, "f.txt", Some(11), Some(5)).unwrap();
        assert_eq!(tail, "11:line 11\n12:line 12\n");
    }

    #[test]
    fn offset_past_end_and_empty_file() {
        let dir = TempDir::new("read-past");
        let path = dir.write("f.txt", numbered(12));
        let err = read(&dir, "f.txt", Some(50), None).unwrap_err();
        assert_eq!(
            err,
            format!("offset 50 is past the end of {} (12 lines)", path.display())
        );
        dir.write("empty.txt", "");
        assert_eq!(read(&dir, "empty.txt", None, None).unwrap(), "(empty file)");
    }

    #[test]
    fn errors_for_missing_directory_and_binary() {
        let dir = TempDir::new("read-errors");
        assert!(
            read(&dir, "nope.txt", None, None)
                .unwrap_err()
                .starts_with("file not found")
        );
        std::fs::create_dir_all(dir.0.join("d")).unwrap();
        assert!(
            read(&dir, "d", None, None)
                .unwrap_err()
                .contains("is a directory")
        );
        dir.write("b.bin", b"ab\0cd");
        assert!(
            read(&dir, "b.bin", None, None)
                .unwrap_err()
                .contains("binary")
        );
    }

    #[test]
    fn long_lines_are_cut_and_invalid_utf8_is_lossy() {
        let dir = TempDir::new("read-long");
        dir.write("min.js", "x".repeat(5000));
        let text = read(&dir, "min.js", None, None).unwrap();
        assert!(text.contains("… [line cut: 5000 characters]"));
        assert!(text.len() < 2100);
        dir.write("latin1.txt", b"caf\xe9\n");
        assert_eq!(
            read(&dir, "latin1.txt", None, None).unwrap(),
            "1:caf\u{fffd}\n"
        );
    }

    #[test]
    fn devices_and_sockets_are_refused_without_blocking() {
        let dir = TempDir::new("read-special");
        let null = read(&dir, "/dev/null", None, None).unwrap_err();
        assert!(null.contains("is a device"), "{null}");
        let zero = read(&dir, "/dev/zero", None, None).unwrap_err();
        assert!(zero.contains("is a device"), "{zero}");
        let socket = dir.0.join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let err = read(&dir, "s.sock", None, None).unwrap_err();
        assert!(err.contains("is a socket"), "{err}");
    }

    #[test]
    fn a_fifo_gives_what_is_in_it_and_never_waits() {
        let dir = TempDir::new("read-fifo");
        let fifo = dir.0.join("pipe");
        let name = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let empty = read(&dir, "pipe", None, None).unwrap();
        assert!(empty.contains("nothing in it"), "{empty}");
        // A writer that keeps the pipe open: the read must still return at once.
        let mut writer = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&fifo)
            .unwrap();
        std::io::Write::write_all(&mut writer, b"one\ntwo\n").unwrap();
        let text = read(&dir, "pipe", None, None).unwrap();
        assert!(text.starts_with("1:one\n2:two\n"), "{text}");
        assert!(text.contains("not waiting for more"), "{text}");
    }

    /// A 2 GB sparse file after a text start: one endless line of NULs past the probe. It is
    /// neither loaded nor counted to its end.
    #[test]
    fn a_two_gigabyte_file_costs_only_what_is_shown() {
        let dir = TempDir::new("read-huge");
        let path = dir.write("huge.log", numbered(2000));
        let file = OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(2 << 30).unwrap();
        let started = std::time::Instant::now();
        let text = read(&dir, "huge.log", Some(1999), Some(10)).unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert!(
            text.starts_with("1999:line 1999\n2000:line 2000\n2001:"),
            "{}",
            &text[..60]
        );
        assert!(text.contains("[line cut: "), "{}", &text[..200]);
        assert!(
            text.contains("not all counted"),
            "{}",
            &text[text.len() - 200..]
        );
        assert!(text.len() < 20_000, "{}", text.len());
    }

    #[test]
    fn huge_offset_and_limit_are_fine() {
        let dir = TempDir::new("read-huge-args");
        dir.write("f.txt", numbered(3));
        let err = read(&dir, "f.txt", Some(usize::MAX), Some(usize::MAX)).unwrap_err();
        assert!(err.contains("past the end"), "{err}");
        let all = read(&dir, "f.txt", Some(1), Some(usize::MAX)).unwrap();
        assert_eq!(all, "1:line 1\n2:line 2\n3:line 3\n");
    }

    #[test]
    fn symlinks_are_followed_and_dotdot_resolves() {
        let dir = TempDir::new("read-links");
        dir.write("sub/real.txt", "real\n");
        std::os::unix::fs::symlink(dir.0.join("sub/real.txt"), dir.0.join("link.txt")).unwrap();
        assert_eq!(read(&dir, "link.txt", None, None).unwrap(), "1:real\n");
        assert_eq!(
            read(&dir, "sub/../sub/real.txt", None, None).unwrap(),
            "1:real\n"
        );
        std::os::unix::fs::symlink(dir.0.join("gone"), dir.0.join("dangling")).unwrap();
        let err = read(&dir, "dangling", None, None).unwrap_err();
        assert!(err.starts_with("file not found"), "{err}");
    }

    #[test]
    fn every_property_of_its_schema_is_a_field_of_its_args() {
        crate::tools::test_support::check_schema_fits::<Args>(&schema());
    }
}
