//! The offline demo: a scripted model on 127.0.0.1 drives the real client, loop and tools.
//!
//! `corecoder --demo` (or `corecoder` with no API key) lands here. A tiny HTTP server inside
//! the binary answers each chat-completions request with the next recorded SSE stream, and the
//! ordinary `Llm` + `Agent` fix a bug in a throwaway project and run its test. Nothing is
//! faked on the client side; the model is the only thing scripted. No key, no network.
//!
//! `start_scripted_model` is the same server for any script of `Turn`s; the programs in
//! `examples/` use it with `tool_calls` and `text` to run offline. It understands no more of a
//! request than its latest user message, which picks the reply. `start_model` lets another
//! judge pick: `--replay` (`app/replay.rs`) serves a trace's recorded stream lines with it.

use crate::core::agent::Agent;
use crate::core::config::Config;
use crate::core::consent::{Consent, Mode};
use crate::core::event::Error;
use crate::core::event::Event;
use crate::core::event::Finish;
use crate::core::llm::Llm;
use crate::extras::account::Account;
use crate::extras::trace::Trace;
use crate::extras::trace::replay::Answer;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

const CALC: &str = "# calc.sh: a tiny calculator library\nadd() {\n    echo $(( $1 - $2 ))\n}\n";
const TASK: &str = "Fix the bug in calc.sh and make test_calc.sh pass.";
const TEST: &str = "#!/bin/sh\n. ./calc.sh\nresult=$(add 2 3)\nif [ \"$result\" = 5 ]; then\n    echo \"ok: add 2 3 = 5\"\nelse\n    echo \"FAIL: add 2 3 = $result, expected 5\"\n    exit 1\nfi\n";

/// The demo, with `--trace FILE` written to `trace` when given.
pub fn run(trace: Option<&Path>, on_event: &mut dyn FnMut(Event)) -> Result<Finish, Error> {
    let project = make_project()?;
    let script: Vec<Turn> = script().into_iter().map(Turn::next).collect();
    let rounds = script.len() as u32;
    let model = start_scripted_model(script)?;
    let _ = writeln!(
        std::io::stderr(),
        "Demo: a scripted model at {} drives the real agent in {}\n",
        model.url,
        project.display()
    );
    let mut agent = Agent::new(
        Arc::new(Llm::new(model.config())),
        project.clone(),
        Consent::new(Mode::AllowAll),
    );
    agent.max_rounds = rounds;
    if let Some(path) = trace {
        let trace = Trace::create(path, &model.config(), &project).map_err(io_error)?;
        agent.extras.account = Account::default().with_trace(trace);
        agent.extras.account.trace_task(TASK);
    }
    // Ctrl+C stops the demo the way it stops a real task (docs/walkthrough.md steps through it).
    crate::app::process::watch_ctrl_c(agent.cancel.clone())?;
    let finish = agent.run(TASK, on_event);
    drop(model);
    let _ = std::fs::remove_dir_all(&project);
    finish
}

/// One reply of a scripted model: the SSE `stream` goes to the first request, in script order,
/// whose latest user message contains `when` (`""` matches any request).
pub struct Turn {
    pub when: String,
    pub stream: String,
}

impl Turn {
    /// The reply to whichever request comes next.
    pub fn next(stream: String) -> Turn {
        Turn {
            when: String::new(),
            stream,
        }
    }

    /// The reply to the next request whose task contains `text`: parallel sub-agents send
    /// their requests in no fixed order, so each one's replies are keyed by its task.
    pub fn when(text: &str, stream: String) -> Turn {
        Turn {
            when: text.to_string(),
            stream,
        }
    }
}

/// What picks the reply to a request's body.
type AnswerFn<'a> = &'a mut dyn FnMut(&[u8]) -> Answer;

/// A scripted model serving on 127.0.0.1 until dropped; dropping it stops and joins its thread.
pub struct ScriptedModel {
    /// The base URL to put in `Config::base_url`.
    pub url: String,
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    server: Option<JoinHandle<()>>,
}

/// Start a scripted model on a free loopback port. A request that no turn matches gets a 400
/// naming it, so a script that runs short fails at once instead of hanging.
pub fn start_scripted_model(mut script: Vec<Turn>) -> Result<ScriptedModel, Error> {
    // A short pause after each event, so the demo visibly streams.
    let pause = Duration::from_millis(8);
    start_model(pause, Box::new(move |body| next_turn(&mut script, body)))
}

/// The same server for any way of choosing replies: `answer` is handed each request's body,
/// and a stream pauses `pause` after each event.
pub fn start_model(
    pause: Duration,
    mut answer: Box<dyn FnMut(&[u8]) -> Answer + Send>,
) -> Result<ScriptedModel, Error> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(io_error)?;
    let address = listener.local_addr().map_err(io_error)?;
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let server = std::thread::spawn(move || serve(&listener, &mut *answer, pause, &stopped));
    Ok(ScriptedModel {
        url: format!("http://{address}/v1"),
        address,
        stop,
        server: Some(server),
    })
}

impl ScriptedModel {
    /// A `Config` pointing at this model (the key is a placeholder; nothing checks it).
    pub fn config(&self) -> Config {
        Config {
            api_key: Some("demo".to_string()),
            base_url: self.url.clone(),
            model: "scripted-demo".to_string(),
            ..Config::default()
        }
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // One more connection wakes the server from `accept`, so it sees the flag and returns.
        let _ = TcpStream::connect(self.address);
        if let Some(server) = self.server.take() {
            let _ = server.join();
        }
    }
}

fn make_project() -> Result<PathBuf, Error> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("corecoder-demo-{}-{stamp}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(io_error)?;
    std::fs::write(dir.join("calc.sh"), CALC).map_err(io_error)?;
    std::fs::write(dir.join("test_calc.sh"), TEST).map_err(io_error)?;
    Ok(dir)
}

/// The model's side of the conversation, one SSE stream per request.
fn script() -> Vec<String> {
    let fix = json!({"file_path": "calc.sh", "old_string": "$(( $1 - $2 ))", "new_string": "$(( $1 + $2 ))"});
    vec![
        tool_calls(
            "Let me look at the project first.",
            &[
                ("glob", json!({"pattern": "*.sh"})),
                ("read_file", json!({"file_path": "calc.sh"})),
            ],
        ),
        tool_calls(
            "Let me run the test to see the failure.",
            &[("bash", json!({"command": "sh test_calc.sh"}))],
        ),
        tool_calls(
            "`add` subtracts instead of adding. Fixing it.",
            &[("edit_file", fix)],
        ),
        tool_calls(
            "Running the test again.",
            &[("bash", json!({"command": "sh test_calc.sh"}))],
        ),
        text(
            "Fixed: `add` in calc.sh used `-` instead of `+`. `sh test_calc.sh` now prints `ok: add 2 3 = 5`.",
        ),
    ]
}

/// A reply that says `narration`, then calls each `(tool name, arguments)`.
pub fn tool_calls(narration: &str, calls: &[(&str, Value)]) -> String {
    let mut stream = text_chunks(narration);
    for (index, (name, args)) in calls.iter().enumerate() {
        let args = args.to_string();
        // Split the arguments in two, as real providers stream them in fragments.
        let (head, tail) = args.split_at(args.len() / 2);
        let id = format!("call_demo_{}_{index}", name);
        stream += &chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
            "function": {"name": name, "arguments": head}}]}),
            None,
        );
        stream += &chunk(
            json!({"tool_calls": [{"index": index, "function": {"arguments": tail}}]}),
            None,
        );
    }
    stream + &chunk(json!({}), Some("tool_calls")) + "data: [DONE]\n\n"
}

/// A reply that is the final answer `answer` (no tool calls).
pub fn text(answer: &str) -> String {
    text_chunks(answer) + &chunk(json!({}), Some("stop")) + "data: [DONE]\n\n"
}

fn text_chunks(text: &str) -> String {
    let words: Vec<String> = text
        .split_inclusive(' ')
        .map(|w| chunk(json!({"content": w}), None))
        .collect();
    words.concat()
}

fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    let chunk = json!({"id": "demo", "object": "chat.completion.chunk", "model": "scripted-demo",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]});
    format!("data: {chunk}\n\n")
}

/// The first turn, in script order, that the request's latest user message matches.
fn next_turn(script: &mut Vec<Turn>, body: &[u8]) -> Answer {
    let task = latest_user_message(body);
    match script.iter().position(|t| task.contains(&t.when)) {
        Some(at) => Answer::Stream(script.remove(at).stream.lines().map(String::from).collect()),
        None => {
            let message = format!("the script has no reply for: {task}");
            Answer::Whole {
                status: 400,
                content_type: "application/json".to_string(),
                body: json!({"error": {"message": message}}).to_string(),
            }
        }
    }
}

/// Answer one request per connection with what `answer` says, until `stop` is set. An error
/// says `Retry-After: 0`: a replayed retry need not wait as long as the recorded one did.
fn serve(listener: &TcpListener, answer: AnswerFn, pause: Duration, stop: &AtomicBool) {
    for connection in listener.incoming() {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut stream) = connection else {
            continue;
        };
        let Ok(body) = read_request(&mut stream) else {
            continue;
        };
        let head = |status: u16, kind: &str, extra: &str| {
            format!("HTTP/1.1 {status} Scripted\r\nContent-Type: {kind}\r\n{extra}Connection: close\r\n\r\n")
        };
        match answer(&body) {
            Answer::Stream(lines) => {
                let _ = stream.write_all(head(200, "text/event-stream", "").as_bytes());
                for line in lines {
                    let _ = stream.write_all(format!("{line}\n").as_bytes());
                    if line.is_empty() {
                        std::thread::sleep(pause);
                    }
                }
            }
            Answer::Whole {
                status,
                content_type,
                body,
            } => {
                let length = format!("Retry-After: 0\r\nContent-Length: {}\r\n", body.len());
                let _ = stream.write_all(head(status, &content_type, &length).as_bytes());
                let _ = stream.write_all(body.as_bytes());
            }
            // Dropping the connection unanswered, as a request that failed outright.
            Answer::HangUp => {}
        }
    }
}

/// The request line and headers, then the `Content-Length` body, which is returned.
fn read_request(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(body)
}

/// The task a request is about: the content of its last `user` message.
fn latest_user_message(body: &[u8]) -> String {
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let latest = messages.iter().rev().find(|m| m["role"] == "user");
    latest
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

fn io_error(e: std::io::Error) -> Error {
    Error::Io(format!("demo: {e}"))
}
