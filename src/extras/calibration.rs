//! The estimate, calibrated: the last prompt size the provider reported anchors the sum, so
//! only the messages added since are estimated (`core/prompt.rs` counts them).
//!
//! The agent reports each measured prompt (`Extras::prompt_measured`), asks for the size before
//! every request (`Extras::prompt_tokens`) and forgets the anchor after a compaction. When the
//! provider answers "too long" with its own count, that count anchors the estimate, and a window
//! smaller than the configured one is told (`Extras::overflowed`). It only counts.

use crate::core::event::Event;
use crate::core::message::Message;
use crate::core::prompt::estimate_messages;
use crate::tools::support::provider_errors::Overflow;

/// The estimate, anchored on the last prompt size the provider actually reported.
#[derive(Debug, Clone, Default)]
pub(crate) struct Calibration {
    /// `(history_len, prompt_tokens)` of the last request the provider measured.
    calibrated: Option<(usize, usize)>,
}

impl Calibration {
    /// The request that sent `history[..history_len]` cost `actual_prompt_tokens`.
    pub(crate) fn calibrate(&mut self, history_len: usize, actual_prompt_tokens: u64) {
        let tokens = usize::try_from(actual_prompt_tokens).unwrap_or(usize::MAX);
        self.calibrated = Some((history_len, tokens));
    }

    /// Forget the calibration: call after `compact`, which may shrink messages in place (a snip
    /// keeps the length, so `estimate` could not notice on its own).
    pub(crate) fn reset(&mut self) {
        self.calibrated = None;
    }

    pub(crate) fn estimate(&self, history: &[Message]) -> usize {
        match self.calibrated {
            Some((len, tokens)) if len <= history.len() => {
                tokens.saturating_add(estimate_messages(&history[len..]))
            }
            _ => estimate_messages(history),
        }
    }
}

/// The provider said the prompt does not fit, with what its message gave (`said`): its count
/// of the prompt anchors the estimate (ours said it fitted), then the estimate is returned.
/// `limit` is the window to compact for now, `configured` the one the user set.
pub(crate) fn overflowed(
    calibration: &mut Calibration,
    said: Overflow,
    (configured, limit): (usize, usize),
    history: &[Message],
    on_event: &mut dyn FnMut(Event),
) -> usize {
    if let Some(prompt) = said.prompt {
        calibration.calibrate(history.len(), prompt);
    }
    if said.limit.is_some() && limit < configured {
        let note = format!(
            "the provider allows about {limit} prompt tokens, not {configured}: compacting to fit"
        );
        on_event(Event::Notice(&note));
    }
    calibration.estimate(history)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::{Reply, ToolCall};

    #[test]
    fn the_estimator_builds_on_the_reported_size() {
        let mut history = vec![Message::system("sys"), Message::user("task")];
        let result = "    let value = compute(input); // a line of code\n".repeat(100);
        let call = ToolCall {
            id: "r".into(),
            name: "read_file".into(),
            arguments: r#"{"path": "src/r.rs"}"#.into(),
        };
        let reply = Reply {
            tool_calls: vec![call],
            ..Reply::default()
        };
        history.extend([
            Message::from_reply(&reply),
            Message::tool_result("r", &result),
        ]);
        let mut estimator = Calibration::default();
        assert_eq!(estimator.estimate(&history), estimate_messages(&history));
        estimator.calibrate(2, 5_000);
        assert_eq!(
            estimator.estimate(&history),
            5_000 + estimate_messages(&history[2..])
        );
        assert_eq!(estimator.estimate(&history[..2]), 5_000);
        // Shorter than what was measured: the history was compacted, start over.
        assert_eq!(
            estimator.estimate(&history[..1]),
            estimate_messages(&history[..1])
        );
        estimator.reset();
        assert_eq!(estimator.estimate(&history), estimate_messages(&history));
    }
}
