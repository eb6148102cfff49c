//! Read-only calls started while the reply is still streaming.
//!
//! This row used to time three `read_file` calls on FIFOs that answered 1 s after the tool
//! opened them. `read_file` no longer waits on a FIFO (a hostile path must never hang a tool),
//! so no read-only tool here takes a known second, and the row is reported as not measured.
//! `tests/it/early.rs` times the early start itself (the read happens ≥ 1.5 s before the
//! stream ends); BENCHMARKS.md keeps the last figure and says when it was taken.

use crate::Row;

pub fn early_start() -> Row {
    let mut row = Row::new(
        "3 × 1 s read-only calls streamed over 2 s (whole run)",
        "—".to_string(),
        "≈ max(stream, tool), not the sum",
    );
    row.not_measured();
    row
}
