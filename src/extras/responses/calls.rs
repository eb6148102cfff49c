//! The `function_call` items of one Responses stream put together (`stream.rs` hands each
//! event over): opened by `response.output_item.added`, grown by
//! `response.function_call_arguments.delta`, closed by `function_call_arguments.done` or the
//! item's `output_item.done`, whichever comes first. Events name a call by its item id (or
//! output index); the call keeps its `call_id`, which its result must name. Closing announces
//! it ready, once; from then on it may be running, so nothing changes it. Each `.done` must
//! repeat what the deltas built (a call's arguments that differ lost a delta on the way:
//! `Broke::Lost`, see `whole.rs`); with no delta at all, the `.done` arguments are the call's.
//! Nothing here bounds sizes (`stream.rs` counts what each step added) or parses arguments
//! beyond "JSON or not".

use crate::core::event::{Error, Event};
use crate::core::message::ToolCall;
use crate::extras::responses::whole::{differs, lost};
use serde::de::IgnoredAny;
use serde_json::Value;
use std::collections::HashMap;

/// Each event finds its call by a lookup, not a scan of the calls so far: 80,000 calls in one
/// reply would cost billions of comparisons.
#[derive(Default)]
pub(crate) struct Calls {
    calls: Vec<Call>,
    /// The first call with each item id, and with each output index.
    by_item: HashMap<String, usize>,
    by_output: HashMap<u64, usize>,
}

/// A `function_call` item while it streams.
/// (Its item id and output index are the keys that find it.)
struct Call {
    call: ToolCall,
    /// Announced with `Event::CallReady`: it may be running, so nothing changes it any more.
    ready: bool,
    /// A delta came: the arguments are what the deltas built, and a `.done` must repeat them.
    streamed: bool,
}

impl Calls {
    /// A `function_call` item began (`done: false`) or is done. Returns whether it was new.
    pub(crate) fn item(
        &mut self,
        item: &Value,
        output_index: Option<u64>,
        done: bool,
        on_delta: &mut dyn FnMut(Event),
    ) -> Result<bool, Error> {
        let text = |key: &str| item[key].as_str().unwrap_or("").to_string();
        let item_id = text("id");
        let found = self.call_at(Some(&item_id), output_index);
        let at = found.unwrap_or_else(|| {
            // Usually at `output_item.added`; a server may send only the finished item.
            let (call, ready, streamed) = (ToolCall::default(), false, false);
            let at = self.calls.len();
            self.by_item.entry(item_id.clone()).or_insert(at);
            if let Some(index) = output_index {
                self.by_output.entry(index).or_insert(at);
            }
            self.calls.push(Call {
                call,
                ready,
                streamed,
            });
            self.calls.len() - 1
        });
        let Call { call, ready, .. } = &mut self.calls[at];
        if !*ready {
            // The `call_id` is what the result answers; the item id only finds the deltas.
            let (call_id, name) = (text("call_id"), text("name"));
            match call_id.is_empty() {
                false => call.id = call_id,
                true if call.id.is_empty() => call.id = item_id,
                true => {}
            }
            if !name.is_empty() {
                call.name = name;
            }
            if !done {
                call.arguments = text("arguments");
            }
        }
        if done {
            self.close(at, item["arguments"].as_str(), on_delta)?;
        }
        Ok(found.is_none())
    }

    /// A piece of the named call's arguments (dropped once the call is announced).
    pub(crate) fn arguments_delta(&mut self, item_id: Option<&str>, at: Option<u64>, delta: &str) {
        let at = self.call_at(item_id, at);
        if let Some(call) = at.map(|at| &mut self.calls[at]).filter(|c| !c.ready) {
            call.call.arguments.push_str(delta);
            call.streamed = true;
        }
    }

    /// `function_call_arguments.done`: the whole arguments of the named call.
    pub(crate) fn arguments_done(
        &mut self,
        (item_id, at): (Option<&str>, Option<u64>),
        arguments: Option<&str>,
        on_delta: &mut dyn FnMut(Event),
    ) -> Result<(), Error> {
        match self.call_at(item_id, at) {
            Some(at) => self.close(at, arguments, on_delta),
            None => Ok(()),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The calls in the order they began, each with an id (`call_N` where none was given).
    pub(crate) fn into_calls(self) -> Vec<ToolCall> {
        let calls = self.calls.into_iter().enumerate();
        let with_id = |(n, Call { mut call, .. }): (usize, Call)| {
            if call.id.is_empty() {
                call.id = format!("call_{n}");
            }
            call
        };
        calls.map(with_id).collect()
    }

    /// Which call an event names: by item id, else by output index.
    fn call_at(&self, item_id: Option<&str>, output_index: Option<u64>) -> Option<usize> {
        let by_id = item_id.filter(|id| !id.is_empty());
        let by_id = by_id.and_then(|id| self.by_item.get(id).copied());
        by_id.or_else(|| output_index.and_then(|index| self.by_output.get(&index).copied()))
    }

    /// A call's arguments are final: announce it, once, if they are JSON (a call with garbled
    /// arguments is left for the batch to refuse). Whole arguments unlike the ones the deltas
    /// built, or unlike the ones announced, mean a delta was lost: the reply is broken.
    fn close(
        &mut self,
        at: usize,
        arguments: Option<&str>,
        on_delta: &mut dyn FnMut(Event),
    ) -> Result<(), Error> {
        let call = &mut self.calls[at];
        let built = &call.call.arguments;
        let checked = arguments.filter(|_| call.ready || call.streamed);
        if let Some(whole) = checked.filter(|whole| whole != built) {
            return Err(lost(differs("a call's arguments", built, whole)));
        }
        if call.ready {
            return Ok(());
        }
        if let Some(arguments) = arguments {
            call.call.arguments = arguments.to_string();
        }
        call.ready = true;
        if serde_json::from_str::<IgnoredAny>(&call.call.arguments).is_ok() {
            on_delta(Event::CallReady(&call.call));
        }
        Ok(())
    }
}
