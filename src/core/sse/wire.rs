//! The wire shapes of a streamed chunk: only the fields `sse.rs`'s parser reads.
//!
//! `Parser::apply_event` deserializes each `data:` event into a `Chunk`. The text fields borrow
//! from the event unless they hold escapes, and the structs are kept small, because this runs
//! for every delta of every reply. Nothing here decides what a chunk means; the parser does.

use serde::Deserialize;
use serde::de::{IgnoredAny, SeqAccess, Visitor};
use std::borrow::Cow;

#[derive(Deserialize)]
pub(super) struct Chunk<'a> {
    #[serde(borrow)]
    pub(super) choices: Option<FirstChoice<'a>>,
    pub(super) usage: Option<WireUsage>,
    pub(super) error: Option<IgnoredAny>,
}

/// `choices`, of which only the first with index 0 is kept (we never ask for more than one).
/// Read element by element rather than into a `Vec`, which would cost an allocation for every
/// delta of every reply (DESIGN.md, "SSE chunks").
pub(super) struct FirstChoice<'a>(pub(super) Option<WireChoice<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for FirstChoice<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(FirstChoice(None))
    }
}

impl<'de: 'a, 'a> Visitor<'de> for FirstChoice<'a> {
    type Value = FirstChoice<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of choices")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Self::Value, A::Error> {
        while let Some(choice) = seq.next_element::<WireChoice>()? {
            if self.0.is_none() && choice.index.unwrap_or(0) == 0 {
                self.0 = Some(choice);
            }
        }
        Ok(self)
    }
}

// Kept at 128 bytes or less, so serde's moves of it need no `memcpy` call: hence the u32, the
// boxed str and the boxed (rare) `function_call`. See DESIGN.md, "SSE chunks".
#[derive(Deserialize)]
pub(super) struct WireChoice<'a> {
    pub(super) index: Option<u32>,
    #[serde(borrow)]
    pub(super) delta: Option<WireDelta<'a>>,
    pub(super) finish_reason: Option<Box<str>>,
}

#[derive(Deserialize)]
pub(super) struct WireDelta<'a> {
    #[serde(borrow)]
    pub(super) content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) reasoning_content: Option<Cow<'a, str>>,
    /// OpenRouter's and Ollama's name for `reasoning_content`.
    #[serde(borrow)]
    pub(super) reasoning: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) tool_calls: Option<Vec<WireToolCall<'a>>>,
    /// The pre-tools API: one call per reply, no id.
    #[serde(borrow)]
    pub(super) function_call: Option<Box<WireFunction<'a>>>,
}

#[derive(Deserialize)]
pub(super) struct WireToolCall<'a> {
    pub(super) index: Option<u64>,
    pub(super) id: Option<String>,
    #[serde(borrow)]
    pub(super) function: Option<WireFunction<'a>>,
}

#[derive(Deserialize)]
pub(super) struct WireFunction<'a> {
    pub(super) name: Option<String>,
    #[serde(borrow)]
    pub(super) arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
pub(super) struct WireUsage {
    pub(super) prompt_tokens: Option<u64>,
    pub(super) completion_tokens: Option<u64>,
    pub(super) prompt_tokens_details: Option<WireUsageDetails>,
    /// OpenRouter: what the request cost, in credits (US$). Any JSON value, so that a gateway
    /// sending a string here costs only the figure, not the reply; `sse.rs` keeps numbers.
    pub(super) cost: Option<serde_json::Value>,
}

#[derive(Deserialize)]
pub(super) struct WireUsageDetails {
    pub(super) cached_tokens: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_choice(data: &str) -> Option<String> {
        let chunk: Chunk = serde_json::from_str(data).expect("a valid chunk");
        let choice = chunk.choices?.0?;
        Some(choice.delta?.content?.into_owned())
    }

    #[test]
    fn only_the_first_choice_with_index_zero_is_kept() {
        let two = r#"{"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"}},{"index":0,"delta":{"content":"c"}}]}"#;
        assert_eq!(first_choice(two).as_deref(), Some("a"));
        let no_index = r#"{"choices":[{"delta":{"content":"a"}}]}"#;
        assert_eq!(first_choice(no_index).as_deref(), Some("a"));
        assert_eq!(first_choice(r#"{"choices":[]}"#), None);
        assert_eq!(first_choice(r#"{"choices":null,"usage":null}"#), None);
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

    /// See the comment above `WireChoice`: a bigger choice is copied by `memcpy` calls.
    #[test]
    fn a_choice_stays_small_enough_to_move_cheaply() {
        assert!(
            size_of::<WireChoice>() <= 128,
            "{}",
            size_of::<WireChoice>()
        );
    }
}
