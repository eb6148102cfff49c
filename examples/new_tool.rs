//! Adding a tool in one file, end to end: a `word_count` tool the model calls and reads.
//!
//! Built-in tools are dispatched by the one `match` in `src/core/dispatch.rs`, so a program that
//! only *uses* the library cannot add an arm there. Two honest ways remain:
//!
//! 1. In a fork (a built-in tool), four steps: write `src/tools/word_count.rs` with an `Args`
//!    struct, `run(args, ctx) -> Result<Outcome, String>` and the line re-exporting its schema
//!    (copy `glob.rs`); add that schema, `word_count()`, to `src/tools/schemas.rs` and
//!    `pub mod word_count;` to `src/tools/mod.rs`; in `src/core/dispatch.rs` add
//!    `word_count::schema()` to `schemas` and the arm
//!    `"word_count" => parse(name, args).map(|a| word_count::run(a, ctx)),` to `dispatch`; and
//!    add the name to `consent::needs_consent` if it changes anything (or to
//!    `early::is_read_only` if it may start while the reply streams).
//! 2. Without touching the library (this file): serve the tool over MCP. The program starts
//!    itself a second time with `--mcp-server`, where `serve_mcp` below answers the MCP stdio
//!    protocol; the agent offers the tool as `mcp__local__word_count`, asks consent for it like
//!    any MCP tool, and calls it through `Servers::call`. Nothing of the agent is mocked.
//!
//! `cargo run --example new_tool` runs it against a scripted model on loopback.

use corecoder::app::demo::{Turn, start_scripted_model, text, tool_calls};
use corecoder::core::consent::{Consent, Mode};
use corecoder::core::event::Event;
use corecoder::extras::mcp::{ServerConfig, Servers};
use corecoder::{Agent, Error, Llm};
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::sync::Arc;

fn main() -> Result<(), Error> {
    if std::env::args().any(|arg| arg == "--mcp-server") {
        serve_mcp();
        return Ok(());
    }
    let me = std::env::current_exe().map_err(|e| Error::Io(e.to_string()))?;
    let server = ServerConfig {
        name: "local".to_string(),
        command: me.display().to_string(),
        args: vec!["--mcp-server".to_string()],
        env: Vec::new(),
        timeout: None,
    };
    let (servers, warnings) = Servers::start(vec![server]);
    warnings.iter().for_each(|w| eprintln!("warning: {w}"));
    let count = json!({"text": "one coding agent you can read in an afternoon"});
    let model = start_scripted_model(vec![
        Turn::next(tool_calls(
            "Counting.",
            &[("mcp__local__word_count", count)],
        )),
        Turn::next(text("The sentence has 9 words.")),
    ])?;
    let cwd = std::env::temp_dir();
    // MCP tools need consent; AllowAll stands for the user answering "yes".
    let mut agent = Agent::new(
        Arc::new(Llm::new(model.config())),
        cwd,
        Consent::new(Mode::AllowAll),
    );
    agent.extras.set_mcp(servers);
    let finish = agent.run("How many words?", &mut |event| match event {
        Event::ToolCall { name, summary } => println!("> {name}({summary})"),
        Event::ToolResult { text, .. } => println!("  {text}"),
        _ => {}
    })?;
    println!("{finish:?}");
    Ok(())
}

/// The whole tool, as an MCP stdio server: one JSON-RPC message per line in, one per line out.
fn serve_mcp() {
    let stdout = std::io::stdout();
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let request: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        // Notifications (no id) want no answer.
        let Some(id) = request.get("id") else {
            continue;
        };
        let answer = match request["method"].as_str().unwrap_or("") {
            "initialize" => json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "word-count", "version": "1"}}),
            "tools/list" => json!({"tools": [{"name": "word_count",
                "description": "Count the words of a text",
                "inputSchema": {"type": "object", "required": ["text"],
                    "properties": {"text": {"type": "string"}}}}]}),
            "tools/call" => word_count(&request["params"]["arguments"]),
            other => {
                let error = json!({"code": -32601, "message": format!("no method {other}")});
                json!({"jsonrpc": "2.0", "id": id, "error": error})
            }
        };
        let reply = match answer.get("jsonrpc") {
            Some(_) => answer,
            None => json!({"jsonrpc": "2.0", "id": id, "result": answer}),
        };
        let mut out = stdout.lock();
        let _ = writeln!(out, "{reply}").and_then(|()| out.flush());
    }
}

/// The tool itself. A failure is text for the model (`isError`), never a panic.
fn word_count(arguments: &Value) -> Value {
    match arguments["text"].as_str() {
        Some(text) => {
            let words = text.split_whitespace().count();
            json!({"content": [{"type": "text", "text": format!("{words} words")}]})
        }
        None => {
            json!({"content": [{"type": "text", "text": "`text` is missing"}], "isError": true})
        }
    }
}
