//! A scripted OpenAI-compatible chat server on 127.0.0.1, for running the real binary against.
//!
//! A test hands `Server::start` a script of `Reply`s; the n-th request that arrives gets the
//! n-th reply, and every request is recorded (with its arrival time) for the test to inspect.
//! The server does not understand requests: it never validates a body or picks a reply by
//! content, so every assertion about what the client sent lives in the test that reads
//! `requests()`, except one: when dropped, the server fails the test if any request shows a
//! repaired history (`repair_problem`) that the test did not announce with `expect_repairs`
//! (it interrupts or crashes the run on purpose). One thread accepts; each connection gets
//! its own scoped thread (so a stalled reply cannot block the retry after it); every reply
//! ends with closing the connection. Past 300 lines (about 390): the replies every test
//! scripts and the history check every test gets belong to the one server they all start.

use crate::http;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How the server answers one request.
pub enum Reply {
    /// 200 with `content-type: text/event-stream`, the whole body at once, then close.
    Sse(String),
    /// Any status with extra headers and a JSON (or any) body.
    Status {
        code: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// 200 and a partial stream, then the connection is closed mid-body: a dropped stream.
    SseThenDrop(String),
    /// The stream written `chunk` bytes at a time (even inside a UTF-8 character), with pauses.
    SseSlowly {
        body: String,
        chunk: usize,
        pause_ms: u64,
    },
    /// 200 and a partial stream, then silence for `ms`, then a drop: a stream that stalls.
    SseThenStall { body: String, ms: u64 },
    /// Read the request, send nothing at all for `ms`, then close.
    Stall { ms: u64 },
    /// 200, `head` at once, then each piece of `tail` after a pause: a reply whose first part
    /// is complete long before the rest arrives.
    SseSlowTail {
        head: String,
        tail: Vec<String>,
        pause_ms: u64,
    },
    /// A text answer `report: <the request's last user message>`, for requests that arrive
    /// in no fixed order (parallel sub-agents).
    EchoLastUser,
    /// 200, `head`, then `piece` again and again until `bytes` are written or the client hangs
    /// up: a reply that would never end (bounded, so the server stops by itself).
    Flood {
        head: String,
        piece: String,
        bytes: usize,
    },
    /// A whole HTTP answer, status line and headers included, written as it is (the raw
    /// answers of real servers kept in `fixtures/http/`).
    Raw(Vec<u8>),
    /// The stream in two TCP writes, split at byte `at`, with a pause between them.
    SseSplitAt {
        body: String,
        at: usize,
        pause_ms: u64,
    },
}

impl Reply {
    /// An error status in OpenAI's shape, with `Retry-After: 0` so retries in tests are fast.
    pub fn error(code: u16, message: &str) -> Reply {
        let body = json!({"error": {"message": message, "type": "invalid_request_error"}});
        Reply::Status {
            code,
            headers: vec![("Retry-After".into(), "0".into())],
            body: body.to_string(),
        }
    }
}

/// One request as the server saw it. Header names are lowercased.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or a JSON string holding the raw text if it was not JSON.
    pub body: Value,
    /// The body as it came, byte for byte.
    pub raw: Vec<u8>,
    /// When the whole request had been read.
    pub at: Instant,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.as_str())
    }

    pub fn messages(&self) -> Vec<Value> {
        self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// `(tool_call_id, content)` of every `role: tool` message, in history order.
    pub fn tool_results(&self) -> Vec<(String, String)> {
        self.messages()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| {
                let id = m["tool_call_id"].as_str().unwrap_or("<no tool_call_id>");
                let content = m["content"].as_str().unwrap_or("<no content>");
                (id.to_string(), content.to_string())
            })
            .collect()
    }

    /// Panic unless every assistant tool call is answered exactly once by the tool messages
    /// right after it, and no tool message answers a call that was not asked.
    pub fn assert_valid_history(&self) {
        if let Err(why) = history_problem(&self.messages()) {
            panic!("invalid history: {why}\n{:#?}", self.messages());
        }
    }

    /// The content of the last tool result in this request's history.
    pub fn last_tool_result(&self) -> String {
        let results = self.tool_results();
        match results.last() {
            Some((_, content)) => content.clone(),
            None => panic!(
                "request has no tool result; messages: {:#?}",
                self.messages()
            ),
        }
    }
}

pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accepter: Option<JoinHandle<()>>,
}

struct Shared {
    /// Script and log under one lock, so the n-th recorded request is the one given reply n.
    state: Mutex<State>,
    stopping: AtomicBool,
    /// The test interrupts or crashes the run on purpose (`expect_repairs`): a repaired
    /// history is explained, so `Drop` does not check for one.
    repairs_expected: AtomicBool,
}

struct State {
    script: VecDeque<Reply>,
    requests: Vec<Recorded>,
    /// When set, requests without `tools` (compaction summaries) get this answer and leave the
    /// script alone, so a test need not predict when the agent compacts.
    summary: Option<Summary>,
}

/// How summary requests are answered when they are kept off the script.
#[derive(Clone)]
enum Summary {
    Text(String),
    Stall(u64),
}

impl Server {
    pub fn start(script: Vec<Reply>) -> Server {
        Server::start_with(script, None)
    }

    /// Like `start`, but every summary request is answered with `summary`, off the script.
    pub fn answering_summaries(script: Vec<Reply>, summary: &str) -> Server {
        Server::start_with(script, Some(Summary::Text(summary.to_string())))
    }

    /// Like `start`, but every summary request stalls for `ms`, off the script.
    pub fn stalling_summaries(script: Vec<Reply>, ms: u64) -> Server {
        Server::start_with(script, Some(Summary::Stall(ms)))
    }

    fn start_with(script: Vec<Reply>, summary: Option<Summary>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                script: script.into(),
                requests: Vec::new(),
                summary,
            }),
            stopping: AtomicBool::new(false),
            repairs_expected: AtomicBool::new(false),
        });
        let for_thread = Arc::clone(&shared);
        let accepter = thread::spawn(move || accept_loop(listener, &for_thread));
        Server {
            addr,
            shared,
            accepter: Some(accepter),
        }
    }

    /// The base URL the client is given; it POSTs to `{url}/chat/completions`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// This test interrupts (Ctrl+C, a kill, a crash) or resumes a cut-off session: a call
    /// answered `[interrupted]` by the binary's repair is expected, not a lost result.
    pub fn expect_repairs(&self) {
        self.shared.repairs_expected.store(true, Ordering::SeqCst);
    }

    /// Add `reply` to the end of the script: one that names the server's own address.
    pub fn then(&self, reply: Reply) {
        self.shared.lock().script.push_back(reply);
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.lock().requests.clone()
    }

    /// Wait until at least `count` requests arrived; false if `timeout` passed first.
    pub fn wait_for_requests(&self, count: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while self.shared.lock().requests.len() < count {
            if Instant::now() > deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(10));
        }
        true
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // `accept` blocks; one connection from ourselves wakes it to see the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(accepter) = self.accepter.take() {
            let _ = accepter.join();
        }
        // Every test's requests get the history check, unless it is failing already.
        if thread::panicking() || self.shared.repairs_expected.load(Ordering::SeqCst) {
            return;
        }
        let requests = self.shared.lock().requests.clone();
        for (number, request) in requests.iter().enumerate() {
            if let Err(why) = repair_problem(&request.messages()) {
                panic!(
                    "request #{}: {why}; no Ctrl+C or crash explains it (a test that \
                     interrupts on purpose calls `Server::expect_repairs`)\n{:#?}",
                    number + 1,
                    request.messages()
                );
            }
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panicking connection thread must not hide the log from the test that reads it.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}

fn accept_loop(listener: TcpListener, shared: &Shared) {
    thread::scope(|scope| {
        for stream in listener.incoming() {
            if shared.stopping() {
                break;
            }
            if let Ok(stream) = stream {
                scope.spawn(move || serve(stream, shared));
            }
        }
    });
}

fn serve(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_nodelay(true);
    // A connection that sends no full request (the wake-up from Drop, a probe) gets nothing.
    let Some(request) = http::read_request(&stream) else {
        return;
    };
    let last_user = last_user_text(&request.body);
    let is_summary = request.body.get("tools").is_none();
    let reply = {
        let mut state = shared.lock();
        state.requests.push(request);
        let number = state.requests.len();
        match (&state.summary, is_summary) {
            (Some(Summary::Text(summary)), true) => Reply::Sse(crate::sse::text(summary)),
            (Some(Summary::Stall(ms)), true) => Reply::Stall { ms: *ms },
            _ => (state.script.pop_front()).unwrap_or_else(|| script_exhausted(number)),
        }
    };
    let reply = match reply {
        Reply::EchoLastUser => Reply::Sse(crate::sse::text(&format!("report: {last_user}"))),
        other => other,
    };
    // The client may have hung up already (it timed out, it was killed): nothing to report.
    let _ = http::write_reply(stream, reply, &shared.stopping);
}

fn last_user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.iter().rev().find(|m| m["role"] == "user");
    last.and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

/// Why `messages` is not a history a provider accepts, if it is not.
pub fn history_problem(messages: &[Value]) -> Result<(), String> {
    let mut pending: Vec<String> = Vec::new();
    for (at, message) in messages.iter().enumerate() {
        if message["role"] == "tool" {
            let id = message["tool_call_id"].as_str().unwrap_or_default();
            let Some(found) = pending.iter().position(|p| p == id) else {
                return Err(format!(
                    "message {at}: tool result {id:?} answers no open call"
                ));
            };
            pending.remove(found);
            continue;
        }
        if !pending.is_empty() {
            return Err(format!(
                "message {at}: calls {pending:?} were never answered"
            ));
        }
        let calls = message["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for call in calls {
            let id = call["id"].as_str().unwrap_or_default().to_string();
            if id.is_empty() || pending.contains(&id) {
                return Err(format!("message {at}: missing or repeated call id {id:?}"));
            }
            pending.push(id);
        }
    }
    match pending.is_empty() {
        true => Ok(()),
        false => Err(format!("calls {pending:?} at the end were never answered")),
    }
}

/// Why `messages` shows a repair, if it does: a history a provider would reject, or a call
/// answered `[interrupted]`, which the binary's repair (`repair_tool_pairs`) writes for a call
/// left unanswered: a Ctrl+C or a crash, or the loop losing a round's results.
pub fn repair_problem(messages: &[Value]) -> Result<(), String> {
    history_problem(messages)?;
    let marked = (messages.iter()).find(|m| m["role"] == "tool" && m["content"] == "[interrupted]");
    match marked {
        Some(result) => Err(format!(
            "call {} was answered [interrupted]: the history was repaired",
            result["tool_call_id"]
        )),
        None => Ok(()),
    }
}

/// 500 is retried by the client, so say loudly in the body why it happened.
fn script_exhausted(number: usize) -> Reply {
    let message = format!("test server: script exhausted, request #{number} has no reply");
    Reply::error(500, &message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::read_chunked;
    use std::io::{BufReader, Read, Write};

    /// A bare HTTP/1.1 client: send one POST, return (status line, headers, de-chunked body).
    fn post(server: &Server, body: &str) -> (String, String, String) {
        let mut stream = TcpStream::connect(server.addr).expect("connect");
        let request = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).expect("write");
        let mut raw = String::new();
        stream.read_to_string(&mut raw).expect("read reply");
        let (head, body) = raw.split_once("\r\n\r\n").expect("head and body");
        let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
        let body = if headers.contains("transfer-encoding: chunked") {
            let mut reader = BufReader::new(body.as_bytes());
            String::from_utf8(read_chunked(&mut reader).expect("chunked")).expect("utf8")
        } else {
            body.to_string()
        };
        (status.to_string(), headers.to_string(), body)
    }

    #[test]
    fn answers_with_the_script_in_order_and_records_requests() {
        let stream = crate::sse::text("hi");
        let server = Server::start(vec![Reply::Sse(stream.clone()), Reply::error(429, "slow")]);
        let (status, headers, body) = post(&server, r#"{"model":"m","stream":true}"#);
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert!(
            headers.contains("content-type: text/event-stream"),
            "{headers}"
        );
        assert_eq!(body, stream);
        let (status, headers, body) = post(&server, "not json");
        assert_eq!(status, "HTTP/1.1 429 Too Many Requests");
        assert!(headers.contains("Retry-After: 0"), "{headers}");
        assert!(body.contains("slow"));
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[0].method, "POST");
        assert_eq!(requests[0].path, "/v1/chat/completions");
        assert_eq!(requests[0].header("Authorization"), Some("Bearer k"));
        assert_eq!(requests[0].body["model"], "m");
        assert_eq!(requests[1].body, Value::String("not json".into()));
        assert!(requests[0].at <= requests[1].at);
    }

    #[test]
    fn history_problems_are_found() {
        let ask = |ids: &[&str]| {
            let calls: Vec<Value> = ids.iter().map(|id| json!({"id": id})).collect();
            json!({"role": "assistant", "tool_calls": calls})
        };
        let answer = |id: &str| json!({"role": "tool", "tool_call_id": id});
        let user = json!({"role": "user", "content": "x"});
        let valid = [
            user.clone(),
            ask(&["a", "b"]),
            answer("b"),
            answer("a"),
            user.clone(),
        ];
        assert_eq!(history_problem(&valid), Ok(()));
        let cases = [
            vec![ask(&["a"]), user.clone()],
            vec![ask(&["a"])],
            vec![user.clone(), answer("a")],
            vec![ask(&["a"]), answer("a"), answer("a")],
            vec![ask(&["a", "a"]), answer("a"), answer("a")],
        ];
        for case in cases {
            assert!(history_problem(&case).is_err(), "{case:?}");
        }
    }

    #[test]
    fn a_repaired_history_is_found() {
        let ask = json!({"role": "assistant", "tool_calls": [{"id": "a"}]});
        let answer = |text: &str| json!({"role": "tool", "tool_call_id": "a", "content": text});
        assert_eq!(repair_problem(&[ask.clone(), answer("ran")]), Ok(()));
        assert!(repair_problem(&[ask.clone(), answer("[interrupted]")]).is_err());
        assert!(repair_problem(&[ask]).is_err());
    }

    #[test]
    fn exhausted_script_answers_500_saying_so() {
        let server = Server::start(vec![]);
        let (status, _, body) = post(&server, "{}");
        assert_eq!(status, "HTTP/1.1 500 Internal Server Error");
        assert!(body.contains("script exhausted, request #1"), "{body}");
    }

    #[test]
    fn slow_stream_arrives_whole() {
        let stream = crate::sse::text("ünïcödé");
        let slowly = Reply::SseSlowly {
            body: stream.clone(),
            chunk: 5,
            pause_ms: 1,
        };
        let server = Server::start(vec![slowly]);
        assert_eq!(post(&server, "{}").2, stream);
    }

    #[test]
    fn dropped_stream_ends_without_the_last_chunk() {
        let server = Server::start(vec![Reply::SseThenDrop("data: partial\n\n".into())]);
        let mut stream = TcpStream::connect(server.addr).expect("connect");
        stream
            .write_all(b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}")
            .expect("write");
        let mut raw = String::new();
        stream.read_to_string(&mut raw).expect("read");
        assert!(raw.ends_with("data: partial\n\n\r\n"), "{raw:?}");
        assert!(!raw.contains("\r\n0\r\n"), "{raw:?}");
    }

    #[test]
    fn chunked_request_body_is_recorded() {
        let server = Server::start(vec![Reply::Sse(String::new())]);
        let mut stream = TcpStream::connect(server.addr).expect("connect");
        let request = "POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\
                       6\r\n{\"a\":1\r\n1\r\n}\r\n0\r\n\r\n";
        stream.write_all(request.as_bytes()).expect("write");
        let mut raw = String::new();
        stream.read_to_string(&mut raw).expect("read");
        assert_eq!(server.requests()[0].body, json!({"a": 1}));
    }

    #[test]
    fn drop_does_not_wait_out_a_stall() {
        let server = Server::start(vec![Reply::Stall { ms: 30_000 }]);
        let mut stream = TcpStream::connect(server.addr).expect("connect");
        stream
            .write_all(b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}")
            .expect("write");
        assert!(server.wait_for_requests(1, Duration::from_secs(5)));
        let started = Instant::now();
        drop(server);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }

    /// The binary's own HTTP client must read these replies as a provider's.
    #[test]
    fn ureq_reads_a_stream_and_sees_a_drop_as_an_error() {
        let stream = crate::sse::text("hi");
        let partial = "data: partial\n\n".to_string();
        let server = Server::start(vec![
            Reply::Sse(stream.clone()),
            Reply::SseThenDrop(partial),
        ]);
        let url = format!("{}/chat/completions", server.url());
        let send = || ureq::post(&url).send(r#"{"stream": true}"#);
        let whole = send()
            .expect("200")
            .into_body()
            .read_to_string()
            .expect("whole body");
        assert_eq!(whole, stream);
        let mut body = send().expect("200").into_body();
        let mut text = String::new();
        let read = body.as_reader().read_to_string(&mut text);
        assert!(
            read.is_err(),
            "a dropped chunked stream must be an error, got {text:?}"
        );
        assert_eq!(text, "data: partial\n\n");
    }
}
