//! Snipping a long tool result to its first and last lines, the cheapest tier of compaction
//! (`core/context.rs` applies it to the results the model has already read). Pure text.

/// Tool results are snipped when longer than both of these.
pub(crate) const SNIP_MIN_CHARS: usize = 1_500;
const SNIP_MIN_LINES: usize = 6;
const SNIP_KEEP_LINES: usize = 3;
const SNIP_LINE_CHARS: usize = 200;
pub(crate) const SNIP_MARK: &str = " snipped ...]";

/// The result cut to its first and last lines with a note of what went, or `None` when it is
/// short enough or already snipped.
pub(crate) fn snip(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let total = text.chars().count();
    if total <= SNIP_MIN_CHARS || lines.len() <= SNIP_MIN_LINES || text.contains(SNIP_MARK) {
        return None;
    }
    // Long kept lines are cut too, so a snipped result stays under SNIP_MIN_CHARS.
    let keep = |part: &[&str]| -> String {
        let cut: Vec<String> = part
            .iter()
            .map(|l| format!("{l:.SNIP_LINE_CHARS$}"))
            .collect();
        cut.join("\n")
    };
    let head = keep(&lines[..SNIP_KEEP_LINES]);
    let tail = keep(&lines[lines.len() - SNIP_KEEP_LINES..]);
    let removed_lines = lines.len() - 2 * SNIP_KEEP_LINES;
    let removed_chars = total.saturating_sub(head.chars().count() + tail.chars().count());
    let note = format!("[... {removed_lines} lines ({removed_chars} chars){SNIP_MARK}");
    Some(format!("{head}\n{note}\n{tail}"))
}
