//! The MCP messages corecoder speaks over a wire: the handshake that lists a server's tools, and
//! the text the model reads of a `tools/call` result.
//!
//! `mcp.rs` calls `handshake` when a server starts or reconnects, and `content_text` on every
//! result. The listing is bounded: pages are read up to 8 MiB, at most 100 tools a server are
//! kept (each schema within 8 KiB, each description cut at 2,000 characters), and what is left
//! out is counted for the warning. This file only shapes and reads messages; it starts no process and keeps no state
//! (`mcp_wire.rs` carries the lines).

use crate::extras::mcp_wire::{Wire, result_of};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// We ask for the first; a server may answer with any of them.
const PROTOCOL_VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];
/// The most tools one server offers the model; the rest are dropped, and a warning says how
/// many. OpenAI's API refuses more than 128 functions in a request, ours included.
pub(crate) const MAX_TOOLS_PER_SERVER: usize = 100;
/// The most bytes of `tools/list` pages read from one server; the listing stops there.
pub(crate) const MAX_LISTING_BYTES: usize = 8 << 20;
/// A longer description is cut (every tool's description is in every request).
const MAX_DESCRIPTION_CHARS: usize = 2_000;
/// A tool whose input schema is larger than this, as JSON, is dropped.
pub(crate) const MAX_SCHEMA_BYTES: usize = 8 * 1024;

/// A server's tools as listed, within the bounds above.
#[derive(Default)]
pub(crate) struct Listing {
    pub(crate) tools: Vec<Value>,
    /// Tools whose `mcp__SERVER__TOOL` name the model API refuses.
    pub(crate) hidden: usize,
    /// Tools listed but not offered: past the cap, or with a schema too large.
    pub(crate) dropped: usize,
    /// The listing was stopped at `MAX_LISTING_BYTES`: the server may list more.
    pub(crate) cut: bool,
}

/// One `tools/list` answer, its tools kept as text until one is taken.
#[derive(Deserialize)]
struct Page<'a> {
    #[serde(borrow, default)]
    result: Option<PageResult<'a>>,
}

#[derive(Deserialize)]
struct PageResult<'a> {
    #[serde(borrow, default)]
    tools: Vec<&'a RawValue>,
    #[serde(rename = "nextCursor")]
    next_cursor: Option<Value>,
}

/// `initialize`, `notifications/initialized`, then the pages of `tools/list`, within `timeout`.
/// `accepted` says whether the model API takes a tool's name.
pub(crate) fn handshake(
    wire: &Wire,
    timeout: Duration,
    accepted: &dyn Fn(&str) -> bool,
) -> Result<Listing, String> {
    let deadline = Instant::now() + timeout;
    let left = || deadline.saturating_duration_since(Instant::now());
    // Start-up is bounded by its timeout alone.
    let never = AtomicBool::new(false);
    let client = json!({"name": "corecoder", "version": env!("CARGO_PKG_VERSION")});
    let hello =
        json!({"protocolVersion": PROTOCOL_VERSIONS[0], "capabilities": {}, "clientInfo": client});
    let answer = result_of(&wire.request("initialize", hello, left(), &never)?)?;
    let version = answer
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or("none");
    if !PROTOCOL_VERSIONS.contains(&version) {
        return Err(format!("unsupported protocol version {version}"));
    }
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    wire.send(&initialized, deadline, &never)?;
    let (mut listing, mut params, mut read) = (Listing::default(), json!({}), 0);
    loop {
        let line = wire.request("tools/list", params, left(), &never)?;
        read += line.len();
        let page: Page = serde_json::from_slice(&line)
            .map_err(|e| format!("tools/list answered with something else ({e})"))?;
        let Some(page) = page.result else {
            return Ok(listing);
        };
        page.tools
            .iter()
            .for_each(|tool| listing.take(tool, accepted));
        match page.next_cursor.as_ref().and_then(Value::as_str) {
            Some(_) if read >= MAX_LISTING_BYTES => {
                listing.cut = true;
                return Ok(listing);
            }
            Some(cursor) => params = json!({"cursor": cursor}),
            None => return Ok(listing),
        }
    }
}

impl Listing {
    /// Keep one listed tool if there is room and it is within bounds; count it if not.
    fn take(&mut self, raw: &RawValue, accepted: &dyn Fn(&str) -> bool) {
        if self.tools.len() >= MAX_TOOLS_PER_SERVER {
            self.dropped += 1;
            return;
        }
        let Ok(mut tool) = serde_json::from_str::<Value>(raw.get()) else {
            return;
        };
        match tool_name(&tool) {
            "" => return,
            name if !accepted(name) => return self.hidden += 1,
            _ => {}
        }
        let schema = tool.get("inputSchema").map_or(0, |s| s.to_string().len());
        if schema > MAX_SCHEMA_BYTES {
            self.dropped += 1;
            return;
        }
        if let Some(Value::String(description)) = tool.get_mut("description")
            && let Some((cut, _)) = description.char_indices().nth(MAX_DESCRIPTION_CHARS)
        {
            description.truncate(cut);
            description.push_str(" …");
        }
        self.tools.push(tool);
    }

    /// Offer at most `room` tools (what the servers before it left of the cap in all).
    pub(crate) fn cap(&mut self, room: usize) {
        self.dropped += self.tools.len().saturating_sub(room);
        self.tools.truncate(room);
    }

    /// The warning for a server some of whose tools are not offered, saying how many.
    pub(crate) fn dropped_note(&self, name: &str, in_all: usize) -> Option<String> {
        let (kept, dropped) = (self.tools.len(), self.dropped);
        let more = match self.cut {
            true => format!(
                " (its listing was cut after {} MiB, so it may list more)",
                MAX_LISTING_BYTES >> 20
            ),
            false => String::new(),
        };
        (dropped > 0 || self.cut).then(|| {
            format!(
                "MCP server {name}: {kept} tools offered, {dropped} dropped{more}: at most \
                 {MAX_TOOLS_PER_SERVER} per server and {in_all} in all, each schema within {} KiB",
                MAX_SCHEMA_BYTES >> 10
            )
        })
    }
}

pub(crate) fn tool_name(tool: &Value) -> &str {
    tool.get("name").and_then(Value::as_str).unwrap_or("")
}

/// The text of a `tools/call` result: text contents as they are, others in a short bracket.
pub(crate) fn content_text(result: &Value) -> String {
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

/// OpenAI-compatible APIs refuse a whole request over one name outside `[A-Za-z0-9_-]{1,64}`.
pub(crate) fn valid_function_name(name: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    name.len() <= 64 && name.chars().all(allowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take_all(tools: &[Value]) -> Listing {
        let mut listing = Listing::default();
        for tool in tools {
            let raw = RawValue::from_string(tool.to_string()).unwrap();
            listing.take(&raw, &|name| !name.contains('.'));
        }
        listing
    }

    #[test]
    fn a_listing_keeps_what_fits_and_counts_the_rest() {
        let long = "d".repeat(5_000);
        let huge = json!({"type": "object", "description": "s".repeat(9_000)});
        let mut tools = vec![
            json!({"name": "long", "description": long}),
            json!({"name": "huge", "inputSchema": huge}),
            json!({"name": "bad.name"}),
            json!({"description": "nameless"}),
        ];
        tools.extend((0..150).map(|i| json!({"name": format!("t{i}")})));
        let listing = take_all(&tools);
        assert_eq!(listing.tools.len(), MAX_TOOLS_PER_SERVER);
        let description = listing.tools[0]["description"].as_str().unwrap();
        assert_eq!(description.chars().count(), MAX_DESCRIPTION_CHARS + 2);
        assert!(description.ends_with(" …"));
        assert_eq!(tool_name(&listing.tools[1]), "t0");
        // `huge`, and the 51 past the cap.
        assert_eq!(listing.dropped, 1 + 150 - (MAX_TOOLS_PER_SERVER - 1));
        assert_eq!(listing.hidden, 1);
    }
}
