//! Reading a `--trace` file back for `--replay`, and judging each request of the new run
//! against the recorded one.
//!
//! `Recording::read` turns the trace into its header, its tasks and its rounds (one recorded
//! request and what came back: stream lines, an error status, a whole body, or nothing).
//! `Progress::answer` is called by the scripted model (`app/scripted_model.rs`) for every
//! request the replay sends: it finds the recorded round the request matches, or reports the
//! first place it differs (`divergence.rs`) and, unless told to go on, answers so that the run
//! stops. It opens no socket and runs nothing; the face is `app/replay.rs`.

use crate::core::config::Dialect;
use crate::core::consent::Plan;
use crate::extras::trace::dialect_named;
use crate::extras::trace::divergence::first_difference_of;
use crate::extras::trace::divergence::{Divergence, Rebase, comparable, excerpt, messages};
use serde_json::{Value, json};
use std::path::Path;

/// Every request holds the whole history, so a trace grows fast; past this it is not read.
const MAX_TRACE: u64 = 256 << 20;

/// A trace, read back.
#[derive(Debug, Default)]
pub(crate) struct Recording {
    /// The corecoder that wrote it (`None`: a trace from before the header line).
    pub(crate) version: Option<String>,
    pub(crate) model: Option<String>,
    /// The dialect the session spoke (`None`: a trace from before the header line).
    pub(crate) dialect: Option<Dialect>,
    pub(crate) cwd: Option<String>,
    pub(crate) max_context: Option<u32>,
    /// What the user asked, in order; a trace without task lines gives its first user message.
    pub(crate) tasks: Vec<Task>,
    pub(crate) rounds: Vec<Round>,
    /// Lines that were not JSON (a session killed mid-write leaves half a line).
    pub(crate) unreadable: usize,
}

/// One task the user gave, and whether plan mode was on for it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Task {
    pub(crate) text: String,
    pub(crate) plan: Plan,
}

/// One request and what the server sent back to it.
#[derive(Debug, Clone)]
pub(crate) struct Round {
    pub request: Value,
    pub(crate) answer: Answer,
}

/// What the scripted model sends back for a request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
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
pub(crate) enum OnDivergence {
    Stop,
    /// `--replay-loose`: serve the recorded reply anyway and go on.
    GoOn,
}

impl Recording {
    /// The trace at `path`, read whole: at most `MAX_TRACE` bytes.
    pub(crate) fn read(path: &Path) -> Result<Recording, String> {
        let cannot = |e: std::io::Error| format!("--replay: cannot read {}: {e}", path.display());
        let size = std::fs::metadata(path).map_err(cannot)?.len();
        if size > MAX_TRACE {
            let mib = MAX_TRACE >> 20;
            return Err(format!("--replay: {} is over {mib} MiB", path.display()));
        }
        Recording::parse(&std::fs::read_to_string(path).map_err(cannot)?)
    }

    /// Each line in order: the header, tasks, requests and what answered each.
    pub(crate) fn parse(text: &str) -> Result<Recording, String> {
        let mut recording = Recording::default();
        for line in text.lines().filter(|line| !line.trim().is_empty()) {
            let Ok(record) = serde_json::from_str::<Value>(line) else {
                recording.unreadable += 1;
                continue;
            };
            recording.take(&record)?;
        }
        if recording.tasks.is_empty() {
            // A trace from before task lines: its first user message was the task.
            let text = first_user_message(&recording.rounds);
            let task = |text| Task {
                text,
                plan: Plan::Off,
            };
            recording.tasks.extend(text.map(task));
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
                let named = text("dialect").unwrap_or_else(|| "openai".to_string());
                let Some(dialect) = dialect_named(&named) else {
                    let why = "this corecoder speaks openai, anthropic and responses";
                    return Err(format!("--replay: the trace speaks '{named}'; {why}"));
                };
                self.dialect = Some(dialect);
                self.version = text("corecoder");
                self.model = text("model");
                self.cwd = text("cwd");
                self.max_context = record["max_context"].as_u64().map(|n| n as u32);
            }
            ("task", _) => {
                let plan = match record["plan"].as_bool() {
                    Some(true) => Plan::On,
                    _ => Plan::Off,
                };
                let text = text("text").unwrap_or_default();
                self.tasks.push(Task { text, plan });
            }
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

/// A replay under way: which recorded rounds were served, how many requests matched one, and
/// the first divergence. The scripted model's thread asks it; the face reads the report.
pub(crate) struct Progress {
    rounds: Vec<Round>,
    /// Each round's request as it is compared (`divergence::comparable`), made once.
    expected: Vec<Value>,
    served: Vec<bool>,
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
            expected: rounds
                .iter()
                .map(|r| comparable(&r.request, &cwd))
                .collect(),
            rounds,
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
    pub(crate) fn answer(&mut self, body: &[u8]) -> Answer {
        self.requests += 1;
        let sent: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let sent = comparable(&sent, &Rebase::default());
        let open: Vec<usize> = (0..self.rounds.len())
            .filter(|&i| !self.served[i])
            .collect();
        let differs = |at: usize| first_difference_of(&self.expected[at], &sent);
        if let Some(&at) = open.iter().find(|&&at| differs(at).is_none()) {
            self.served[at] = true;
            self.matched += 1;
            return self.rounds[at].answer.clone();
        }
        self.diverged += 1;
        let Some(&next) = open.first() else {
            let last = messages(&sent).last().map(|m| excerpt(&m.to_string(), 0));
            let ends = format!("(it ends after {} rounds)", self.rounds.len());
            let place = "a request the trace does not have".to_string();
            return self.stop(Divergence::new(place, ends, last.unwrap_or_default()));
        };
        // Tried above, so it differs: `None` cannot come back.
        let found =
            differs(next).unwrap_or_else(|| Divergence::new(String::new(), "".into(), "".into()));
        if self.on_divergence == OnDivergence::GoOn {
            self.first.get_or_insert((self.requests, found));
            self.served[next] = true;
            return self.rounds[next].answer.clone();
        }
        self.stop(found)
    }

    fn stop(&mut self, found: Divergence) -> Answer {
        let message = format!(
            "replay: request {} differs from the trace: {found}",
            self.requests
        );
        self.first.get_or_insert((self.requests, found));
        Answer::Whole {
            status: 409,
            content_type: "application/json".to_string(),
            body: json!({"error": {"message": message}}).to_string(),
        }
    }

    /// Every recorded round was asked for, and every request matched its round.
    pub(crate) fn all_matched(&self) -> bool {
        self.diverged == 0 && self.served.iter().all(|&served| served)
    }

    /// What the replay found: `replay: 5 of 6 rounds matched`, what was left over, and where
    /// the first request differed.
    pub(crate) fn report(&self) -> Vec<String> {
        let total = self.rounds.len();
        let mut lines = vec![format!(
            "replay: {} of {total} rounds matched",
            self.matched
        )];
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

#[cfg(test)]
mod tests {
    use super::*;

    fn request(messages: Value) -> Value {
        json!({"model": "m", "messages": messages, "max_tokens": 10})
    }

    fn line(kind: &str, fields: Value) -> String {
        let mut record = json!({"ms": 0, "kind": kind});
        record
            .as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        record.to_string()
    }

    #[test]
    fn a_trace_reads_back_as_header_tasks_and_rounds() {
        let header = json!({"corecoder": "9.9.9", "dialect": "openai", "model": "m",
            "cwd": "/old", "max_context": 5000});
        let body = request(json!([{"role": "user", "content": "go"}]));
        let text = [
            line("header", header),
            line("task", json!({"text": "go"})),
            line("request", json!({"body": body})),
            line("sse", json!({"line": "data: {}"})),
            line("sse", json!({"line": ""})),
            line("tool", json!({"name": "bash"})),
            line("request", json!({"body": body})),
            line("http_error", json!({"status": 503, "body": "busy"})),
            line("request", json!({"body": body})),
            "{\"ms\": 3, \"kind\": \"sse\", \"li".to_string(),
        ];
        let recording = Recording::parse(&text.join("\n")).unwrap();
        assert_eq!(recording.version.as_deref(), Some("9.9.9"));
        assert_eq!(
            (recording.cwd.as_deref(), recording.max_context),
            (Some("/old"), Some(5000))
        );
        let go = Task {
            text: "go".into(),
            plan: Plan::Off,
        };
        assert_eq!(recording.tasks, [go]);
        let answers: Vec<&Answer> = recording.rounds.iter().map(|r| &r.answer).collect();
        assert_eq!(
            answers[0],
            &Answer::Stream(vec!["data: {}".into(), "".into()])
        );
        assert!(matches!(answers[1], Answer::Whole { status: 503, .. }));
        assert_eq!(answers[2], &Answer::HangUp);
        assert_eq!(recording.unreadable, 1, "the half-written last line");
        assert_eq!(recording.dialect, Some(Dialect::Chat));
        let header = |dialect: &str| line("header", json!({"dialect": dialect}));
        let rest = line("request", json!({"body": body}));
        let anthropic = Recording::parse(&[header("anthropic"), rest.clone()].join("\n"));
        assert_eq!(anthropic.unwrap().dialect, Some(Dialect::Anthropic));
        let other = Recording::parse(&[header("gemini"), rest].join("\n")).unwrap_err();
        assert!(other.contains("'gemini'"), "{other}");
    }

    #[test]
    fn progress_stops_at_a_difference_or_goes_on() {
        let round = |content: &str| Round {
            request: request(json!([{"role": "user", "content": content}])),
            answer: Answer::Stream(vec![content.to_string()]),
        };
        let rounds = vec![round("one"), round("two")];
        let ask = |progress: &mut Progress, content: &str| {
            let body = request(json!([{"role": "user", "content": content}])).to_string();
            progress.answer(body.as_bytes())
        };
        let served = |content: &str| Answer::Stream(vec![content.to_string()]);
        let stopped = |answer: Answer| matches!(answer, Answer::Whole { status: 409, .. });
        let mut strict = Progress::new(rounds.clone(), Rebase::default(), OnDivergence::Stop);
        assert_eq!(ask(&mut strict, "one"), served("one"));
        assert!(stopped(ask(&mut strict, "TWO")));
        assert!(!strict.all_matched());
        let report = strict.report().join("\n");
        assert!(report.starts_with("replay: 1 of 2 rounds"), "{report}");
        assert!(report.contains("request 2: message 0 (user), field content"));
        let mut loose = Progress::new(rounds.clone(), Rebase::default(), OnDivergence::GoOn);
        assert_eq!(ask(&mut loose, "TWO"), served("one"));
        assert_eq!(ask(&mut loose, "two"), served("two"));
        assert!(stopped(ask(&mut loose, "three")), "the trace has no more");
        let mut any_order = Progress::new(rounds, Rebase::default(), OnDivergence::Stop);
        ask(&mut any_order, "two");
        ask(&mut any_order, "one");
        assert!(
            any_order.all_matched(),
            "parallel sub-agents ask in no fixed order"
        );
    }
}
