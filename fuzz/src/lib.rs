//! The fuzz targets: one function per parser that input from outside can reach.
//!
//! Each binary in `src/bin/` hands AFL++'s inputs to one of these (`afl::fuzz!`), and `replay`
//! runs them on saved files without AFL. A target panics (AFL records a crash) when corecoder
//! panics or when one of the invariants checked here breaks; everything else is a pass. Inputs
//! are raw bytes: text targets decode them lossily, so invalid UTF-8 still reaches the parser
//! the way `sse::read_stream` would pass it. Nothing here talks to a network or a model.

use corecoder::client::llm::Llm;
use corecoder::client::sse;
use corecoder::core::config::Config;
use corecoder::core::consent::{Consent, Mode};
use corecoder::core::dispatch;
use corecoder::core::event::Event;
use corecoder::core::message;
use corecoder::extras::{hooks, mcp, mcp_wire, session};
use corecoder::tools::ToolContext;
use corecoder::tools::support::danger;
use corecoder::tools::support::shell_words::{self, SimpleCommand};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Every target by name, for `replay`.
pub const TARGETS: [&str; 8] = [
    "sse",
    "cd",
    "split",
    "danger",
    "edit",
    "session",
    "hooks",
    "mcp_config",
];

/// A directory of this process for the targets that need files; removed when dropped.
pub struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new(target: &str) -> Scratch {
        let name = format!("corecoder-fuzz-{target}-{}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&dir).expect("create the scratch directory");
        Scratch { dir }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Run target `name` on one input (`replay`, and the one place that knows every target).
pub fn run(name: &str, scratch: &Scratch, data: &[u8]) {
    match name {
        "sse" => sse_stream(data),
        "cd" => cd_tracker(data),
        "split" => command_splitter(data),
        "danger" => danger_gate(data),
        "edit" => edit_file(scratch, data),
        "session" => session_id(scratch, data),
        "hooks" => hooks_file(scratch, data),
        "mcp_config" => mcp_config(scratch, data),
        "mcp_wire" => mcp_lines(scratch, data),
        _ => panic!("unknown target {name}; known: {TARGETS:?} and mcp_wire"),
    }
}

/// The SSE reader end to end: line splitting, `\r\n`, lossy UTF-8, events, fragment reassembly.
pub fn sse_stream(data: &[u8]) {
    let cancel = AtomicBool::new(false);
    let mut announced = Vec::new();
    let mut on_delta = |delta: Event| {
        if let Event::CallReady(call) = delta {
            announced.push(call.clone());
        }
    };
    let Ok(reply) = sse::read_stream(
        &mut &data[..],
        &cancel,
        &corecoder::client::http::Limits::NONE,
        &mut on_delta,
    ) else {
        return;
    };
    // The history we send back needs an id on every call.
    assert!(reply.tool_calls.iter().all(|call| !call.id.is_empty()));
    // An announced call may already be running (read-only calls start early), so it must be
    // one of the reassembled calls, name and arguments alike, and no call announced twice:
    // each announcement takes a different final call.
    let mut unclaimed: Vec<&message::ToolCall> = reply.tool_calls.iter().collect();
    for call in &announced {
        let same = |c: &&message::ToolCall| c.name == call.name && c.arguments == call.arguments;
        let Some(at) = unclaimed.iter().position(same) else {
            panic!(
                "announced {call:?}, but the reply's calls are {:?}",
                reply.tool_calls
            );
        };
        unclaimed.remove(at);
    }
}

/// The cd tracker: at most one target per top-level `cd`.
pub fn cd_tracker(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let targets = shell_words::cd::cd_targets(&line);
    let commands = shell_words::split(&line);
    let is_cd = |c: &&SimpleCommand| c.depth == 0 && c.words.first().is_some_and(|w| w == "cd");
    assert!(targets.len() <= commands.iter().filter(is_cd).count());
}

/// The danger gate's command splitter on its own.
pub fn command_splitter(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let _ = shell_words::split(&line);
}

/// The danger gate, which also splits and recurses into `sh -c`/`eval` scripts.
pub fn danger_gate(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    let _ = danger::check(&line);
}

/// `edit_file` through the tool dispatcher. Input: file bytes, 0xFF, old_string, 0xFF,
/// new_string. A failed edit must leave the file byte for byte; a done one must be exactly the
/// replacement: the text before the one occurrence of old_string, new_string, the text after
/// (in a `\r\n` file both strings get its line endings). An edit is refused only when it
/// has to be.
pub fn edit_file(scratch: &Scratch, data: &[u8]) {
    let mut parts = data.splitn(3, |&b| b == 0xFF);
    let file = parts.next().unwrap_or_default();
    let old = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let new = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let path = scratch.dir.join("f.txt");
    std::fs::write(&path, file).expect("write the file to edit");
    let args = json!({"file_path": "f.txt", "old_string": old, "new_string": new}).to_string();
    let outcome = dispatch::run("edit_file", &args, &tool_context(&scratch.dir));
    let after = std::fs::read(&path).expect("read the edited file");
    let expected = expected_edit(file, &old, &new);
    if outcome.text.starts_with("Edited ") {
        let Some(expected) = expected else {
            panic!("reported an edit it had to refuse: {}", outcome.text);
        };
        assert!(
            after == expected.as_bytes(),
            "not the replacement: {after:?}"
        );
    } else {
        assert!(
            after == file,
            "a failed edit changed the file: {}",
            outcome.text
        );
        assert!(
            expected.is_none(),
            "refused a possible edit: {}",
            outcome.text
        );
    }
}

/// What a successful edit leaves, worked out without the tool; None when it must be refused
/// (not UTF-8, empty or unchanged old_string, not exactly one occurrence).
fn expected_edit(file: &[u8], old: &str, new: &str) -> Option<String> {
    let text = std::str::from_utf8(file).ok()?;
    if old.is_empty() || old == new {
        return None;
    }
    let crlf = text.contains("\r\n") && !old.contains('\r') && !new.contains('\r');
    let (old, new) = match crlf {
        true => (old.replace('\n', "\r\n"), new.replace('\n', "\r\n")),
        false => (old.to_string(), new.to_string()),
    };
    let at = text.find(&old)?;
    let rest = &text[at + old.len()..];
    if rest.contains(&old) {
        return None;
    }
    Some(format!("{}{new}{rest}", &text[..at]))
}

fn tool_context(dir: &Path) -> ToolContext {
    let config = Config {
        base_url: "http://127.0.0.1:9/v1".to_string(),
        ..Config::default()
    };
    let (llm, cancel) = (Arc::new(Llm::new(config)), Arc::new(AtomicBool::new(false)));
    let consent = Consent::new(Mode::AllowAll);
    corecoder::Extras::default().tool_context(dir, &cancel, (&llm, &consent))
}

/// Session ids: a path that is accepted sits directly in the sessions directory.
pub fn session_id(scratch: &Scratch, data: &[u8]) {
    let raw = String::from_utf8_lossy(data);
    let dir = scratch.dir.join("sessions");
    let sanitized = session::sanitize_id(&raw);
    let Ok(path) = session::path_for(&dir, &raw) else {
        assert!(
            sanitized.is_err(),
            "sanitize_id accepted what path_for refused"
        );
        return;
    };
    let id = sanitized.expect("path_for accepted what sanitize_id refused");
    assert_eq!(path.parent(), Some(dir.as_path()));
    assert_eq!(path.file_name(), Some(format!("{id}.jsonl").as_ref()));
    assert!(!matches!(id.as_str(), "" | "." | ".."));
}

/// The hooks file reader (user file only, no project file).
pub fn hooks_file(scratch: &Scratch, data: &[u8]) {
    let file = scratch.dir.join("hooks.json");
    std::fs::write(&file, data).expect("write the hooks file");
    let (_hooks, _warnings) = hooks::Hooks::load(&[file]);
}

/// The MCP config reader.
pub fn mcp_config(scratch: &Scratch, data: &[u8]) {
    let file = scratch.dir.join("mcp.json");
    std::fs::write(&file, data).expect("write the MCP config");
    let (_configs, _warnings) = corecoder::extras::mcp_config::load_config(&[file]);
}

/// The MCP wire's line handler, reached the only way it can be: a "server" (`cat`) prints the
/// input as its stdout while we wait for the reply to request 1. Slow (a process per input).
pub fn mcp_lines(scratch: &Scratch, data: &[u8]) {
    let file = scratch.dir.join("server-stdout");
    std::fs::write(&file, data).expect("write the server's output");
    let config = mcp::ServerConfig {
        name: "fuzz".to_string(),
        command: "cat".to_string(),
        args: vec![file.display().to_string()],
        env: Vec::new(),
        timeout: None,
    };
    let link = mcp_wire::Link::spawn(&config).expect("start cat");
    let never = std::sync::atomic::AtomicBool::new(false);
    let _ = (link.wire).request("initialize", json!({}), Duration::from_secs(5), &never);
}
