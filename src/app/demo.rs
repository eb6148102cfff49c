//! The offline demo: a scripted model on 127.0.0.1 drives the real client, loop and tools.
//!
//! `corecoder --demo` (or `corecoder` with no API key) lands here. A tiny HTTP server inside
//! the binary answers each chat-completions request with the next recorded SSE stream, and the
//! ordinary `Llm` + `Agent` fix a bug in a throwaway project and run its test. Nothing is
//! faked on the client side; the model is the only thing scripted. No key, no network.
//!
//! `start_scripted_model` is the same model (`scripted_model.rs`) for any script of `Turn`s;
//! the programs in `examples/` use it with `tool_calls` and `text` to run offline. It
//! understands no more of a request than its latest user message, which picks the reply.

use crate::app::scripted_model::{ScriptedModel, start_model};
use crate::client::llm::Llm;
use crate::core::agent::Agent;
use crate::core::consent::{Consent, Mode};
use crate::core::event::Error;
use crate::core::event::Event;
use crate::core::event::Finish;
use crate::extras::account::Account;
use crate::extras::trace::Trace;
use crate::extras::trace::replay::Answer;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
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
        agent
            .extras
            .set_account(Account::default().with_trace(trace));
        agent.extras.account().trace_task(TASK, agent.consent.plan);
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
    pub(crate) stream: String,
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

/// Start a scripted model on a free loopback port. A request that no turn matches gets a 400
/// naming it, so a script that runs short fails at once instead of hanging.
pub fn start_scripted_model(mut script: Vec<Turn>) -> Result<ScriptedModel, Error> {
    // A short pause after each event, so the demo visibly streams.
    let pause = Duration::from_millis(8);
    start_model(pause, Box::new(move |body| next_turn(&mut script, body)))
}

fn make_project() -> Result<PathBuf, Error> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("corecoder-demo-{}-{stamp}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(io_error)?;
    // One modification time for both: `glob` (newest first) then lists them by name, the same
    // in every run, and in a replay of the demo's trace.
    let now = std::time::SystemTime::now();
    for (name, text) in [("calc.sh", CALC), ("test_calc.sh", TEST)] {
        std::fs::write(dir.join(name), text).map_err(io_error)?;
        let file = std::fs::File::options().write(true).open(dir.join(name));
        file.and_then(|f| f.set_modified(now)).map_err(io_error)?;
    }
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
