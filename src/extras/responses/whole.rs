//! Did a Responses stream arrive whole? `stream.rs` builds the reply from the deltas only; the
//! same stream says what the whole was, and this file holds the deltas to it: every event's
//! `sequence_number` never skips ahead of the last one's, each `response.output_text.done` (or
//! `.refusal.done`) repeats the part its deltas built, and `response.completed` lists the
//! output again (its text, its calls' arguments; `calls.rs` checks each call's own `.done`).
//! Anything that disagrees means an event was lost on the way (a gateway dropped it), and the
//! reply is `Broke::Lost`: retried like a malformed chunk, never acted on. A server that sends
//! no sequence numbers, or an empty `output`, is only checked where it says something.
//! Nothing here reads lines or keeps the reply.

use crate::core::event::{Broke, Error};
use crate::core::message::ToolCall;
use serde_json::Value;

/// What the checks need to remember between events.
#[derive(Default)]
pub(crate) struct Whole {
    /// The last `sequence_number` seen.
    last: Option<u64>,
    /// The text of the content part being streamed, as its deltas built it.
    part: String,
}

/// The reply lost a piece: what showed it.
pub(crate) fn lost(what: String) -> Error {
    Error::Stream(Broke::Lost(what))
}

impl Whole {
    /// Each numbered event follows the one before it: a jump forward means events were
    /// dropped. A number repeated or going back loses nothing, so an odd server's numbering
    /// (all zeros, one count per item) does not fail every reply.
    pub(crate) fn sequence(&mut self, number: Option<u64>) -> Result<(), Error> {
        let Some(number) = number else {
            return Ok(());
        };
        let last = self.last.replace(number);
        match last {
            Some(last) if number > last.saturating_add(1) => Err(lost(format!(
                "event {number} came after event {last} (sequence_number)"
            ))),
            _ => Ok(()),
        }
    }

    /// A text (or refusal) delta of the part being streamed.
    pub(crate) fn delta(&mut self, delta: &str) {
        self.part.push_str(delta);
    }

    /// The part is done and `whole` is what it says the part was. When no delta came, the
    /// whole text is the part (returned, to show and keep); else it must be what they built.
    pub(crate) fn part_done(&mut self, whole: Option<&str>) -> Result<Option<String>, Error> {
        let built = std::mem::take(&mut self.part);
        match whole {
            None => Ok(None),
            Some(whole) if built.is_empty() => {
                Ok(Some(whole.to_string()).filter(|w| !w.is_empty()))
            }
            Some(whole) if whole == built => Ok(None),
            Some(whole) => Err(lost(differs("the text", &built, whole))),
        }
    }
}

/// `response.completed` lists the `output` once more: its text must be the reply's, and its
/// calls the reply's, in order, with the same arguments (matched by place, not id: a gateway
/// that makes ids up anew there loses nothing). An empty or absent `output` (some servers
/// leave it out) says nothing.
pub(crate) fn output_agrees(output: &Value, text: &str, calls: &[ToolCall]) -> Result<(), Error> {
    let Some(output) = output.as_array().filter(|o| !o.is_empty()) else {
        return Ok(());
    };
    let mut whole = String::new();
    let mut listed = Vec::new();
    for item in output {
        match item["type"].as_str() {
            Some("message") => {
                let parts = item["content"].as_array().map_or(&[][..], Vec::as_slice);
                for part in parts {
                    let said = part["text"].as_str().or(part["refusal"].as_str());
                    whole.push_str(said.unwrap_or(""));
                }
            }
            Some("function_call") => listed.push(item["arguments"].as_str().unwrap_or("")),
            _ => {}
        }
    }
    if whole != text {
        return Err(lost(differs("the text", text, &whole)));
    }
    if listed.len() != calls.len() {
        let (streamed, listed) = (calls.len(), listed.len());
        let why = format!("{streamed} calls streamed, the response lists {listed}");
        return Err(lost(why));
    }
    for (call, arguments) in calls.iter().zip(listed) {
        if call.arguments != arguments {
            return Err(lost(differs(
                "a call's arguments",
                &call.arguments,
                arguments,
            )));
        }
    }
    Ok(())
}

/// "`what` differs from what the deltas built", with where, to recognise it by.
pub(crate) fn differs(what: &str, built: &str, whole: &str) -> String {
    let same = built
        .chars()
        .zip(whole.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let from: String = whole
        .chars()
        .skip(same.saturating_sub(10))
        .take(40)
        .collect();
    format!(
        "{what} the stream ends with is not what its deltas built ({} and {} characters; differs at {same}: {from:?})",
        built.chars().count(),
        whole.chars().count()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn is_lost(result: Result<impl std::fmt::Debug, Error>) -> String {
        match result {
            Err(Error::Stream(Broke::Lost(what))) => what,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn numbers_must_follow_each_other() {
        let mut whole = Whole::default();
        for n in [Some(0), Some(1), None, Some(2)] {
            whole.sequence(n).unwrap();
        }
        let said = is_lost(whole.sequence(Some(4)));
        assert!(said.contains("event 4 came after event 2"), "{said}");
        let mut odd = Whole::default();
        for n in [7, 7, 0, 1, 0] {
            odd.sequence(Some(n)).unwrap();
        }
        is_lost(odd.sequence(Some(2)));
    }

    #[test]
    fn a_done_part_must_be_what_its_deltas_built() {
        let mut whole = Whole::default();
        whole.delta("Hello");
        whole.delta(" world");
        assert_eq!(whole.part_done(Some("Hello world")).unwrap(), None);
        whole.delta("Hello");
        let said = is_lost(whole.part_done(Some("Hello world")));
        assert!(said.contains("5 and 11 characters"), "{said}");
        // No delta at all: the whole text is the part.
        assert_eq!(
            whole.part_done(Some("all")).unwrap().as_deref(),
            Some("all")
        );
        whole.delta("x");
        assert_eq!(whole.part_done(None).unwrap(), None);
    }

    #[test]
    fn the_completed_output_must_be_the_reply() {
        let call = ToolCall {
            id: "call_1".into(),
            name: "grep".into(),
            arguments: r#"{"pattern":"x"}"#.into(),
        };
        let message =
            json!({"type": "message", "content": [{"type": "output_text", "text": "Hi"}]});
        let function = |args: &str| json!({"type": "function_call", "call_id": "call_1", "name": "grep", "arguments": args});
        let response = |items: Vec<Value>| json!(items);
        let calls = [call];
        let good = response(vec![message.clone(), function(r#"{"pattern":"x"}"#)]);
        output_agrees(&good, "Hi", &calls).unwrap();
        output_agrees(&json!([]), "anything", &calls).unwrap();
        output_agrees(&Value::Null, "anything", &calls).unwrap();
        is_lost(output_agrees(&good, "H", &calls));
        is_lost(output_agrees(&good, "Hi", &[]));
        let other = response(vec![message.clone(), function(r#"{"pattern":"y"}"#)]);
        is_lost(output_agrees(&other, "Hi", &calls));
        let mut renamed = function(r#"{"pattern":"x"}"#);
        renamed["call_id"] = json!("call_made_up_anew");
        output_agrees(&response(vec![message.clone(), renamed]), "Hi", &calls).unwrap();
        let fewer = response(vec![message]);
        is_lost(output_agrees(&fewer, "Hi", &calls));
    }
}
