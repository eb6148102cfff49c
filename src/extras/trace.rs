//! `--trace FILE`: every request, SSE line and tool call of a session as JSON lines.
//!
//! For learners who want to see the raw protocol of their own session, and for bug reports.
//! The LLM client records requests and the lines of each stream (through `Tee`, which copies
//! what the SSE reader consumes); the agent records tool calls and results, and each repair
//! of the history (`repair`: how many tool messages `message::repair_tool_pairs` changed).
//! The first line is a header: corecoder's version, the dialect spoken (as `--provider` names
//! it: `openai`, `anthropic`, `responses`), the model, the working directory and the context
//! window, which `--replay` (`trace/replay.rs`) needs to run the session again. The app adds each task.
//! The API key is never written: it travels in a header, and headers are not traced; should it
//! show up anyway (a tool read a `.env` that holds it), every line has it replaced. Writing
//! failures are ignored (a trace must never break a session).

pub(crate) mod divergence;
pub(crate) mod replay;

use crate::core::config::{Config, Dialect};
use crate::core::message::{Outcome, ToolCall};
use serde_json::{Value, json};
use std::fs::File;
use std::io::{BufRead, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

/// The wire format a trace records, as `--provider` names it; a replay speaks it again.
pub(crate) fn dialect_key(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Chat => "openai",
        Dialect::Anthropic => "anthropic",
        Dialect::Responses => "responses",
    }
}

/// The dialect a trace's header names (`None`: one this corecoder does not speak).
pub(crate) fn dialect_named(key: &str) -> Option<Dialect> {
    [Dialect::Chat, Dialect::Anthropic, Dialect::Responses]
        .into_iter()
        .find(|dialect| dialect_key(*dialect) == key)
}
/// What stands in a trace where the API key was.
pub(crate) const KEY_REDACTED: &str = "[API key]";
/// Shorter keys are placeholders (`demo`) that could be any word, so they are not replaced.
const SHORTEST_KEY: usize = 8;

pub(crate) struct Trace {
    file: Mutex<File>,
    started: Instant,
    key: Option<String>,
}

impl Trace {
    /// Start a new trace file (an existing one is replaced) with its header line: the session
    /// in `cwd` talks to `config.model`, and `config.api_key` never appears in the file.
    pub(crate) fn create(path: &Path, config: &Config, cwd: &Path) -> std::io::Result<Trace> {
        let trace = Trace::open(path, config.api_key.clone())?;
        let dialect = dialect_key(config.dialect);
        let header = json!({"corecoder": env!("CARGO_PKG_VERSION"), "dialect": dialect,
            "model": config.model, "cwd": cwd, "max_context": config.max_context});
        trace.record("header", header);
        Ok(trace)
    }

    fn open(path: &Path, key: Option<String>) -> std::io::Result<Trace> {
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
            key: key.filter(|key| key.len() >= SHORTEST_KEY),
        })
    }

    /// One line: `{"ms": <since start>, "kind": KIND, ...fields}`.
    pub(crate) fn record(&self, kind: &str, fields: Value) {
        let mut line = json!({"ms": self.started.elapsed().as_millis() as u64, "kind": kind});
        if let (Some(line), Value::Object(fields)) = (line.as_object_mut(), fields) {
            line.extend(fields);
        }
        let mut line = line.to_string();
        if let Some(key) = self.key.as_deref().filter(|key| line.contains(key)) {
            line = line.replace(key, KEY_REDACTED);
        }
        if let Ok(mut file) = self.file.lock() {
            let _ = writeln!(file, "{line}");
        }
    }

    /// A batch is answered: one `tool` line per call, with its result.
    pub(crate) fn record_calls(&self, calls: &[ToolCall], outcomes: &[Outcome]) {
        for (call, outcome) in calls.iter().zip(outcomes) {
            let (id, name, arguments) = (&call.id, &call.name, &call.arguments);
            let result = &outcome.text;
            let record = json!({"id": id, "name": name, "arguments": arguments, "result": result});
            self.record("tool", record);
        }
    }
}

/// A `BufRead` that hands the SSE reader its bytes and traces every line it consumes, blank
/// ones too (they end events, and a replay must frame the stream as it came); with no trace,
/// it only hands them on.
pub(crate) struct Tee<'a> {
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
        if let Some(trace) = self.trace {
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
        if !self.line.is_empty() {
            self.flush_line();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_comes_first_and_the_key_never_appears() {
        let path = std::env::temp_dir().join(format!("corecoder-trace-{}", std::process::id()));
        let config = Config {
            api_key: Some("sk-0123456789".to_string()),
            model: "m1".to_string(),
            ..Config::default()
        };
        let trace = Trace::create(&path, &config, Path::new("/work")).unwrap();
        trace.record("tool", json!({"result": "KEY=sk-0123456789\n"}));
        let mut body: &[u8] = b"data: {}\n\ndata: [DONE]";
        let mut tee = Tee::new(&mut body, Some(&trace));
        std::io::copy(&mut tee, &mut std::io::sink()).unwrap();
        drop(tee);
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let header = &lines[0];
        assert_eq!(
            (&header["kind"], &header["dialect"]),
            (&json!("header"), &json!("openai"))
        );
        assert_eq!(
            (&header["model"], &header["cwd"]),
            (&json!("m1"), &json!("/work"))
        );
        assert_eq!(header["corecoder"], env!("CARGO_PKG_VERSION"));
        assert!(!text.contains("sk-0123456789"), "{text}");
        assert_eq!(lines[1]["result"], "KEY=[API key]\n");
        let sse: Vec<&Value> = lines[2..].iter().map(|l| &l["line"]).collect();
        assert_eq!(
            sse,
            [&json!("data: {}"), &json!(""), &json!("data: [DONE]")]
        );
    }
}
