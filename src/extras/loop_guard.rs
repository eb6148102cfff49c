//! The loop guard: a model that keeps making the same call is told so, then stopped. The loop
//! asks it about every call of a reply, in order, before the batch runs (and a copy of it while
//! the reply streams, so a call it will refuse is not started early). The third identical call
//! in a row (same tool, same arguments) is not run and the model reads why; the fifth ends the
//! run. It only counts; it runs nothing and changes no history.
//! Reached through `Extras::repeated` (and by `extras/early.rs`, which judges calls ahead).

use crate::core::message::ToolCall;
use serde_json::Value;

const WARN_AT: u32 = 3;
const STOP_AT: u32 = 5;

#[derive(Debug, Default, Clone)]
pub struct LoopGuard {
    /// The last call seen (tool name, arguments in canonical form) and how often in a row.
    last: Option<(String, String)>,
    streak: u32,
}

/// The guard's word on one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repeat {
    /// Not a repeat worth stopping: the call goes on to consent.
    Fine,
    /// Not run; the text is what the model reads instead.
    Refuse(String),
    /// The run ends here.
    Stop(String),
}

impl Repeat {
    /// As the batch reads it: `Ok(None)` goes on, `Ok(Some)` is refused with this text, `Err`
    /// stops the run.
    pub fn ruling(self) -> Result<Option<String>, String> {
        match self {
            Repeat::Fine => Ok(None),
            Repeat::Refuse(text) => Ok(Some(text)),
            Repeat::Stop(why) => Err(why),
        }
    }
}

impl LoopGuard {
    pub fn judge(&mut self, call: &ToolCall) -> Repeat {
        let (name, arguments) = (&call.name, &call.arguments);
        // Parsed and printed again, so `{"a":1, "b":2}` and `{"b":2,"a":1}` count as one call.
        let arguments = match serde_json::from_str::<Value>(arguments) {
            Ok(value) => value.to_string(),
            Err(_) => arguments.to_string(),
        };
        let this = (name.to_string(), arguments);
        match self.last.as_ref() == Some(&this) {
            true => self.streak += 1,
            false => (self.last, self.streak) = (Some(this), 1),
        }
        match self.streak {
            n if n >= STOP_AT => Repeat::Stop(format!(
                "the model called {name} with the same arguments {n} times in a row"
            )),
            n if n >= WARN_AT => Repeat::Refuse(format!(
                "Not run: this is the same {name} call, with the same arguments, {n} times in a \
                 row, and its result will not change. Use what you already have, or try a \
                 different approach. (At {STOP_AT} in a row the run is stopped.)"
            )),
            _ => Repeat::Fine,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeat(guard: &mut LoopGuard, name: &str, arguments: &str) -> &'static str {
        let call = ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: arguments.into(),
        };
        match guard.judge(&call) {
            Repeat::Fine => "run",
            Repeat::Refuse(_) => "refuse",
            Repeat::Stop(_) => "stop",
        }
    }

    #[test]
    fn third_is_refused_fifth_stops_and_a_change_resets() {
        let mut guard = LoopGuard::default();
        let seen: Vec<&str> = (0..5)
            .map(|_| repeat(&mut guard, "grep", r#"{"pattern":"x"}"#))
            .collect();
        assert_eq!(seen, ["run", "run", "refuse", "refuse", "stop"]);
        let mut guard = LoopGuard::default();
        repeat(&mut guard, "grep", r#"{"a":1,"b":2}"#);
        assert_eq!(repeat(&mut guard, "grep", r#"{"b": 2, "a": 1}"#), "run");
        assert_eq!(repeat(&mut guard, "grep", r#"{"b":2,"a":1}"#), "refuse");
        assert_eq!(repeat(&mut guard, "glob", r#"{"b":2,"a":1}"#), "run");
        assert_eq!(repeat(&mut guard, "grep", r#"{"b":2,"a":1}"#), "run");
    }
}
