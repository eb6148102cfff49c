//! What goes over the wire: the request body (`request_body`), the shapes of a streamed chunk
//! (only the fields `sse.rs` reads, text borrowed where it can be: DESIGN.md, "SSE chunks") and
//! the tool calls put back together from their fragments (`Calls`).
//! Nothing here sends or reads a byte, or judges arguments beyond "a whole JSON object".

use crate::core::config::{Config, ToolChoice};
use crate::core::event::{Error, Event};
use crate::core::message::{Message, Reply, ToolCall};
use crate::tools::support::json_depth::JsonDepth;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use std::borrow::Cow;
use std::collections::HashMap;

#[derive(Deserialize)]
pub(crate) struct Chunk<'a> {
    #[serde(borrow)]
    pub(crate) choices: Option<Vec<WireChoice<'a>>>,
    pub(crate) usage: Option<WireUsage>,
    pub(crate) error: Option<IgnoredAny>,
}

/// The first choice with index 0: we never ask for more than one (DESIGN.md, "SSE chunks").
pub(crate) fn first_choice(choices: Option<Vec<WireChoice>>) -> Option<WireChoice> {
    let first = |choice: &WireChoice| choice.index.unwrap_or(0) == 0;
    choices.into_iter().flatten().find(first)
}

#[derive(Deserialize)]
pub(crate) struct WireChoice<'a> {
    pub(crate) index: Option<u32>,
    /// A whole completion's `message` has a delta's shape (`not_a_stream::whole_completion`).
    #[serde(borrow, alias = "message")]
    pub(crate) delta: Option<WireDelta<'a>>,
    pub(crate) finish_reason: Option<String>,
    /// Moonshot's streams put the usage here, in the last choice, not beside `choices`.
    pub(crate) usage: Option<Box<WireUsage>>,
}

#[derive(Deserialize)]
pub(crate) struct WireDelta<'a> {
    #[serde(borrow)]
    pub(crate) content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(crate) reasoning_content: Option<Cow<'a, str>>,
    /// OpenRouter's and Ollama's name for `reasoning_content`.
    #[serde(borrow)]
    pub(crate) reasoning: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(crate) tool_calls: Option<Vec<WireToolCall<'a>>>,
    /// The pre-tools API: one call per reply, no id.
    #[serde(borrow)]
    pub(crate) function_call: Option<Box<WireFunction<'a>>>,
}

#[derive(Deserialize, Default)]
pub(crate) struct WireToolCall<'a> {
    pub(crate) index: Option<u64>,
    pub(crate) id: Option<String>,
    #[serde(borrow)]
    pub(crate) function: Option<WireFunction<'a>>,
}

#[derive(Deserialize)]
pub(crate) struct WireFunction<'a> {
    pub(crate) name: Option<String>,
    #[serde(borrow)]
    pub(crate) arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
pub(crate) struct WireUsage {
    pub(crate) prompt_tokens: Option<serde_json::Value>,
    pub(crate) completion_tokens: Option<serde_json::Value>,
    /// The prompt's cached part: `cached_tokens` here (Moonshot) or in the details (OpenAI,
    /// whose details have this shape), or DeepSeek's `prompt_cache_hit_tokens`.
    pub(crate) cached_tokens: Option<serde_json::Value>,
    pub(crate) prompt_tokens_details: Option<Box<WireUsage>>,
    pub(crate) prompt_cache_hit_tokens: Option<serde_json::Value>,
    /// OpenRouter's cost in credits (US$); any JSON value, so a string costs only the figure.
    pub(crate) cost: Option<serde_json::Value>,
}

/// Tool calls from their fragments, however oddly providers number them (see `slot_for`).
/// Each fragment costs a lookup, not a scan of the calls so far (80,000 calls took 30 s).
#[derive(Default)]
pub(crate) struct Calls {
    /// Calls in order of first appearance, each with the index the provider gave it and how
    /// deep in JSON its arguments are; once closed, the call is judged and final.
    calls: Vec<(u64, ToolCall, JsonDepth)>,
    /// The last call opened with each index, or given each id; the index after the highest.
    by_index: HashMap<u64, usize>,
    by_id: HashMap<String, usize>,
    next_index: u64,
}

impl Calls {
    /// Merge one fragment into its call. A call is finished once its arguments are a whole
    /// JSON object (nothing valid can follow a closing brace): it is announced then, once.
    pub(crate) fn merge(&mut self, fragment: WireToolCall, on_delta: &mut dyn FnMut(Event)) {
        let id = fragment.id.filter(|id| !id.is_empty());
        let slot = self.slot_for(fragment.index, id.as_deref());
        if let Some(id) = &id {
            self.by_id.insert(id.clone(), slot);
        }
        let (_, call, depth) = &mut self.calls[slot];
        // id and name are assigned, never appended: llama.cpp repeats them in every fragment.
        if let Some(id) = id {
            call.id = id;
        }
        // An announced call may already be running (read-only calls start early): it is final.
        let Some(function) = fragment.function.filter(|_| !depth.is_closed()) else {
            return;
        };
        if let Some(name) = function.name.filter(|name| !name.is_empty()) {
            call.name = name;
        }
        call.arguments
            .push_str(&function.arguments.unwrap_or_default());
        depth.update(&call.arguments);
        if depth.is_closed() && serde_json::from_str::<IgnoredAny>(&call.arguments).is_ok() {
            on_delta(Event::CallReady(call));
        }
    }

    /// Which call a fragment belongs to; opens a new one when none fits.
    fn slot_for(&mut self, index: Option<u64>, id: Option<&str>) -> usize {
        let by_id = id.and_then(|id| self.by_id.get(id).copied());
        let same_id = |&slot: &usize| Some(self.calls[slot].1.id.as_str()) == id;
        let open = match index {
            Some(index) => self.by_index.get(&index).copied(),
            None => by_id.filter(same_id).or(self.calls.len().checked_sub(1)),
        };
        if let Some(slot) = open {
            let call = &self.calls[slot].1;
            // Some providers send every call as index 0; a new id after arguments is a new call.
            let other_call = id.is_some_and(|id| {
                !call.id.is_empty() && call.id != id && !call.arguments.is_empty()
            });
            if !other_call {
                return slot;
            }
        }
        let index = index.unwrap_or(self.next_index);
        self.next_index = self.next_index.max(index.saturating_add(1));
        self.by_index.insert(index, self.calls.len());
        let call = (index, ToolCall::default(), JsonDepth::default());
        self.calls.push(call);
        self.calls.len() - 1
    }

    /// The calls in index order (stable: calls that share an index keep the order they came
    /// in), each with an id (`call_N` where the provider gave none).
    pub(crate) fn in_index_order(mut self) -> Vec<ToolCall> {
        self.calls.sort_by_key(|(index, _, _)| *index);
        for (n, (_, call, _)) in self.calls.iter_mut().enumerate() {
            if call.id.is_empty() {
                call.id = format!("call_{n}");
            }
        }
        self.calls.into_iter().map(|(_, call, _)| call).collect()
    }
}

/// As the protocol has it; a provider that takes it otherwise gets it rewritten (`quirks.rs`).
pub fn request_body(config: &Config, model: &str, messages: &[Message], tools: &[Value]) -> Value {
    let mut body = json!({"model": model, "messages": messages, "stream": true});
    if !tools.is_empty() {
        body["tools"] = json!(tools);
        if let Some(choice) = &config.tool_choice {
            body["tool_choice"] = match choice {
                ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
                choice => json!(choice),
            };
        }
    }
    body["stream_options"] = json!({"include_usage": true});
    body["temperature"] = json!(config.temperature);
    body["max_tokens"] = json!(config.max_tokens);
    body
}

/// Most tool calls taken from one reply: a real model sends a few dozen, each sent back after.
pub(crate) const MAX_CALLS: usize = 1000;
/// Longest tool name or call id: providers allow 64-character names, and each is sent back.
pub(crate) const MAX_NAME: usize = 256;

/// A reply whose calls no real model sends is refused whole, saying why, whatever its dialect:
/// nothing of it runs, and it is not asked for again (a server that sent it once would again).
pub(crate) fn well_formed(reply: Reply) -> Result<Reply, Error> {
    let calls = reply.tool_calls.len();
    let longer = |call: &ToolCall| call.name.len().max(call.id.len());
    let longest = reply.tool_calls.iter().map(longer).max().unwrap_or(0);
    let why = if calls > MAX_CALLS {
        format!("the reply holds {calls} tool calls; at most {MAX_CALLS} are taken from one reply")
    } else if longest > MAX_NAME {
        format!("a call's name or id is {longest} bytes long; a name or id is at most {MAX_NAME}")
    } else {
        return Ok(reply);
    };
    Err(Error::Api(why))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(calls: usize, name: &str, id: &str) -> Reply {
        let call = ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: "{}".into(),
        };
        Reply {
            tool_calls: vec![call; calls],
            ..Reply::default()
        }
    }

    #[test]
    fn replies_no_model_sends_are_refused_saying_why() {
        assert!(well_formed(reply(MAX_CALLS, "bash", "c1")).is_ok());
        assert!(well_formed(reply(1, &"n".repeat(MAX_NAME), "c1")).is_ok());
        let said = |reply| {
            well_formed(reply)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        let many = said(reply(MAX_CALLS + 1, "bash", "c1"));
        assert!(many.contains("the reply holds 1001 tool calls"), "{many}");
        let name = said(reply(1, &"n".repeat(MAX_NAME + 1), "c1"));
        assert!(name.contains("name or id is 257 bytes long"), "{name}");
        let id = said(reply(1, "bash", &"i".repeat(60_000)));
        assert!(id.contains("name or id is 60000 bytes long"), "{id}");
    }

    fn first_content(data: &str) -> Option<String> {
        let chunk: Chunk = serde_json::from_str(data).expect("a valid chunk");
        let choice = super::first_choice(chunk.choices)?;
        Some(choice.delta?.content?.into_owned())
    }

    #[test]
    fn only_the_first_choice_with_index_zero_is_kept() {
        let two = r#"{"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"}},{"index":0,"delta":{"content":"c"}}]}"#;
        assert_eq!(first_content(two).as_deref(), Some("a"));
        let no_index = r#"{"choices":[{"delta":{"content":"a"}}]}"#;
        assert_eq!(first_content(no_index).as_deref(), Some("a"));
        assert_eq!(first_content(r#"{"choices":[]}"#), None);
        assert_eq!(first_content(r#"{"choices":null,"usage":null}"#), None);
        assert!(serde_json::from_str::<Chunk>(r#"{"choices":{"index":0}}"#).is_err());
    }

    /// OpenRouter's usage chunk (its documented shape): the cost is read; a cost that is not a
    /// number (a string, from some gateway) still parses, so the reply is not lost over it.
    #[test]
    fn the_usage_cost_is_read_and_a_strange_one_does_not_fail_the_chunk() {
        let openrouter = r#"{"object":"chat.completion.chunk","choices":[],"usage":{"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":0},"cost":0.95,"cost_details":{"upstream_inference_cost":19},"prompt_tokens":194,"prompt_tokens_details":{"cached_tokens":0,"cache_write_tokens":100,"audio_tokens":0},"total_tokens":196}}"#;
        let cost = |data: &str| {
            let chunk: Chunk = serde_json::from_str(data).expect("a valid chunk");
            chunk.usage.and_then(|u| u.cost).and_then(|c| c.as_f64())
        };
        assert_eq!(cost(openrouter), Some(0.95));
        assert_eq!(cost(r#"{"usage":{"prompt_tokens":1,"cost":"0.95"}}"#), None);
        assert_eq!(cost(r#"{"usage":{"prompt_tokens":1,"cost":null}}"#), None);
        assert_eq!(cost(r#"{"usage":{"prompt_tokens":1}}"#), None);
    }

    /// DeepSeek now sends its hit tokens and OpenAI's nested field both; a usage in the choice
    /// (Moonshot) and beside it are both read; odd counts fail no chunk they are not in.
    #[test]
    fn cached_tokens_in_every_spelling_parse() {
        let usage = |data: &str| {
            let chunk: Chunk = serde_json::from_str(data).expect("a valid chunk");
            let in_choice = super::first_choice(chunk.choices).and_then(|c| c.usage);
            let usage = chunk.usage.or(in_choice.map(|u| *u)).expect("a usage");
            let nested = usage.prompt_tokens_details.and_then(|d| d.cached_tokens);
            let n = |count: Option<serde_json::Value>| count.and_then(|c| c.as_u64());
            (
                n(nested),
                n(usage.prompt_cache_hit_tokens),
                n(usage.cached_tokens),
            )
        };
        let deepseek = r#"{"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":6,"completion_tokens":92,"total_tokens":98,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":81},"prompt_cache_hit_tokens":4,"prompt_cache_miss_tokens":2}}"#;
        assert_eq!(usage(deepseek), (Some(4), Some(4), None));
        let moonshot = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":19,"completion_tokens":13,"total_tokens":32,"cached_tokens":10}}]}"#;
        assert_eq!(usage(moonshot), (None, None, Some(10)));
        let both = r#"{"choices":[],"usage":{"prompt_tokens":19,"cached_tokens":10,"prompt_tokens_details":{"cached_tokens":10}}}"#;
        assert_eq!(usage(both), (Some(10), None, Some(10)));
        let nulls = r#"{"choices":[{"index":0,"usage":null}],"usage":{"prompt_tokens":1,"cached_tokens":null,"prompt_cache_hit_tokens":null,"prompt_tokens_details":{"cached_tokens":null}}}"#;
        assert_eq!(usage(nulls), (None, None, None));
    }
}
