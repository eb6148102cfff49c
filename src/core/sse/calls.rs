//! Tool calls put back together from their streamed fragments, and told apart when providers
//! number them oddly (every call as index 0, no index at all, ids and names repeated in every
//! fragment). A call is announced ready as soon as its arguments close.
//!
//! Part of the SSE reader (see `sse.rs`), which hands it each fragment of a delta. It does not
//! judge the arguments beyond "a whole JSON object"; the tools do.

use super::ToolCall;
use super::depth::JsonDepth;
use super::wire::WireToolCall;
use crate::core::event::Event;
use serde::de::IgnoredAny;

#[derive(Default)]
pub(super) struct Calls {
    /// Calls in order of first appearance, each with the index the provider gave it.
    calls: Vec<(u64, ToolCall)>,
    /// Which calls `announce_ready` has judged, and how deep in JSON each one's arguments are.
    announced: Vec<bool>,
    depths: Vec<JsonDepth>,
}

impl Calls {
    /// A call is finished once its arguments are a whole JSON object: nothing valid can follow
    /// a closing brace. Say so once per call, as soon as it happens.
    pub(super) fn announce_ready(&mut self, on_delta: &mut dyn FnMut(Event)) {
        self.announced.resize(self.calls.len(), false);
        self.depths.resize(self.calls.len(), JsonDepth::default());
        let judged = self.announced.iter_mut().zip(&mut self.depths);
        for ((_, call), (announced, depth)) in self.calls.iter().zip(judged) {
            if *announced {
                continue;
            }
            // Only the new pieces are counted, and the whole is parsed once, when it closes.
            depth.update(&call.arguments);
            if depth.is_closed() {
                *announced = true;
                if serde_json::from_str::<IgnoredAny>(&call.arguments).is_ok() {
                    on_delta(Event::CallReady(call));
                }
            }
        }
    }

    /// Merge one fragment into its call; returns how many bytes that kept, for `MAX_REPLY`
    /// (a new call counts too, so an endless list of empty calls is bounded as well).
    pub(super) fn merge(&mut self, fragment: WireToolCall) -> usize {
        let id = fragment.id.filter(|id| !id.is_empty());
        let calls = self.calls.len();
        let slot = self.slot_for(fragment.index, id.as_deref());
        let mut added = if self.calls.len() > calls { 64 } else { 0 };
        let call = &mut self.calls[slot].1;
        // id and name are assigned, never appended: llama.cpp repeats them in every fragment.
        if let Some(id) = id {
            call.id = id;
        }
        // An announced call may already be running (read-only calls start early): it is final,
        // so what the caller started is what the reply holds.
        let judged = self.announced.get(slot).is_some_and(|a| *a);
        let Some(function) = fragment.function.filter(|_| !judged) else {
            return added;
        };
        if let Some(name) = function.name.filter(|name| !name.is_empty()) {
            call.name = name;
        }
        if let Some(piece) = function.arguments {
            call.arguments.push_str(&piece);
            added += piece.len();
        }
        added
    }

    /// Which call a fragment belongs to; opens a new one when none fits.
    fn slot_for(&mut self, index: Option<u64>, id: Option<&str>) -> usize {
        let open = match index {
            Some(index) => self.calls.iter().rposition(|(at, _)| *at == index),
            None => id
                .and_then(|id| self.calls.iter().rposition(|(_, call)| call.id == id))
                .or(self.calls.len().checked_sub(1)),
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
        let next_index = self.calls.iter().map(|(at, _)| at + 1).max().unwrap_or(0);
        self.calls
            .push((index.unwrap_or(next_index), ToolCall::default()));
        self.calls.len() - 1
    }

    /// The calls in index order (stable: calls that share an index keep the order they came
    /// in), each with an id (`call_N` where the provider gave none).
    pub(super) fn in_index_order(mut self) -> Vec<ToolCall> {
        self.calls.sort_by_key(|(index, _)| *index);
        let calls = self.calls.into_iter().enumerate();
        calls
            .map(|(n, (_, mut call))| {
                if call.id.is_empty() {
                    call.id = format!("call_{n}");
                }
                call
            })
            .collect()
    }
}
