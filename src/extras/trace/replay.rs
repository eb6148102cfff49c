//! Reading a `--trace` file back for `--replay`, and judging each request of the new run
//! against the recorded one.
//!
//! `Recording::read` turns the trace into its header, its tasks and its rounds (one recorded
//! request and what came back: stream lines, an error status, a whole body, or nothing).
//! `Progress::answer` is called by the scripted model (`app/demo.rs`) for every request the
//! replay sends: it finds the recorded round the request matches, or reports the first place
//! it differs (`first_difference`) and, unless told to go on, answers so that the run stops.
//! Two things are not compared: the recorded working directory stands for the current one,
//! and the system prompt's `Date:` and `OS:` lines say when and where, not what happened.
//! It opens no socket and runs nothing; the face is `app/replay.rs`.

use crate::extras::trace::DIALECT;
use serde_json::{Map, Value, json};
use std::path::Path;

/// How much of each side a divergence shows, in characters.
const EXCERPT_CHARS: usize = 72;

/// A trace, read back.
#[derive(Debug, Default)]
pub struct Recording {
    /// The corecoder that wrote it (`None`: a trace from before the header line).
    pub version: Option<String>,
    pub model: Option<String>,
    pub cwd: Option<String>,
    pub max_context: Option<u32>,
    /// What the user asked, in order; a trace without task lines gives its first user message.
    pub tasks: Vec<String>,
    pub rounds: Vec<Round>,
    /// Lines that were not JSON (a session killed mid-write leaves half a line).
    pub unreadable: usize,
}

/// One request and what the server sent back to it.
#[derive(Debug, Clone)]
pub struct Round {
    pub request: Value,
    pub answer: Answer,
}

/// What the scripted model sends back for a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A 200 event stream: these lines, each ended by a newline, then the connection closes
    /// (where the stream broke, it breaks again).
    Stream(Vec<String>),
    /// Any status with a body of its own (an error, or a completion that was not a stream).
    Whole {
        status: u16,
        content_type: String,
        body: String,
    },
    /// Nothing: the connection is closed unanswered, as when the request itself failed.
    HangUp,
}

/// What a replay does at a request that differs from the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnDivergence {
    Stop,
    /// `--replay-loose`: serve the recorded reply anyway and go on.
    GoOn,
}

impl Recording {
    pub fn read(path: &Path) -> Result<Recording, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--replay: cannot read {}: {e}", path.display()))?;
        Recording::parse(&text)
    }

    /// Each line in order: the header, tasks, requests and what answered each.
    pub fn parse(text: &str) -> Result<Recording, String> {
        let mut recording = Recording::default();
        for line in text.lines().filter(|line| !line.trim().is_empty()) {
            let Ok(record) = serde_json::from_str::<Value>(line) else {
                recording.unreadable += 1;
                continue;
            };
            recording.take(&record)?;
        }
        if recording.tasks.is_empty() {
            recording.tasks.extend(first_user_message(&recording.rounds));
        }
        match recording.rounds.is_empty() {
            true => Err("--replay: the trace holds no request".to_string()),
            false => Ok(recording),
        }
    }

    fn take(&mut self, record: &Value) -> Result<(), String> {
        let text = |key: &str| record[key].as_str().map(str::to_string);
        let answer = self.rounds.last_mut().map(|round| &mut round.answer);
        match (record["kind"].as_str().unwrap_or(""), answer) {
            ("header", _) => {
                if let Some(dialect) = text("dialect").filter(|d| d != DIALECT) {
                    let why = format!("it speaks '{dialect}'; this corecoder replays '{DIALECT}'");
                    return Err(format!("--replay: {why}"));
                }
                self.version = text("corecoder");
                self.model = text("model");
                self.cwd = text("cwd");
                self.max_context = record["max_context"].as_u64().map(|n| n as u32);
            }
            ("task", _) => self.tasks.extend(text("text")),
            ("request", _) => self.rounds.push(Round {
                request: record["body"].clone(),
                answer: Answer::HangUp,
            }),
            ("sse", Some(answer)) => {
                let line = text("line").unwrap_or_default();
                match answer {
                    Answer::Stream(lines) => lines.push(line),
                    _ => *answer = Answer::Stream(vec![line]),
                }
            }
            ("http_error", Some(answer)) => {
                let status = record["status"].as_u64().unwrap_or(500) as u16;
                let (content_type, body) = ("application/json".to_string(), text("body"));
                let body = body.unwrap_or_default();
                *answer = Answer::Whole {
                    status,
                    content_type,
                    body,
                };
            }
            ("not_a_stream", Some(answer)) => {
                let content_type = text("content_type").unwrap_or_default();
                let body = text("body").unwrap_or_default();
                *answer = Answer::Whole {
                    status: 200,
                    content_type,
                    body,
                };
            }
            _ => {}
        }
        Ok(())
    }
}

/// The content of the first `user` message the first request sent.
fn first_user_message(rounds: &[Round]) -> Option<String> {
    let messages = rounds.first()?.request["messages"].as_array()?;
    let user = messages.iter().find(|m| m["role"] == "user")?;
    user["content"].as_str().map(str::to_string)
}

/// Where a request first differs from the recorded one, with a short excerpt of each side.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// `message 3 (tool), field content`, or `field max_tokens`.
    pub place: String,
    pub recorded: String,
    pub sent: String,
}

/// The first difference between the recorded request and the one sent now, after the
/// recorded working directory is read as the current one and the system prompt's clock and OS
/// lines are set aside: the messages in order (each field by name), then the other fields.
pub fn first_difference(recorded: &Value, sent: &Value, cwd: &Rebase) -> Option<Divergence> {
    let (recorded, sent) = (normalised(&cwd.apply(recorded)), normalised(sent));
    let (old, new) = (messages(&recorded), messages(&sent));
    for at in 0..old.len().max(new.len()) {
        let place = |message: &Value, what: &str| {
            let role = message["role"].as_str().unwrap_or("?");
            format!("message {at} ({role}){what}")
        };
        match (old.get(at), new.get(at)) {
            (Some(a), Some(b)) => {
                if let Some(field) = differing_field(a, b) {
                    let place = place(a, &format!(", field {field}"));
                    return Some(excerpts(place, &a[&field], &b[&field]));
                }
            }
            (Some(a), None) => {
                let place = place(a, ": only in the trace");
                return Some(divergence(place, excerpt(&a.to_string(), 0), "(none)".into()));
            }
            (None, Some(b)) => {
                let place = place(b, ": only in this run");
                return Some(divergence(place, "(none)".into(), excerpt(&b.to_string(), 0)));
            }
            (None, None) => {}
        }
    }
    let field = differing_field(&without_messages(&recorded), &without_messages(&sent))?;
    Some(excerpts(format!("field {field}"), &recorded[&field], &sent[&field]))
}

fn messages(body: &Value) -> &[Value] {
    body["messages"].as_array().map_or(&[], Vec::as_slice)
}

fn divergence(place: String, recorded: String, sent: String) -> Divergence {
    Divergence {
        place,
        recorded,
        sent,
    }
}

/// The first key, in the recorded object's order, whose values differ (absent is `null`).
fn differing_field(a: &Value, b: &Value) -> Option<String> {
    let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
    let mut names = keys(a).unwrap_or_default();
    names.extend(keys(b).unwrap_or_default());
    names.into_iter().find(|name| a[name] != b[name])
}

fn without_messages(body: &Value) -> Value {
    let mut body = body.clone();
    if let Some(object) = body.as_object_mut() {
        object.remove("messages");
    }
    body
}

/// Both sides from a little before the first character where they differ.
fn excerpts(place: String, recorded: &Value, sent: &Value) -> Divergence {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let (a, b) = (text(recorded), text(sent));
    let same = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let from = same.saturating_sub(EXCERPT_CHARS / 3);
    divergence(place, excerpt(&a, from), excerpt(&b, from))
}

/// `EXCERPT_CHARS` characters from `from`, as a JSON string (newlines shown as `\n`).
fn excerpt(text: &str, from: usize) -> String {
    let piece: String = text.chars().skip(from).take(EXCERPT_CHARS).collect();
    let more = text.chars().count() > from + EXCERPT_CHARS;
    let quoted = Value::String(piece).to_string();
    format!("{}{quoted}{}", if from > 0 { "…" } else { "" }, if more { "…" } else { "" })
}

/// The system prompt's `Date:` and `OS:` lines, the same for every replay.
fn normalised(body: &Value) -> Value {
    let mut body = body.clone();
    let messages = body["messages"].as_array_mut().into_iter().flatten();
    for message in messages.filter(|m| m["role"] == "system") {
        if let Some(content) = message["content"].as_str() {
            let lines = content.lines().map(|line| match line.split_once(": ") {
                Some(("Date" | "OS", _)) => line.split(':').next().unwrap_or(""),
                _ => line,
            });
            message["content"] = Value::String(lines.collect::<Vec<_>>().join("\n"));
        }
    }
    body
}

/// The recorded working directory, read as the current one in every string of a request.
#[derive(Debug, Clone, Default)]
pub struct Rebase {
    pub from: Option<String>,
    pub to: String,
}

impl Rebase {
    fn apply(&self, value: &Value) -> Value {
        let Some(from) = self.from.as_deref().filter(|from| *from != self.to) else {
            return value.clone();
        };
        match value {
            Value::String(s) => Value::String(s.replace(from, &self.to)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.apply(v)).collect()),
            Value::Object(fields) => {
                let fields = fields.iter().map(|(k, v)| (k.clone(), self.apply(v)));
                Value::Object(fields.collect::<Map<_, _>>())
            }
            other => other.clone(),
        }
    }
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (place, recorded, sent) = (&self.place, &self.recorded, &self.sent);
        write!(f, "{place}\n  trace: {recorded}\n  now:   {sent}")
    }
}

/// A replay under way: which recorded rounds were served, how many requests matched one, and
/// the first divergence. The scripted model's thread asks it; the face reads the report.
pub struct Progress {
    rounds: Vec<Round>,
    served: Vec<bool>,
    cwd: Rebase,
    on_divergence: OnDivergence,
    requests: usize,
    matched: usize,
    diverged: usize,
    /// The request number and where it first differed.
    first: Option<(usize, Divergence)>,
}

impl Progress {
    pub fn new(rounds: Vec<Round>, cwd: Rebase, on_divergence: OnDivergence) -> Progress {
        Progress {
            served: vec![false; rounds.len()],
            rounds,
            cwd,
            on_divergence,
            requests: 0,
            matched: 0,
            diverged: 0,
            first: None,
        }
    }

    /// What to send back to the request whose body is `body`: the reply of the first round not
    /// yet served that it matches (parallel sub-agents ask in no fixed order), else the next
    /// round's reply under `--replay-loose`, else a 409 that stops the run.
    pub fn answer(&mut self, body: &[u8]) -> Answer {
        self.requests += 1;
        let sent: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let open: Vec<usize> = (0..self.rounds.len()).filter(|&i| !self.served[i]).collect();
        let differs = |at: usize| first_difference(&self.rounds[at].request, &sent, &self.cwd);
        if let Some(&at) = open.iter().find(|&&at| differs(at).is_none()) {
            self.served[at] = true;
            self.matched += 1;
            return self.rounds[at].answer.clone();
        }
        self.diverged += 1;
        let Some(&next) = open.first() else {
            let ends = format!("(it ends after {} rounds)", self.rounds.len());
            let sent = excerpt(&messages(&sent).last().unwrap_or(&Value::Null).to_string(), 0);
            return self.stop(divergence("a request the trace does not have".into(), ends, sent));
        };
        let found = differs(next).unwrap_or_else(|| divergence(String::new(), "".into(), "".into()));
        if self.on_divergence == OnDivergence::GoOn {
            self.first.get_or_insert((self.requests, found));
            self.served[next] = true;
            return self.rounds[next].answer.clone();
        }
        self.stop(found)
    }

    fn stop(&mut self, found: Divergence) -> Answer {
        let message = format!("replay: request {} differs from the trace: {found}", self.requests);
        self.first.get_or_insert((self.requests, found));
        Answer::Whole {
            status: 409,
            content_type: "application/json".to_string(),
            body: json!({"error": {"message": message}}).to_string(),
        }
    }

    /// Every recorded round was asked for, and every request matched its round.
    pub fn all_matched(&self) -> bool {
        self.diverged == 0 && self.served.iter().all(|&served| served)
    }

    /// What the replay found: `replay: 5 of 6 rounds matched`, what was left over, and where
    /// the first request differed.
    pub fn report(&self) -> Vec<String> {
        let total = self.rounds.len();
        let mut lines = vec![format!("replay: {} of {total} rounds matched", self.matched)];
        let unasked = self.served.iter().filter(|&&served| !served).count();
        if unasked > 0 {
            lines.push(format!("{unasked} recorded rounds were never asked for"));
        }
        if self.diverged > 0 {
            let requests = self.requests;
            lines.push(format!("{} of {requests} requests differed", self.diverged));
        }
        if let Some((request, found)) = &self.first {
            lines.push(format!("first divergence, request {request}: {found}"));
        }
        lines
    }
}
