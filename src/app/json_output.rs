//! `-p --output-format json|stream-json`: what scripts read instead of the human display.
//!
//! `json` prints one object when the task ends; `stream-json` prints one object per line as
//! things happen (the session, text deltas, tool calls and results, usage) and the same final
//! object last. Only stdout carries JSON. It runs the task like the text mode; it decides
//! nothing about the conversation.

use crate::app::flags::OutputFormat;
use crate::app::process;
use crate::core::agent::Agent;
use crate::core::event::Error;
use crate::core::event::Finish;
use crate::core::event::{Event, ResultKind};
use crate::core::message::Usage;
use crate::extras::account::Account;
use crate::extras::cost::ledger::cache_hit_rate;
use serde_json::{Value, json};
use std::io::Write;
use std::time::Instant;

/// Run `task` and report in `format`; returns the exit code (the same as in text mode).
pub fn run(agent: &mut Agent, task: &str, format: OutputFormat) -> i32 {
    let started = Instant::now();
    let session_id = agent
        .extras
        .log()
        .map(|log| log.id().to_string())
        .unwrap_or_default();
    let streaming = format == OutputFormat::StreamJson;
    if streaming {
        let model = agent.extras.account().model(agent.llm().config());
        let cwd = agent.cwd.display().to_string();
        let init = json!({"type": "system", "subtype": "init", "session_id": session_id,
            "model": model, "cwd": cwd});
        let _ = print_line(&init);
    }
    // A reader that went away (`| head -1`) has no use for the rest: the run stops.
    let cancel = agent.cancel.clone();
    let account = agent.extras.account().clone();
    let mut closed = false;
    let result = agent.run(task, &mut |event| {
        if let (true, false, Some(line)) = (streaming, closed, event_json(&event, &account))
            && !print_line(&line)
        {
            closed = true;
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    });
    if closed {
        return 141;
    }
    let (subtype, text, code) = match &result {
        Ok(Finish::Answer(text)) => ("success", text.clone(), 0),
        Ok(Finish::CutOff(text)) => ("error_max_tokens", text.clone(), 6),
        Ok(Finish::RoundCap) => (
            "error_max_rounds",
            "reached maximum tool-call rounds".into(),
            3,
        ),
        Err(Error::Budget(why)) => ("error_budget", why.clone(), 4),
        Err(Error::Looping(why)) => ("error_loop", why.clone(), 5),
        Err(Error::Interrupted) => ("interrupted", "interrupted".to_string(), 130),
        Err(e) => ("error_api", e.to_string(), process::exit_code(e)),
    };
    let usage = agent.extras.account().usage();
    let (cost, cost_unknown_reason) = cost_json(agent.extras.account());
    let _ = print_line(&json!({
        "type": "result",
        "subtype": subtype,
        "is_error": code != 0,
        "result": text,
        "session_id": session_id,
        "num_rounds": agent.rounds_used,
        "history_rewrites": agent.extras.rewrites(),
        "duration_ms": started.elapsed().as_millis() as u64,
        "usage": usage_json(&usage, agent.extras.account()),
        "total_cost_usd": cost,
        "cost_unknown_reason": cost_unknown_reason,
    }));
    code
}

/// One `stream-json` line for an agent event; `None` for what scripts need not see.
fn event_json(event: &Event, account: &Account) -> Option<Value> {
    let line = match event {
        Event::Text(text) => json!({"type": "text", "text": text}),
        Event::Reasoning(text) => json!({"type": "reasoning", "text": text}),
        Event::Retry { attempt, why, .. } => {
            json!({"type": "retry", "attempt": attempt, "reason": why})
        }
        Event::Fallback { model, why } => {
            json!({"type": "fallback", "model": model, "reason": why})
        }
        Event::ToolCall { name, summary } => {
            json!({"type": "tool_call", "name": name, "summary": summary})
        }
        Event::ToolResult { name, text, kind } => {
            let is_error = *kind != ResultKind::Ran;
            json!({"type": "tool_result", "name": name, "content": text, "is_error": is_error})
        }
        Event::Replied { usage } => {
            json!({"type": "usage", "usage": usage_json(usage, account)})
        }
        Event::Notice(text) => json!({"type": "notice", "text": text}),
        Event::Requesting { .. } | Event::Proposed { .. } | Event::CallReady(_) => return None,
    };
    Some(line)
}

/// `total_cost_usd` and `cost_unknown_reason`: a number and `null`, or `null` and why. An
/// unknown cost is never reported as 0.0, which a script would read as "free".
fn cost_json(account: &Account) -> (Value, Value) {
    match account.total_dollars() {
        Some(dollars) => (json!(dollars), Value::Null),
        None => {
            let why = format!(
                "price unknown for {} (add it to ~/.corecoder/pricing.json); the requests that \
                 were priced cost ${:.4}",
                account.unpriced_models().join(", "),
                account.dollars()
            );
            (Value::Null, json!(why))
        }
    }
}

/// `cache_hit_rate` is cached ÷ input tokens, from 0 to 1, `null` before any input token;
/// `source` says whose figures these are: `provider`, `estimated` (corecoder's, for every
/// request: cut off, or answered without usage) or `partly_estimated`, as `requests` and
/// `estimated_requests` count them.
fn usage_json(usage: &Usage, account: &Account) -> Value {
    let (requests, estimated) = account.requests();
    let source = match estimated {
        0 => "provider",
        _ if estimated == requests => "estimated",
        _ => "partly_estimated",
    };
    json!({"input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens,
        "cached_input_tokens": usage.cached_tokens, "cache_hit_rate": cache_hit_rate(usage),
        "source": source, "requests": requests, "estimated_requests": estimated})
}

/// A whole line at once, flushed, so a reader never sees half an event. False if stdout is
/// closed.
fn print_line(value: &Value) -> bool {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{value}")
        .and_then(|()| stdout.flush())
        .is_ok()
}
