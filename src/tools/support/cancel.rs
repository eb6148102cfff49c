//! The two ways Ctrl+C reaches a request: shutting its `ureq` agent down, which wakes a read
//! blocked on a silent server, and a sleep (between retries) that gives way. The LLM client
//! (`client/llm.rs`) uses both; nothing here decides when to retry.

use crossbeam_channel::{Receiver, RecvTimeoutError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Ctrl+C came before the wait was over.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Cancelled;

/// Wakes a request blocked on a silent server: shutting the agent down fails its reads.
pub(crate) fn shut_down_on_cancel(
    http: &ureq::Agent,
    cancel: &AtomicBool,
    finished: &Receiver<()>,
) {
    let tick = Duration::from_millis(50);
    while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(tick) {
        if cancel.load(Ordering::Relaxed) {
            http.clone().shutdown();
            return;
        }
    }
}

pub(crate) fn sleep_unless_cancelled(wait: Duration, cancel: &AtomicBool) -> Result<(), Cancelled> {
    let step = Duration::from_millis(50);
    let mut waited = Duration::ZERO;
    while waited < wait {
        if cancel.load(Ordering::Relaxed) {
            return Err(Cancelled);
        }
        std::thread::sleep(step.min(wait - waited));
        waited += step;
    }
    Ok(())
}
