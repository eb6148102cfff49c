//! `--trace FILE`: every request, SSE line and tool call of a session as JSON lines.
//!
//! For learners who want to see the raw protocol of their own session, and for bug reports.
//! The LLM client records requests and the lines of each stream (through `Tee`, which copies
//! what the SSE reader consumes); the agent records tool calls and results, and each repair
//! of the history (`repair`: how many tool messages `message::repair_tool_pairs` changed).
//! The API key is never written: it travels in a header, and headers are not traced. Writing
//! failures are ignored (a trace must never break a session).

use crate::core::message::{Outcome, ToolCall};
use serde_json::{Value, json};
use std::fs::File;
use std::io::{BufRead, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

pub struct Trace {
    file: Mutex<File>,
    started: Instant,
}

impl Trace {
    /// Start a new trace file (an existing one is replaced).
    pub fn create(path: &Path) -> std::io::Result<Trace> {
        Ok(Trace {
            // 0600: a trace holds the whole conversation (never the key).
            file: Mutex::new(
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o600)
                    .open(path)?,
            ),
            started: Instant::now(),
        })
    }

    /// One line: `{"ms": <since start>, "kind": KIND, ...fields}`.
    pub fn record(&self, kind: &str, fields: Value) {
        let mut line = json!({"ms": self.started.elapsed().as_millis() as u64, "kind": kind});
        if let (Some(line), Value::Object(fields)) = (line.as_object_mut(), fields) {
            line.extend(fields);
        }
        if let Ok(mut file) = self.file.lock() {
            let _ = writeln!(file, "{line}");
        }
    }

    /// A batch is answered: one `tool` line per call, with its result.
    pub fn record_calls(&self, calls: &[ToolCall], outcomes: &[Outcome]) {
        for (call, outcome) in calls.iter().zip(outcomes) {
            let (id, name, arguments) = (&call.id, &call.name, &call.arguments);
            let result = &outcome.text;
            let record = json!({"id": id, "name": name, "arguments": arguments, "result": result});
            self.record("tool", record);
        }
    }
}

/// A `BufRead` that hands the SSE reader its bytes and traces every line it consumes (with no
/// trace, it only hands them on).
pub struct Tee<'a> {
    inner: &'a mut dyn BufRead,
    trace: Option<&'a Trace>,
    line: Vec<u8>,
}

impl<'a> Tee<'a> {
    pub fn new(inner: &'a mut dyn BufRead, trace: Option<&'a Trace>) -> Tee<'a> {
        Tee {
            inner,
            trace,
            line: Vec::new(),
        }
    }

    fn flush_line(&mut self) {
        let text = String::from_utf8_lossy(&self.line);
        let text = text.trim_end_matches(['\r', '\n']);
        if let (Some(trace), false) = (self.trace, text.is_empty()) {
            trace.record("sse", json!({"line": text}));
        }
        self.line.clear();
    }
}

impl Read for Tee<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Tee<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        if self.trace.is_none() {
            return self.inner.consume(amount);
        }
        if let Ok(available) = self.inner.fill_buf() {
            let taken = &available[..amount.min(available.len())];
            self.line.extend_from_slice(taken);
        }
        self.inner.consume(amount);
        while let Some(end) = self.line.iter().position(|&b| b == b'\n') {
            let rest = self.line.split_off(end + 1);
            self.flush_line();
            self.line = rest;
        }
    }
}

/// A stream that ended inside a line still has that line traced.
impl Drop for Tee<'_> {
    fn drop(&mut self) {
        self.flush_line();
    }
}
