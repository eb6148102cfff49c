//! The offline demo: a scripted model on 127.0.0.1 drives the real client, loop and tools.
//!
//! `corecoder --demo` (or `corecoder` with no API key) lands here. A tiny HTTP server inside
//! the binary answers each chat-completions request with the next recorded SSE stream, and the
//! ordinary `Llm` + `Agent` fix a bug in a throwaway project and run its test. Nothing is
//! faked on the client side; the model is the only thing scripted. No key, no network.

use crate::agent::{Agent, Event, Finish};
use crate::config::Config;
use crate::consent::{Consent, Mode};
use crate::error::Error;
use crate::llm::Llm;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const CALC: &str = "# calc.sh: a tiny calculator library\nadd() {\n    echo $(( $1 - $2 ))\n}\n";
const TEST: &str = "#!/bin/sh\n. ./calc.sh\nresult=$(add 2 3)\nif [ \"$result\" = 5 ]; then\n    echo \"ok: add 2 3 = 5\"\nelse\n    echo \"FAIL: add 2 3 = $result, expected 5\"\n    exit 1\nfi\n";

pub fn run(on_event: &mut dyn FnMut(Event)) -> Result<Finish, Error> {
    let project = make_project()?;
    let listener = TcpListener::bind("127.0.0.1:0").map_err(io_error)?;
    let address = listener.local_addr().map_err(io_error)?;
    eprintln!(
        "Demo: a scripted model at http://{address}/v1 drives the real agent in {}\n",
        project.display()
    );
    let script = script();
    let finish = std::thread::scope(|scope| {
        let server = scope.spawn(|| serve(&listener, &script));
        let config = Config {
            api_key: Some("demo".to_string()),
            base_url: format!("http://{address}/v1"),
            model: "scripted-demo".to_string(),
            ..Config::default()
        };
        let mut agent = Agent::new(
            Arc::new(Llm::new(config)),
            project.clone(),
            Consent::new(Mode::AllowAll),
        );
        agent.set_max_rounds(script.len() as u32);
        let finish = agent.run(
            "Fix the bug in calc.sh and make test_calc.sh pass.",
            on_event,
        );
        // One more connection wakes the server if the agent stopped before the script ended.
        let _ = TcpStream::connect(address);
        let _ = server.join();
        finish
    });
    let _ = std::fs::remove_dir_all(&project);
    finish
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

fn tool_calls(narration: &str, calls: &[(&str, Value)]) -> String {
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

fn text(answer: &str) -> String {
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

/// Answer one request per connection with the next stream, until the script is done.
fn serve(listener: &TcpListener, script: &[String]) {
    for body in script {
        let Ok((mut stream, _)) = listener.accept() else {
            return;
        };
        if read_request(&mut stream).is_err() {
            return;
        }
        let head =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
        let _ = stream.write_all(head.as_bytes());
        // A short pause between chunks, so the demo visibly streams.
        for event in body.split_inclusive("\n\n") {
            let _ = stream.write_all(event.as_bytes());
            std::thread::sleep(Duration::from_millis(8));
        }
    }
}

/// Read the request line, headers and `Content-Length` body (the body itself is not needed).
fn read_request(stream: &mut TcpStream) -> std::io::Result<()> {
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
    reader.read_exact(&mut body)
}

fn io_error(e: std::io::Error) -> Error {
    Error::Io(format!("demo: {e}"))
}
