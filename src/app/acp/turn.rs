//! One `session/prompt`: the prompt's blocks become the task, the agent runs it as the REPL runs
//! a line (`Agent::run_task`), and what the loop tells (`Event`) goes to the client as it
//! happens, as `session/update`s: answer and reasoning chunks, each tool call (`tool_call`,
//! then `tool_call_update` with its result, an edit's diff) and the todo list (`plan`).
//!
//! Consent is the REPL's: the loop asks only what the danger gate, the rules and the mode leave
//! to the user, and this file puts that question to the client (`session/request_permission`)
//! and waits for its answer on the channel, keeping what else arrives for later. An answer of
//! `cancelled`, an error, or a cancelled turn is a no. It decides nothing about what runs.

use crate::app::acp::jsonrpc::{INTERNAL_ERROR, INVALID_PARAMS, Incoming, Out};
use crate::app::acp::updates::{kind, path_of, plan_entries, read_text, text_content, tool_call};
use crate::app::acp::{Failure, log};
use crate::core::agent::Agent;
use crate::core::consent::Answer;
use crate::core::event::{Error, Event, Finish, ResultKind};
use crate::extras::consent_rules::always::NOT_OFFERED;
use crate::tools::preview;
use serde_json::{Value, json};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// The serving thread's side of the connection, lent to one turn.
pub(crate) struct Link<'a> {
    pub(crate) out: &'a mut Out,
    pub(crate) receiver: &'a Receiver<Incoming>,
    /// Where messages that arrive while a permission answer is awaited wait their turn.
    pub(crate) backlog: &'a mut VecDeque<Incoming>,
}

/// A call shown to the client and not answered yet.
struct Open {
    id: String,
    name: String,
    path: Option<PathBuf>,
    /// The file before an edit ran, for the diff: `Some(None)` when it did not exist, `None`
    /// when it could not be read whole (then no diff is shown).
    old: Option<Option<String>>,
    arguments: Option<String>,
}

struct Turn<'a> {
    link: Link<'a>,
    session: &'a str,
    cwd: PathBuf,
    cancel: Arc<AtomicBool>,
    /// Call ids are `c{history length at the turn's start}-{n}`: unique in the session.
    prefix: usize,
    calls: usize,
    /// Calls whose arguments were complete while the reply streamed: name and arguments.
    ready: Vec<(String, String)>,
    open: VecDeque<Open>,
    /// What the call about to be asked about would do (its diff, its command).
    preview: Option<String>,
}

/// Run one prompt to its stop reason: `end_turn`, `max_tokens`, `max_turn_requests`,
/// `cancelled` or `refusal`. A failure the loop cannot go on from is a JSON-RPC error.
pub(crate) fn prompt(
    agent: &mut Agent,
    session: &str,
    blocks: &[Value],
    link: Link,
) -> Result<&'static str, Failure> {
    let task = task_of(blocks)?;
    let cancel = agent.cancel.clone();
    let turn = RefCell::new(Turn {
        link,
        session,
        cwd: agent.cwd.clone(),
        cancel: cancel.clone(),
        prefix: agent.history().len(),
        calls: 0,
        ready: Vec::new(),
        open: VecDeque::new(),
        preview: None,
    });
    agent.extras.account().trace_task(&task, agent.consent.plan);
    let mut on_event = |event: Event| turn.borrow_mut().event(event);
    let mut ask =
        |name: &str, summary: &str, always: &str| turn.borrow_mut().ask(name, summary, always);
    let result = agent.run_task(&task, &mut on_event, &mut ask);
    let cancelled = cancel.swap(false, Ordering::Relaxed);
    let mut turn = turn.into_inner();
    match result {
        Ok(Finish::Answer(_)) => Ok("end_turn"),
        Ok(Finish::CutOff(_)) => Ok("max_tokens"),
        Ok(Finish::RoundCap) => Ok("max_turn_requests"),
        Err(_) if cancelled => Ok("cancelled"),
        Err(Error::Interrupted) => Ok("cancelled"),
        Err(Error::Refused(why)) => {
            turn.say(&format!("A hook refused the prompt: {why}"));
            Ok("refusal")
        }
        Err(e @ (Error::Looping(_) | Error::Budget(_))) => {
            turn.say(&format!("\n\n({e})"));
            Ok("end_turn")
        }
        Err(e) => Err((INTERNAL_ERROR, e.to_string())),
    }
}

/// The task: text blocks as they are, a resource link as a mention of its path (or URI).
fn task_of(blocks: &[Value]) -> Result<String, Failure> {
    let mut task = String::new();
    for block in blocks {
        let text = |key: &str| block.get(key).and_then(Value::as_str);
        match (
            block.get("type").and_then(Value::as_str),
            text("text"),
            text("uri"),
        ) {
            (Some("text"), Some(text), _) => task.push_str(text),
            (Some("resource_link"), _, Some(uri)) => {
                let path = uri.strip_prefix("file://").unwrap_or(uri);
                task.push_str(&format!(" @{path} "));
            }
            (Some(kind @ ("image" | "audio" | "resource")), _, _) => {
                let why = format!("prompt: {kind} blocks are not taken (see promptCapabilities)");
                return Err((INVALID_PARAMS, why));
            }
            _ => {
                return Err((
                    INVALID_PARAMS,
                    format!("prompt: a block ACP does not define: {block}"),
                ));
            }
        }
    }
    match task.trim().is_empty() {
        true => Err((
            INVALID_PARAMS,
            "prompt: there is no text to act on".to_string(),
        )),
        false => Ok(task.trim().to_string()),
    }
}

impl Turn<'_> {
    fn update(&mut self, update: Value) {
        let params = json!({"sessionId": self.session, "update": update});
        self.link.out.notify("session/update", params);
    }

    fn say(&mut self, text: &str) {
        let chunk = json!({"type": "text", "text": text});
        self.update(json!({"sessionUpdate": "agent_message_chunk", "content": chunk}));
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Text(text) => self.say(text),
            Event::Reasoning(text) => {
                let chunk = json!({"type": "text", "text": text});
                self.update(json!({"sessionUpdate": "agent_thought_chunk", "content": chunk}));
            }
            Event::Requesting { .. } => self.ready.clear(),
            Event::CallReady(call) => {
                (self.ready).push((call.name.clone(), call.arguments.clone()))
            }
            Event::Retry { why, .. } => self.say(&format!("\n\n(retrying: {why})\n\n")),
            Event::ToolCall { name, summary } => self.call(name, summary),
            Event::Proposed { preview, .. } => self.preview = Some(preview.to_string()),
            Event::ToolResult { name, text, kind } => self.result(name, text, kind),
            Event::Notice(text) => log(text),
            Event::Fallback { .. } | Event::Replied { .. } => {}
        }
    }

    /// A call about to be ruled on: shown as `pending`, with where it reads or writes.
    fn call(&mut self, name: &str, summary: &str) {
        self.calls += 1;
        let id = format!("c{}-{}", self.prefix, self.calls);
        // Its whole arguments, if it was announced while streaming (the summary is cut at 80).
        let same = |(n, a): &(String, String)| n == name && preview::summary(n, a) == summary;
        let arguments = (self.ready.iter().position(same)).map(|i| self.ready.remove(i).1);
        let path = path_of(name, arguments.as_deref(), summary, &self.cwd);
        let old = match (name, &path) {
            ("write_file" | "edit_file", Some(path)) => read_text(path),
            _ => None,
        };
        let shown = tool_call(&id, name, summary, path.as_deref(), arguments.as_deref());
        self.update(shown);
        let (name, arguments) = (name.to_string(), arguments);
        (self.open).push_back(Open {
            id,
            name,
            path,
            old,
            arguments,
        });
    }

    /// The next open call's result (results come in call order): its text, an edit's diff,
    /// and a todo list as the plan.
    fn result(&mut self, name: &str, text: &str, kind: ResultKind) {
        let Some(open) = self.open.pop_front().filter(|open| open.name == name) else {
            return;
        };
        let mut content = vec![text_content(text)];
        if kind == ResultKind::Ran
            && let (Some(path), Some(old)) = (&open.path, &open.old)
            && let Some(Some(new)) = read_text(path)
        {
            let path = path.display().to_string();
            let diff = json!({"type": "diff", "path": path, "oldText": old, "newText": new});
            content.insert(0, diff);
        }
        let status = if kind == ResultKind::Ran {
            "completed"
        } else {
            "failed"
        };
        self.update(json!({
            "sessionUpdate": "tool_call_update", "toolCallId": open.id, "status": status,
            "content": content,
        }));
        if kind == ResultKind::Ran && name == "todo_write" {
            let entries = plan_entries(open.arguments.as_deref(), text);
            self.update(json!({"sessionUpdate": "plan", "entries": entries}));
        }
    }

    /// The consent question, put to the client; waits for its answer (or the turn's cancel).
    fn ask(&mut self, name: &str, summary: &str, always: &str) -> Answer {
        let id = (self.open.back()).map_or_else(String::new, |open| open.id.clone());
        let mut options =
            vec![json!({"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"})];
        if !always.starts_with(NOT_OFFERED) {
            options
                .push(json!({"optionId": "allow_always", "name": always, "kind": "allow_always"}));
        }
        options.push(json!({"optionId": "reject_once", "name": "Reject", "kind": "reject_once"}));
        let mut call = json!({"toolCallId": id, "title": format!("{name}({summary})"),
            "kind": kind(name), "status": "pending"});
        if let Some(preview) = self.preview.take() {
            call["content"] = json!([text_content(&preview)]);
        }
        let params = json!({"sessionId": self.session, "toolCall": call, "options": options});
        let asked = self.link.out.request("session/request_permission", params);
        loop {
            if self.cancel.load(Ordering::Relaxed) {
                return Answer::Deny;
            }
            match self.link.receiver.recv_timeout(Duration::from_millis(50)) {
                Ok(Incoming::Response { id, result }) if id == asked => return answer(&result),
                Ok(Incoming::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    // The client is gone: nobody can say yes, and the turn has no one to tell.
                    self.link.backlog.push_back(Incoming::Closed);
                    self.cancel.store(true, Ordering::Relaxed);
                    return Answer::Deny;
                }
                Ok(other) => self.link.backlog.push_back(other),
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }
}

/// The option the client selected; anything else (`cancelled`, an error) is a no.
fn answer(result: &Result<Value, Value>) -> Answer {
    let Ok(result) = result else {
        return Answer::Deny;
    };
    let outcome = &result["outcome"];
    match (outcome["outcome"].as_str(), outcome["optionId"].as_str()) {
        (Some("selected"), Some("allow_once")) => Answer::Once,
        (Some("selected"), Some("allow_always")) => Answer::Always,
        _ => Answer::Deny,
    }
}
