//! The MCP messages corecoder speaks over a wire: the handshake that lists a server's tools, and
//! the text the model reads of a `tools/call` result.
//!
//! `mcp.rs` calls `handshake` when a server starts or reconnects, and `content_text` on every
//! result. This file only shapes and reads messages; it starts no process and keeps no state
//! (`mcp_wire.rs` carries the lines).

use crate::extras::mcp_wire::Wire;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// We ask for the first; a server may answer with any of them.
const PROTOCOL_VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

/// `initialize`, `notifications/initialized`, then every page of `tools/list`, within `timeout`.
pub fn handshake(wire: &Wire, timeout: Duration) -> Result<Vec<Value>, String> {
    let deadline = Instant::now() + timeout;
    let left = || deadline.saturating_duration_since(Instant::now());
    let client = json!({"name": "corecoder", "version": env!("CARGO_PKG_VERSION")});
    let hello =
        json!({"protocolVersion": PROTOCOL_VERSIONS[0], "capabilities": {}, "clientInfo": client});
    let answer = wire.request("initialize", hello, left())?;
    let version = answer
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or("none");
    if !PROTOCOL_VERSIONS.contains(&version) {
        return Err(format!("unsupported protocol version {version}"));
    }
    wire.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
    let (mut tools, mut params) = (Vec::new(), json!({}));
    loop {
        let page = wire.request("tools/list", params, left())?;
        let listed = page
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        tools.extend(listed.filter(|tool| !tool_name(tool).is_empty()).cloned());
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(cursor) => params = json!({"cursor": cursor}),
            None => return Ok(tools),
        }
    }
}

pub fn tool_name(tool: &Value) -> &str {
    tool.get("name").and_then(Value::as_str).unwrap_or("")
}

/// The text of a `tools/call` result: text contents as they are, others in a short bracket.
pub fn content_text(result: &Value) -> String {
    let describe = |item: &Value| {
        let field = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
        let resource = &item["resource"];
        match field("type") {
            "text" => field("text").to_string(),
            "image" | "audio" => format!(
                "[{}, {} bytes]",
                field("mimeType"),
                base64_len(field("data"))
            ),
            "resource_link" => format!("[resource link {}]", field("uri")),
            "resource" => match resource.get("text").and_then(Value::as_str) {
                Some(text) => text.to_string(),
                None => format!("[resource {}]", resource["uri"].as_str().unwrap_or("")),
            },
            other => format!("[{other} content]"),
        }
    };
    let contents = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    let texts: Vec<String> = contents.map(describe).collect();
    match result.get("structuredContent") {
        Some(structured) if texts.is_empty() => structured.to_string(),
        _ => texts.join("\n"),
    }
}

fn base64_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding)
}
