//! Compaction: shrink the history when the estimate says it grows too big, or the provider
//! says it did. Before every request the agent asks `tier_for(estimate, max_context)`; if a
//! tier comes back it calls `compact_and_tell`: three tiers, cheapest first: snip big tool
//! results, summarise old turns (a model call), collapse all but the last few messages; after a
//! "too long" answer, one tier `harder`. `compact` itself is pure (the summary comes through a
//! closure; when the model fails, `summary::without_model` makes one).

use crate::client::llm::Llm;
use crate::core::event::Event;
use crate::core::message::{Message, Role};
use crate::core::prompt::{self, SUMMARY_HEADER, estimate_messages};
use crate::core::summary;
use crate::extras::Extras;
use crate::tools::support::snip::snip;
use crate::tools::support::text::truncate_middle;
use std::sync::atomic::AtomicBool;

/// How many of the latest messages each tier keeps verbatim (moved to a valid boundary).
const SUMMARISE_KEEPS: usize = 6;
const COLLAPSE_KEEPS: usize = 2;

/// Where a compaction stops: well below the first tier, so the next one (each is a break of
/// the provider's prompt cache) waits until the history has grown again, not one round.
const GOAL_PERCENT: usize = 35;

/// Caps what a summary, however it was made, may take of the window.
const SUMMARY_MAX_CHARS: usize = 12_000;

/// How hard to compact, cheapest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    Snip,
    Summarise,
    Collapse,
}

/// ≥50% of the window: snip, ≥70%: summarise, ≥90%: collapse. A window of 0 means unknown.
pub(crate) fn tier_for(tokens: usize, max_context: usize) -> Option<Tier> {
    if max_context == 0 {
        return None;
    }
    match tokens.saturating_mul(100) / max_context {
        90.. => Some(Tier::Collapse),
        70.. => Some(Tier::Summarise),
        50.. => Some(Tier::Snip),
        _ => None,
    }
}

/// The tier to retry with after the provider still said the context was too long. Snipping
/// alone is not worth a retry, so the first step up is a summary.
pub(crate) fn harder(tier: Option<Tier>) -> Tier {
    match tier {
        None | Some(Tier::Snip) => Tier::Summarise,
        Some(Tier::Summarise | Tier::Collapse) => Tier::Collapse,
    }
}

/// Compact at `tier`, and a snip that leaves more than `GOAL_PERCENT` of the window goes on to
/// a summary; then tell the user when anything changed. The summary is a model call of
/// its own, counted in the cost like any other. (The caller has the log record the history.)
pub(crate) fn compact_and_tell(
    history: &mut Vec<Message>,
    llm: &Llm,
    extras: &mut Extras,
    cancel: &AtomicBool,
    tier: Tier,
    on_event: &mut dyn FnMut(Event),
) -> Report {
    let window = llm.context_limit();
    let goal = (window > 0).then(|| window * GOAL_PERCENT / 100);
    // `stream` without tools, collected, so retries and cost still apply.
    let mut summarise = |prompt: Vec<Message>| {
        let reply = llm.stream(&prompt, &[], extras, cancel, &mut |_| {});
        reply.map(|reply| reply.text).map_err(|e| e.to_string())
    };
    let mut report = compact(history, tier, &mut summarise);
    // Not on to Collapse: that cuts the results the model has not read yet.
    if tier == Tier::Snip && goal.is_some_and(|goal| report.after > goal) {
        let before = report.before;
        report = Report {
            before,
            ..compact(history, Tier::Summarise, &mut summarise)
        };
    }
    extras.history_compacted();
    if report.after < report.before {
        let (before, after) = (report.before, report.after);
        let mut notice = format!("context {:?}: {before} → {after} tokens", report.tier);
        if let SummarySource::Fallback(why) = &report.summary {
            notice.push_str(&format!(" (summary made without the model: {why})"));
        }
        on_event(Event::Notice(&notice));
    }
    report
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub before: usize,
    pub after: usize,
    /// The tier actually applied: `Snip` when there was nothing old enough to summarise.
    pub(crate) tier: Tier,
    pub(crate) summary: SummarySource,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SummarySource {
    None,
    Model,
    /// Why the model call failed; the summary was extracted by `summary::without_model`.
    Fallback(String),
}

/// Compact `history` at `tier` (and every cheaper tier). `summarise` gets the request
/// `summary::request` made and returns a non-streamed model call's text, or why not.
pub fn compact(
    history: &mut Vec<Message>,
    tier: Tier,
    summarise: &mut dyn FnMut(Vec<Message>) -> Result<String, String>,
) -> Report {
    let before = estimate_messages(history);
    // Results the model has not seen yet (after the last assistant message) are spared until
    // the last resort: otherwise a file it just read would reach it already cut.
    let last_assistant = history.iter().rposition(|m| m.role == Role::Assistant);
    let spared = last_assistant.filter(|_| tier < Tier::Collapse);
    let snip_end = spared.unwrap_or(history.len());
    snip_tool_results(&mut history[..snip_end]);
    let keeps = match tier {
        Tier::Snip => None,
        Tier::Summarise => Some(SUMMARISE_KEEPS),
        Tier::Collapse => Some(COLLAPSE_KEEPS),
    };
    let (applied, summary) = match keeps.and_then(|keeps| split_point(history, keeps)) {
        Some(split) => (tier, summarise_before(history, split, summarise)),
        None => (Tier::Snip, SummarySource::None),
    };
    Report {
        before,
        after: estimate_messages(history),
        tier: applied,
        summary,
    }
}

/// Cut big tool results to their first and last lines. A snipped result is left alone.
fn snip_tool_results(history: &mut [Message]) {
    for message in history.iter_mut().filter(|m| m.role == Role::Tool) {
        if let Some(text) = &message.content
            && let Some(snipped) = snip(text)
        {
            message.content = Some(snipped);
        }
    }
}

/// Where the kept part starts: about `keeps` messages from the end, at an index that is not a
/// `tool` message, so no result is separated from the assistant message that called it.
/// Earlier is preferred (more stays verbatim); later only if a tool run reaches back to the task.
/// `None` when at most the first user message is older: summarising the task alone only blurs it.
fn split_point(history: &[Message], keeps: usize) -> Option<usize> {
    let target = history.len().checked_sub(keeps).filter(|&t| t > 2)?;
    let boundary = |i: &usize| history.get(*i).is_none_or(|m| m.role != Role::Tool);
    let earlier = (3..=target).rev().find(boundary);
    earlier.or_else(|| (target..=history.len()).find(boundary))
}

/// Replace `history[1..split]` with one summary message; the model writes it if it can.
fn summarise_before(
    history: &mut Vec<Message>,
    split: usize,
    summarise: &mut dyn FnMut(Vec<Message>) -> Result<String, String>,
) -> SummarySource {
    let old = &history[1..split];
    let fallback = |why| {
        let text = summary::without_model(old);
        (text, SummarySource::Fallback(why))
    };
    let (text, source) = match summarise(summary::request(old)) {
        Ok(text) if !text.trim().is_empty() => (text, SummarySource::Model),
        Ok(_) => fallback("the model returned an empty summary".to_string()),
        Err(why) => fallback(why),
    };
    let text = truncate_middle(text.trim(), SUMMARY_MAX_CHARS);
    let task = prompt::task_lines(history);
    let body = format!("{SUMMARY_HEADER}\n{task}\n\n{text}");
    history.splice(1..split, [Message::user(&body)]);
    source
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::message::{ToolCall, repair_tool_pairs};
    use crate::core::summary::RENDER_TOTAL_CHARS;
    use crate::extras::calibration::Calibration;
    use crate::tools::support::snip::{SNIP_MARK, SNIP_MIN_CHARS};

    fn calls(ids: &[&str]) -> Message {
        let tool_calls = (ids.iter())
            .map(|id| ToolCall {
                id: id.to_string(),
                name: "read_file".into(),
                arguments: format!(r#"{{"path": "src/{id}.rs"}}"#),
            })
            .collect();
        Message {
            tool_calls,
            ..Message::assistant("")
        }
    }

    /// A tool result of `lines` lines of code-like text.
    fn big_output(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("    let value_{i} = compute(input, {i}); // line {i}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// An assistant message calling `n` tools and their (big) results.
    fn round(prefix: &str, n: usize) -> Vec<Message> {
        let ids: Vec<String> = (0..n).map(|i| format!("{prefix}_{i}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let mut messages = vec![calls(&refs)];
        messages.extend(
            ids.iter()
                .map(|id| Message::tool_result(id, &big_output(100))),
        );
        messages
    }

    fn valid(history: &[Message]) -> bool {
        repair_tool_pairs(&mut history.to_vec()) == 0
    }

    fn model_summary(_: Vec<Message>) -> Result<String, String> {
        Ok("Read the files; next: fix the bug.".to_string())
    }

    #[test]
    fn tiers_start_at_fifty_seventy_and_ninety_percent() {
        let cases = [
            (0, None),
            (499, None),
            (500, Some(Tier::Snip)),
            (699, Some(Tier::Snip)),
            (700, Some(Tier::Summarise)),
            (899, Some(Tier::Summarise)),
            (900, Some(Tier::Collapse)),
            (5_000, Some(Tier::Collapse)),
            (usize::MAX, Some(Tier::Collapse)),
        ];
        for (tokens, tier) in cases {
            assert_eq!(tier_for(tokens, 1_000), tier, "{tokens}");
        }
        assert_eq!(tier_for(5_000, 0), None);
        assert_eq!(harder(None), Tier::Summarise);
        assert_eq!(harder(Some(Tier::Snip)), Tier::Summarise);
        assert_eq!(harder(Some(Tier::Summarise)), Tier::Collapse);
        assert_eq!(harder(Some(Tier::Collapse)), Tier::Collapse);
    }

    #[test]
    fn snip_cuts_big_results_only_and_only_once() {
        let few_long_lines = "x".repeat(3_000) + "\n" + &"y".repeat(3_000);
        let many_short_lines = "ok\n".repeat(20);
        let mut history = vec![
            Message::system("sys"),
            Message::user(&big_output(100)),
            calls(&["a", "b", "c"]),
            Message::tool_result("a", &big_output(100)),
            Message::tool_result("b", &few_long_lines),
            Message::tool_result("c", &many_short_lines),
            Message::assistant("noted"),
            calls(&["d"]),
            Message::tool_result("d", &("z".repeat(1_000) + "\n").repeat(10)),
            Message::assistant("noted"),
        ];
        let original = history.clone();
        let report = compact(&mut history, Tier::Snip, &mut |_| panic!("no model call"));
        assert_eq!(
            (report.tier, report.summary),
            (Tier::Snip, SummarySource::None)
        );
        assert!(report.after < report.before);
        let snipped = history[3].content.clone().unwrap_or_default();
        assert_eq!(snipped.lines().count(), 7);
        assert!(snipped.starts_with("    let value_0 "));
        assert!(snipped.ends_with("// line 99"));
        assert!(snipped.contains("[... 94 lines ("), "{snipped}");
        assert_eq!(history[1], original[1]);
        assert_eq!(history[4..8], original[4..8]);
        let long_lines = history[8].content.clone().unwrap_or_default();
        assert!(long_lines.contains(SNIP_MARK) && long_lines.len() < SNIP_MIN_CHARS);
        let again = history.clone();
        compact(&mut history, Tier::Snip, &mut |_| panic!("no model call"));
        assert_eq!(history, again);
        // Results the model has not seen yet are cut only by a collapse.
        let mut unseen = vec![Message::system("sys"), Message::user("task")];
        unseen.extend(round("u", 1));
        let original = unseen.clone();
        compact(&mut unseen, Tier::Summarise, &mut model_summary);
        assert_eq!(unseen, original);
        compact(&mut unseen, Tier::Collapse, &mut model_summary);
        assert!(
            unseen[3]
                .content
                .as_deref()
                .is_some_and(|t| t.contains(SNIP_MARK))
        );
    }

    #[test]
    fn a_split_never_separates_results_from_their_call() {
        let mut history = vec![Message::system("sys"), Message::user("task")];
        history.extend(round("a", 3));
        history.push(Message::assistant("looked"));
        history.push(Message::user("go on"));
        history.extend(round("b", 4));
        // (history, keeps, expected split)
        let short = [Message::system("s"), Message::user("t"), calls(&["x"])];
        let long_run: Vec<Message> = [Message::system("s"), Message::user("t")]
            .into_iter()
            .chain(round("c", 8))
            .collect();
        let cases: Vec<(&[Message], usize, Option<usize>)> = vec![
            (&history, 1, Some(8)), // inside b's results: back to b's call
            (&history, 5, Some(8)), // on b's call
            (&history, 6, Some(7)), // on "go on"
            (&history, 7, Some(6)), // on "looked"
            (&history, 8, Some(6)), // back to a's call would leave only the task: forward
            (&history, 9, Some(6)), // the same
            (&history, 11, None),   // only the task would be old
            (&short, 1, None),
            (&long_run, 3, Some(11)), // one run after the task: all of it goes
        ];
        for (i, (history, keeps, expected)) in cases.into_iter().enumerate() {
            let split = split_point(history, keeps);
            assert_eq!(split, expected, "case {i}");
            if let Some(split) = split {
                assert!(history.get(split).is_none_or(|m| m.role != Role::Tool));
            }
        }
    }

    #[test]
    fn summarise_replaces_old_turns_and_keeps_recent_ones() {
        let mut history = vec![Message::system("sys"), Message::user("Fix the parser bug")];
        for i in 0..5 {
            history.extend(round(&format!("r{i}"), 2));
        }
        history.push(Message::user("also run the tests"));
        history.extend(round("last", 2));
        let recent = history[history.len() - 4..].to_vec();
        let mut prompts = Vec::new();
        let report = compact(&mut history, Tier::Summarise, &mut |prompt| {
            prompts.push(prompt);
            model_summary(Vec::new())
        });
        assert_eq!(
            (report.tier, report.summary),
            (Tier::Summarise, SummarySource::Model)
        );
        assert!(report.after < report.before / 3);
        assert_eq!(prompts.len(), 1);
        let request = prompts[0][1].content.clone().unwrap_or_default();
        assert_eq!(prompts[0][0].role, Role::System);
        assert!(request.contains("Original task: Fix the parser bug"));
        assert!(request.chars().count() < RENDER_TOTAL_CHARS);
        let summary = history[1].content.clone().unwrap_or_default();
        assert!(summary.starts_with(SUMMARY_HEADER));
        assert!(summary.contains("Original task: Fix the parser bug"));
        assert!(summary.contains("Latest user message: also run the tests"));
        assert!(summary.contains("next: fix the bug"));
        assert_eq!(history[0], Message::system("sys"));
        assert_eq!(history.len(), 2 + 7);
        assert_eq!(history[history.len() - 4..], recent[..]);
        assert!(valid(&history));
    }

    #[test]
    fn a_failed_model_call_falls_back_to_an_extracted_summary() {
        let mut history = vec![
            Message::system("sys"),
            Message::user("Make `cargo test` pass in crates/core"),
            calls(&["a"]),
            Message::tool_result(
                "a",
                "error[E0308]: mismatched types\n --> src/lib.rs:10:5\nok",
            ),
            Message::assistant("The type in config.toml is wrong."),
        ];
        history.extend(round("b", 3));
        let report = compact(&mut history, Tier::Collapse, &mut |_| Err("timeout".into()));
        assert_eq!(report.summary, SummarySource::Fallback("timeout".into()));
        let summary = history[1].content.clone().unwrap_or_default();
        for expected in [
            "Original task: Make `cargo test` pass in crates/core",
            "src/a.rs",
            "src/lib.rs",
            "config.toml",
            "error[E0308]: mismatched types",
        ] {
            assert!(
                summary.contains(expected),
                "{expected} missing from {summary}"
            );
        }
        assert!(!summary.contains("\nok"));
        assert!(valid(&history));
        let empty = compact(
            &mut history.clone(),
            Tier::Collapse,
            &mut |_| Ok(" ".into()),
        );
        assert!(matches!(empty.summary, SummarySource::Fallback(_)));
    }

    #[test]
    fn collapse_keeps_only_the_last_few_messages() {
        let mut history = vec![Message::system("sys"), Message::user("task")];
        for i in 0..4 {
            history.extend(round(&format!("r{i}"), 1));
        }
        history.push(Message::assistant("done"));
        let report = compact(&mut history, Tier::Collapse, &mut model_summary);
        assert_eq!(report.tier, Tier::Collapse);
        // The last two messages would split r3's call from its result: the call stays too.
        assert_eq!(history.len(), 2 + 3);
        assert_eq!(history[4], Message::assistant("done"));
        assert!(valid(&history));
    }

    #[test]
    fn a_short_history_is_only_snipped() {
        let mut history = vec![Message::system("sys"), Message::user("task")];
        history.extend(round("a", 1));
        let report = compact(&mut history, Tier::Collapse, &mut |_| {
            panic!("nothing to summarise")
        });
        assert_eq!(
            (report.tier, report.summary),
            (Tier::Snip, SummarySource::None)
        );
        assert_eq!(history.len(), 4);
    }

    #[test]
    fn repeated_compaction_keeps_the_task() {
        let mut history = vec![
            Message::system("sys"),
            Message::user("Port the CLI to lexopt"),
        ];
        for i in 0..6 {
            history.extend(round(&format!("r{i}"), 2));
            compact(&mut history, Tier::Collapse, &mut |_| Err("down".into()));
            if i == 2 {
                history.push(Message::user("now update the README"));
            }
        }
        let summary = history[1].content.clone().unwrap_or_default();
        assert!(
            summary.contains("Original task: Port the CLI to lexopt"),
            "{summary}"
        );
        assert!(summary.contains("Latest user message: now update the README"));
        assert_eq!(summary.matches(SUMMARY_HEADER).count(), 1);
        assert!(summary.chars().count() < 6_000);
    }

    #[test]
    fn two_hundred_rounds_stay_in_the_window_and_valid() {
        let max_context = 20_000;
        let mut history = vec![Message::system("sys"), Message::user("Refactor everything")];
        let mut estimator = Calibration::default();
        let mut tiers = Vec::new();
        for i in 0..200 {
            if i % 25 == 10 {
                history.push(Message::user(&format!("next step {i}")));
            }
            history.extend(round(&format!("r{i}"), 1 + i % 3));
            if let Some(tier) = tier_for(estimator.estimate(&history), max_context) {
                // Every other summary fails, so fallbacks pile up too.
                let mut summarise = |_: Vec<Message>| match i % 2 {
                    0 => model_summary(Vec::new()),
                    _ => Err("rate limited".to_string()),
                };
                tiers.push(compact(&mut history, tier, &mut summarise).tier);
                estimator.reset();
            }
            let tokens = estimator.estimate(&history);
            assert!(tokens < max_context, "round {i}: {tokens}");
            assert!(valid(&history), "round {i}");
            // The "request" goes out; the provider reports a slightly bigger real size.
            estimator.calibrate(history.len(), (tokens + tokens / 10) as u64);
        }
        assert!(tiers.len() > 10);
        assert!(
            tiers.contains(&Tier::Snip) && tiers.contains(&Tier::Summarise),
            "{tiers:?}"
        );
        let summary = history[1].content.clone().unwrap_or_default();
        assert!(summary.contains("Original task: Refactor everything"));
    }

    /// `compact_and_tell` at the snip tier with a window of `window` tokens. The model is
    /// never reached (a closed port, the run cancelled): a summary it asked for shows as one
    /// made without the model, a snip alone as none. Also the notices it gave.
    fn snip_and_tell(history: &mut Vec<Message>, window: usize) -> (Report, Vec<String>) {
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let base_url = format!("http://{}/v1", port.local_addr().expect("its address"));
        drop(port);
        let max_context = u32::try_from(window).expect("a small window");
        let llm = Llm::new(crate::core::config::Config {
            base_url,
            max_context,
            ..Default::default()
        });
        let (mut extras, cancel) = (Extras::default(), AtomicBool::new(true));
        let mut notices = Vec::new();
        let mut on_event = |event: Event| {
            if let Event::Notice(text) = event {
                notices.push(text.to_string());
            }
        };
        let report = compact_and_tell(
            history,
            &llm,
            &mut extras,
            &cancel,
            Tier::Snip,
            &mut on_event,
        );
        (report, notices)
    }

    /// What a snip alone leaves of `history`, in tokens.
    fn after_snip(history: &[Message]) -> usize {
        let no_model = &mut |_: Vec<Message>| -> Result<String, String> { panic!("no summary") };
        compact(&mut history.to_vec(), Tier::Snip, no_model).after
    }

    /// Compaction's goal: a snip that leaves the history under 35% of the window ends there
    /// (firing a summary on every snip passed the suite once); one that leaves more goes on
    /// to a summary (switching that off passed too).
    #[test]
    fn a_snip_goes_on_to_a_summary_only_when_it_frees_too_little() {
        let tail = [Message::assistant("reading on"), Message::user("go on")];
        let mut reads = vec![Message::system("sys"), Message::user("the task")];
        (["a", "b", "c"].iter()).for_each(|p| reads.extend(round(p, 3)));
        reads.extend(tail.clone());
        let (before, snipped) = (estimate_messages(&reads), after_snip(&reads));
        assert!(snipped * 4 < before, "{snipped} of {before}");
        // The goal (35%) just above what the snip leaves: enough was freed.
        let (report, notices) = snip_and_tell(&mut reads.clone(), snipped * 100 / 35 + 100);
        assert_eq!(
            (report.tier, report.summary),
            (Tier::Snip, SummarySource::None)
        );
        assert_eq!((report.before, report.after), (before, snipped));
        assert!(notices[0].starts_with("context Snip: "), "{notices:?}");
        // The goal just below: on to a summary (the model could not be asked).
        let (report, notices) = snip_and_tell(&mut reads, snipped * 100 / 35 - 100);
        assert_eq!(report.tier, Tier::Summarise);
        assert!(
            matches!(report.summary, SummarySource::Fallback(_)),
            "{report:?}"
        );
        assert!(report.after < snipped, "{report:?}");
        assert!(notices[0].starts_with("context Summarise: "), "{notices:?}");
        // Talk alone: a snip frees nothing, so a history at 60% of the window is summarised.
        let mut talk = vec![Message::system("sys"), Message::user("the task")];
        for n in 0..6 {
            talk.push(Message::assistant(&big_output(60)));
            talk.push(Message::user(&format!("and then {n}?")));
        }
        let before = estimate_messages(&talk);
        assert_eq!(after_snip(&talk), before);
        assert_eq!(tier_for(before, before * 100 / 60), Some(Tier::Snip));
        let (report, _) = snip_and_tell(&mut talk, before * 100 / 60);
        assert_eq!(report.tier, Tier::Summarise);
        assert!(
            matches!(report.summary, SummarySource::Fallback(_)),
            "{report:?}"
        );
        // Below half the window the loop does not compact at all.
        assert_eq!(tier_for(before, before * 100 / 49), None);
    }
}
