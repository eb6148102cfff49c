//! Where a request the replay sends first differs from the recorded one, for `--replay`.
//!
//! `first_difference` compares two chat-completions bodies: the messages in order, each field
//! by name, then the other fields, and returns the place with a short excerpt of each side.
//! Two things are not compared: the recorded working directory stands for the current one
//! (`Rebase`), and the system prompt's `Date:` and `OS:` lines say when and where, not what
//! happened. Pure: `trace/replay.rs` calls it for every request.

use serde_json::{Map, Value};

/// How much of each side a divergence shows, in characters.
const EXCERPT_CHARS: usize = 72;
/// Where a request first differs from the recorded one, with a short excerpt of each side.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Divergence {
    /// `message 3 (tool), field content`, or `field max_tokens`.
    pub(crate) place: String,
    pub(crate) recorded: String,
    pub(crate) sent: String,
}

/// The first difference between the recorded request and the one sent now, after the
/// recorded working directory is read as the current one and the system prompt's clock and OS
/// lines are set aside: the messages in order (each field by name), then the other fields.
#[cfg(test)]
pub(crate) fn first_difference(recorded: &Value, sent: &Value, cwd: &Rebase) -> Option<Divergence> {
    let here = Rebase::default();
    first_difference_of(&comparable(recorded, cwd), &comparable(sent, &here))
}

/// A request as it is compared: the recorded working directory read as the current one, the
/// system prompt's clock and OS lines set aside. Done once per recorded round.
pub(crate) fn comparable(body: &Value, cwd: &Rebase) -> Value {
    normalised(&cwd.apply(body))
}

/// `first_difference` of two requests already made `comparable`.
pub(crate) fn first_difference_of(recorded: &Value, sent: &Value) -> Option<Divergence> {
    let (old, new) = (messages(recorded), messages(sent));
    for at in 0..old.len().max(new.len()) {
        let place = |message: &Value, what: &str| {
            let role = message["role"].as_str().unwrap_or("?");
            format!("message {at} ({role}){what}")
        };
        match (old.get(at), new.get(at)) {
            (Some(a), Some(b)) => {
                if let Some(field) = differing_field(a, b) {
                    let place = place(a, &format!(", field {field}"));
                    return Some(excerpts(place, &a[&field], &b[&field]));
                }
            }
            (Some(a), None) => {
                let place = place(a, ": only in the trace");
                return Some(Divergence::new(
                    place,
                    excerpt(&a.to_string(), 0),
                    "(none)".into(),
                ));
            }
            (None, Some(b)) => {
                let place = place(b, ": only in this run");
                return Some(Divergence::new(
                    place,
                    "(none)".into(),
                    excerpt(&b.to_string(), 0),
                ));
            }
            (None, None) => {}
        }
    }
    let field = differing_field(&without_messages(recorded), &without_messages(sent))?;
    Some(excerpts(
        format!("field {field}"),
        &recorded[&field],
        &sent[&field],
    ))
}

pub(super) fn messages(body: &Value) -> &[Value] {
    body["messages"].as_array().map_or(&[], Vec::as_slice)
}

impl Divergence {
    pub fn new(place: String, recorded: String, sent: String) -> Divergence {
        Divergence {
            place,
            recorded,
            sent,
        }
    }
}

/// The first key, in the recorded object's order, whose values differ (absent is `null`).
fn differing_field(a: &Value, b: &Value) -> Option<String> {
    let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>());
    let mut names = keys(a).unwrap_or_default();
    names.extend(keys(b).unwrap_or_default());
    names.into_iter().find(|name| a[name] != b[name])
}

fn without_messages(body: &Value) -> Value {
    let mut body = body.clone();
    if let Some(object) = body.as_object_mut() {
        object.remove("messages");
    }
    body
}

/// Both sides from a little before the first character where they differ.
fn excerpts(place: String, recorded: &Value, sent: &Value) -> Divergence {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let (a, b) = (text(recorded), text(sent));
    let same = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let from = same.saturating_sub(EXCERPT_CHARS / 3);
    Divergence::new(place, excerpt(&a, from), excerpt(&b, from))
}

/// `EXCERPT_CHARS` characters from `from`, as a JSON string (newlines shown as `\n`).
pub(super) fn excerpt(text: &str, from: usize) -> String {
    let piece: String = text.chars().skip(from).take(EXCERPT_CHARS).collect();
    let more = text.chars().count() > from + EXCERPT_CHARS;
    let quoted = Value::String(piece).to_string();
    format!(
        "{}{quoted}{}",
        if from > 0 { "…" } else { "" },
        if more { "…" } else { "" }
    )
}

/// The system prompt's `Date:` and `OS:` lines, the same for every replay.
fn normalised(body: &Value) -> Value {
    let mut body = body.clone();
    let messages = body["messages"].as_array_mut().into_iter().flatten();
    for message in messages.filter(|m| m["role"] == "system") {
        if let Some(content) = message["content"].as_str() {
            let lines = content.lines().map(|line| match line.split_once(": ") {
                Some(("Date" | "OS", _)) => line.split(':').next().unwrap_or(""),
                _ => line,
            });
            message["content"] = Value::String(lines.collect::<Vec<_>>().join("\n"));
        }
    }
    body
}

/// The recorded working directory, read as the current one in every string of a request.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rebase {
    pub(crate) from: Option<String>,
    pub(crate) to: String,
}

impl Rebase {
    fn apply(&self, value: &Value) -> Value {
        let Some(from) = self.from.as_deref().filter(|from| *from != self.to) else {
            return value.clone();
        };
        match value {
            Value::String(s) => Value::String(s.replace(from, &self.to)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.apply(v)).collect()),
            Value::Object(fields) => {
                let fields = fields.iter().map(|(k, v)| (k.clone(), self.apply(v)));
                Value::Object(fields.collect::<Map<_, _>>())
            }
            other => other.clone(),
        }
    }
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (place, recorded, sent) = (&self.place, &self.recorded, &self.sent);
        write!(f, "{place}\n  trace: {recorded}\n  now:   {sent}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(messages: Value) -> Value {
        json!({"model": "m", "messages": messages, "max_tokens": 10})
    }

    #[test]
    fn the_first_difference_names_message_field_and_both_sides() {
        let system = "Rules\nWorking directory: /old/p\nOS: macos\nDate: 2020-01-01";
        let old = request(json!([{"role": "system", "content": system},
            {"role": "tool", "tool_call_id": "c", "content": "/old/p/a.txt: 1 2 3"}]));
        let now = "Rules\nWorking directory: /new\nOS: linux\nDate: 2026-12-01";
        let mut new = request(json!([{"role": "system", "content": now},
            {"role": "tool", "tool_call_id": "c", "content": "/new/a.txt: 1 2 3"}]));
        let cwd = Rebase {
            from: Some("/old/p".into()),
            to: "/new".into(),
        };
        assert_eq!(
            first_difference(&old, &new, &cwd),
            None,
            "cwd, clock and OS set aside"
        );
        new["messages"][1]["content"] = json!("/new/a.txt: 1 2 4");
        let found = first_difference(&old, &new, &cwd).unwrap();
        assert_eq!(found.place, "message 1 (tool), field content");
        assert_eq!(
            (found.recorded.as_str(), found.sent.as_str()),
            ("\"/new/a.txt: 1 2 3\"", "\"/new/a.txt: 1 2 4\"")
        );
        new["messages"].as_array_mut().unwrap().pop();
        let found = first_difference(&old, &new, &cwd).unwrap();
        assert_eq!(found.place, "message 1 (tool): only in the trace");
        let (mut old, mut new) = (request(json!([])), request(json!([])));
        (old["max_tokens"], new["max_tokens"]) = (json!(10), json!(20));
        let found = first_difference(&old, &new, &Rebase::default()).unwrap();
        assert_eq!(
            (found.place.as_str(), found.sent.as_str()),
            ("field max_tokens", "\"20\"")
        );
    }

    #[test]
    fn a_long_difference_is_shown_from_a_little_before_it() {
        let (a, b) = ("x".repeat(200) + "old tail", "x".repeat(200) + "new tail");
        let found = excerpts("p".into(), &json!(a), &json!(b));
        assert!(found.recorded.starts_with("…\"xxx") && found.recorded.ends_with("old tail\""));
        assert!(found.sent.contains("new tail"), "{found:?}");
    }
}
