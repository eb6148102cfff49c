//! `corecoder --acp`: the Agent Client Protocol (v1) on stdio, for an editor (Zed, JetBrains,
//! Neovim, Emacs) to drive corecoder. JSON-RPC 2.0 one message a line (`acp/jsonrpc.rs`); stdout
//! carries only the protocol, notes and logs go to stderr.
//!
//! One thread reads stdin and hands each message over a channel; it also sets a session's
//! cancel flag the moment `session/cancel` arrives, so a running turn stops as Ctrl+C stops the
//! REPL's. This thread serves: `initialize`, `session/new` and `session/load` (an `Agent` per
//! session, set up as the REPL's, in the session's `cwd`), `session/prompt` (`acp/turn.rs`,
//! which turns the loop's events into `session/update`s and asks consent through
//! `session/request_permission`), `session/set_mode` (plan mode, as `/plan` switches it). The
//! loop itself is the REPL's, unchanged. It does not offer `fs/*` or `terminal/*`
//! (docs/editor.md says why).

pub(crate) mod jsonrpc;
pub(crate) mod load;
pub(crate) mod new_session;
pub(crate) mod turn;
pub(crate) mod updates;

use crate::app::flags::{Resume, RunOptions};
use crate::app::setup::{self, Started};
use crate::core::agent::Agent;
use crate::core::consent::{Mode, Plan};
use crate::core::event::Error;
use crate::tools::support::text::printable;
use jsonrpc::{INVALID_PARAMS, Incoming, METHOD_NOT_FOUND, NOT_FOUND, Out};
use new_session::{mcp_servers, project_in};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// The protocol version spoken: ACP v1, the SDK's stable one.
const PROTOCOL_VERSION: u64 = 1;

/// Each session's cancel flag (its `Agent`'s), for the reader to set on `session/cancel`.
type Cancels = Mutex<HashMap<String, Arc<AtomicBool>>>;

/// A JSON-RPC error: its code and message.
pub(crate) type Failure = (i64, String);

/// Serve ACP until the client closes stdin; the exit code is 0 then.
pub fn run(options: RunOptions) -> Result<i32, Error> {
    let (task, resume) = (options.prompt.is_some(), options.resume.is_some());
    if task || resume || options.demo || options.replay.is_some() {
        let why = "--acp serves an editor, whose sessions choose the task: \
                   not with -p, -r, -c, --demo or --replay";
        return Err(Error::Usage(why.to_string()));
    }
    let cancels = Cancels::default();
    let (sender, receiver) = mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(|| read_stdin(&sender, &cancels));
        let mut server = Server {
            out: Out::new(),
            options: &options,
            sessions: HashMap::new(),
            cancels: &cancels,
            backlog: VecDeque::new(),
        };
        server.serve(&receiver);
    });
    Ok(0)
}

/// The reader: every message goes to the serving thread; a cancel also sets its flag at once,
/// since the serving thread is busy with the turn it stops.
fn read_stdin(sender: &Sender<Incoming>, cancels: &Cancels) {
    let mut stdin = std::io::stdin().lock();
    loop {
        let message = jsonrpc::read_message(&mut stdin);
        if let Incoming::Notification { method, params } = &message
            && method == "session/cancel"
            && let Some(id) = params.get("sessionId").and_then(Value::as_str)
            && let Some(flag) = cancels.lock().ok().and_then(|c| c.get(id).cloned())
        {
            flag.store(true, Ordering::Relaxed);
        }
        let closed = matches!(message, Incoming::Closed);
        if sender.send(message).is_err() || closed {
            return;
        }
    }
}

struct Server<'a> {
    out: Out,
    options: &'a RunOptions,
    sessions: HashMap<String, Agent>,
    cancels: &'a Cancels,
    /// Messages that came while a turn waited for a permission answer, served after it.
    backlog: VecDeque<Incoming>,
}

impl Server<'_> {
    fn serve(&mut self, receiver: &Receiver<Incoming>) {
        loop {
            let Some(message) = self.backlog.pop_front().or_else(|| receiver.recv().ok()) else {
                return;
            };
            match message {
                Incoming::Closed => return,
                Incoming::Malformed(code, why) => self.out.error(&Value::Null, code, &why),
                Incoming::Request { id, method, params } => {
                    match self.request(&method, &params, receiver) {
                        Ok(result) => self.out.result(&id, result),
                        Err((code, why)) => self.out.error(&id, code, &why),
                    }
                }
                // `session/cancel` was acted on by the reader; others we do not know are
                // dropped, as JSON-RPC has notifications dropped. Late answers too.
                Incoming::Notification { .. } | Incoming::Response { .. } => {}
            }
        }
    }

    fn request(
        &mut self,
        method: &str,
        params: &Value,
        receiver: &Receiver<Incoming>,
    ) -> Result<Value, Failure> {
        match method {
            "initialize" => Ok(initialize()),
            "session/new" => self.new_session(params, None),
            "session/load" => {
                let id = text_param(params, "sessionId")?;
                self.new_session(params, Some(id))
            }
            "session/prompt" => {
                let id = text_param(params, "sessionId")?;
                let agent = (self.sessions.get_mut(&id)).ok_or_else(|| unknown_session(&id))?;
                let Some(blocks) = params.get("prompt").and_then(Value::as_array) else {
                    return Err((INVALID_PARAMS, "prompt: an array of content blocks".into()));
                };
                let link = turn::Link {
                    out: &mut self.out,
                    receiver,
                    backlog: &mut self.backlog,
                };
                let stop = turn::prompt(agent, &id, blocks, link)?;
                Ok(json!({ "stopReason": stop }))
            }
            "session/set_mode" => {
                let id = text_param(params, "sessionId")?;
                let agent = (self.sessions.get_mut(&id)).ok_or_else(|| unknown_session(&id))?;
                agent.consent.plan = match text_param(params, "modeId")?.as_str() {
                    updates::PLAN_MODE => Plan::On,
                    updates::DEFAULT_MODE => Plan::Off,
                    other => return Err((INVALID_PARAMS, format!("modeId: no mode {other}"))),
                };
                Ok(json!({}))
            }
            _ => Err((METHOD_NOT_FOUND, format!("method not found: {method}"))),
        }
    }

    /// `session/new`, or `session/load` of `resume`: an agent set up in the session's `cwd`,
    /// with the client's stdio MCP servers beside the configured ones. A loaded session's
    /// conversation is sent as updates before the answer.
    fn new_session(&mut self, params: &Value, resume: Option<String>) -> Result<Value, Failure> {
        let cwd = PathBuf::from(text_param(params, "cwd")?);
        if !cwd.is_absolute() || !cwd.is_dir() {
            let why = format!(
                "cwd: {} is not an absolute path to a directory",
                cwd.display()
            );
            return Err((INVALID_PARAMS, why));
        }
        let (servers, notes) = mcp_servers(params.get("mcpServers"))?;
        let mut options = self.options.clone();
        options.project = project_in(&cwd, &options.project);
        options.resume = resume.clone().map(Resume::Id);
        let mode = match options.approve_all {
            true => Mode::AllowAll,
            false => Mode::Ask,
        };
        let started = setup::start_in(&options, mode, cwd, &servers);
        let Started { agent, notes: more } = started.map_err(|e| match &resume {
            Some(_) => (NOT_FOUND, e.to_string()),
            None => (jsonrpc::INTERNAL_ERROR, e.to_string()),
        })?;
        notes.iter().chain(&more).for_each(|note| log(note));
        let id = match agent.extras.log() {
            Some(log) => log.id().to_string(),
            None => format!("unsaved-{}-{}", std::process::id(), self.sessions.len() + 1),
        };
        if let Ok(mut cancels) = self.cancels.lock() {
            cancels.insert(id.clone(), agent.cancel.clone());
        }
        let modes = updates::modes(agent.consent.plan, self.options.approve_all);
        let answer = match resume {
            Some(_) => json!({ "modes": modes }),
            None => json!({ "sessionId": id, "modes": modes }),
        };
        if resume.is_some() {
            load::conversation(&agent, &id, &mut self.out);
        }
        self.sessions.insert(id, agent);
        Ok(answer)
    }
}

/// What corecoder offers: loading saved sessions; prompts of text and resource links only;
/// stdio MCP servers only (every agent must take those; `http` and `sse` it does not speak).
fn initialize() -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": true,
            "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
            "mcpCapabilities": {"http": false, "sse": false},
        },
        "authMethods": [],
        "agentInfo": {"name": "corecoder", "title": "corecoder", "version": env!("CARGO_PKG_VERSION")},
    })
}

pub(crate) fn text_param(params: &Value, key: &str) -> Result<String, Failure> {
    match params.get(key).and_then(Value::as_str) {
        Some(text) => Ok(text.to_string()),
        None => Err((INVALID_PARAMS, format!("{key}: a string is required"))),
    }
}

fn unknown_session(id: &str) -> Failure {
    (
        NOT_FOUND,
        format!("no session {id} (start one with session/new)"),
    )
}

/// A line on stderr, the only place besides the protocol: escapes shown, not obeyed.
pub(crate) fn log(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "corecoder: {}", printable(text));
}
