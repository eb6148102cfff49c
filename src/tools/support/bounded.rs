//! Reading on a helper thread that a tool can stop waiting for: what keeps `read_file`, `grep`
//! and `glob` bounded in time and answering the first Ctrl+C.
//!
//! A tool hands its reading (stat, open, read, directory walk) to `off_thread` and waits until
//! the job is done, the user presses Ctrl+C, or the time limit passes. A read can block for
//! ever: a file on a hung FUSE or NFS mount. (FIFOs and `/proc/kmsg` cannot block us: the tools open files with
//! `O_NONBLOCK`, and devices are refused before they are opened.)
//!
//! Why a detached thread, the one thread in corecoder that is neither scoped nor joined: no
//! one can end a thread blocked in `read()`. A signal at best makes the read restart, and NFS
//! and FUSE wait through everything but SIGKILL, which kills the whole process. A scoped or
//! joined helper would make the tool wait exactly as long as the read. So on Ctrl+C or at the
//! deadline the job is told to stop (`stop`, for jobs that loop, like grep's batches), gets a
//! short grace to hand back what it has, and then the tool answers without it; the helper stays
//! blocked in the kernel and ends on its own if the read ever returns (its result is dropped).
//! What bounds the cost: a helper holds a small stack and the files it has open, and at most
//! `MAX_RUNNING` helpers of one session may run at once; past that a read is refused, not
//! started. It does not stop a slow job that ignores `stop`, and it does not retry.

use crossbeam_channel::RecvTimeoutError;
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Helpers of one session running at once, blocked ones included. Parallel calls need at most
/// one per pool worker and sub-agent; more means reads that never came back.
const MAX_RUNNING: usize = 32;
/// How often the waiting tool looks at the Ctrl+C flag and the clock.
const POLL: Duration = Duration::from_millis(20);
/// After `stop` is set, how long a job may take to return what it has.
const GRACE: Duration = Duration::from_millis(500);
/// A helper's stack: the jobs keep their buffers on the heap.
const STACK_BYTES: usize = 256 * 1024;

/// Run `job(stop)` on a helper thread; its value, or why the tool stopped waiting for it. A
/// panic in the job is raised again here, on the tool's thread, where `tools::run` catches it.
/// `cancel` is the session's Ctrl+C flag; `running` counts its helpers (`ToolContext` holds both).
pub(crate) fn off_thread<T: Send + 'static>(
    cancel: &AtomicBool,
    running: &Arc<AtomicUsize>,
    limit: Duration,
    job: impl FnOnce(&AtomicBool) -> T + Send + 'static,
) -> Result<T, String> {
    // The waiting is compiled once for every job's type, not once per tool: the value travels
    // boxed (DESIGN.md, "Reads that may never return").
    let boxed: Job = Box::new(move |stop| Box::new(job(stop)));
    match run_boxed(cancel, running, limit, boxed)?.downcast::<T>() {
        Ok(value) => Ok(*value),
        Err(_) => Err("the read returned a value of another type".into()),
    }
}

/// A job whose value is boxed, so `run_boxed` is compiled once.
type Job = Box<dyn FnOnce(&AtomicBool) -> Box<dyn Any + Send> + Send>;

fn run_boxed(
    cancel: &AtomicBool,
    running: &Arc<AtomicUsize>,
    limit: Duration,
    job: Job,
) -> Result<Box<dyn Any + Send>, String> {
    if running.fetch_add(1, Ordering::SeqCst) >= MAX_RUNNING {
        running.fetch_sub(1, Ordering::SeqCst);
        return Err(format!(
            "{MAX_RUNNING} earlier reads have not returned (a hung mount?); not starting another"
        ));
    }
    // Already set when the call starts after a Ctrl+C: the job stops at its first look.
    let stop = Arc::new(AtomicBool::new(cancel.load(Ordering::Relaxed)));
    let (done, result) = crossbeam_channel::bounded(1);
    let helper = {
        let (stop, running) = (stop.clone(), running.clone());
        move || {
            let value = catch_unwind(AssertUnwindSafe(|| job(&stop)));
            // Counted out before the value is sent, so a tool that has the value sees the count
            // without this helper. The send never waits (room for one); if the tool stopped
            // listening, the value is dropped here.
            running.fetch_sub(1, Ordering::SeqCst);
            let _ = done.send(value);
        }
    };
    let thread = std::thread::Builder::new()
        .name("tool-read".into())
        .stack_size(STACK_BYTES);
    if let Err(e) = thread.spawn(helper) {
        running.fetch_sub(1, Ordering::SeqCst);
        return Err(format!("cannot start a reading thread: {e}"));
    }
    let started = Instant::now();
    let mut stopped: Option<(Instant, String)> = None;
    loop {
        match result.recv_timeout(POLL) {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(panic)) => resume_unwind(panic),
            Err(RecvTimeoutError::Disconnected) => {
                return Err("the read ended without a result".into());
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        if let Some((at, why)) = &stopped {
            if at.elapsed() >= GRACE {
                return Err(why.clone());
            }
            continue;
        }
        let why = if cancel.load(Ordering::Relaxed) {
            "interrupted (Ctrl+C) while a read had not returned".to_string()
        } else if started.elapsed() >= limit {
            let secs = limit.as_secs();
            format!("a read had not returned after {secs} s (a hung network or FUSE mount?)")
        } else {
            continue;
        };
        stop.store(true, Ordering::Relaxed);
        stopped = Some((Instant::now(), why));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session's Ctrl+C flag and helper count, as `ToolContext` holds them.
    struct Session {
        cancel: AtomicBool,
        reads_running: Arc<AtomicUsize>,
    }

    fn session() -> Session {
        Session {
            cancel: AtomicBool::new(false),
            reads_running: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn off_thread_in<T: Send + 'static>(
        ctx: &Session,
        limit: Duration,
        job: impl FnOnce(&AtomicBool) -> T + Send + 'static,
    ) -> Result<T, String> {
        off_thread(&ctx.cancel, &ctx.reads_running, limit, job)
    }

    #[test]
    fn a_job_that_returns_gives_its_value() {
        let ctx = session();
        let value = off_thread_in(&ctx, Duration::from_secs(5), |_| 42);
        assert_eq!(value, Ok(42));
        assert_eq!(ctx.reads_running.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_job_that_never_returns_is_left_at_the_deadline() {
        let ctx = session();
        let (release, blocked) = crossbeam_channel::bounded::<()>(0);
        let started = Instant::now();
        let job = move |_: &AtomicBool| blocked.recv().is_ok();
        let err = off_thread_in(&ctx, Duration::from_millis(100), job).unwrap_err();
        assert!(err.contains("had not returned after 0 s"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(3));
        assert_eq!(ctx.reads_running.load(Ordering::SeqCst), 1);
        // When the read returns at last, the helper ends and is counted out.
        drop(release);
        let deadline = Instant::now() + Duration::from_secs(5);
        while ctx.reads_running.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        assert_eq!(ctx.reads_running.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn ctrl_c_stops_a_job_that_polls_and_keeps_what_it_found() {
        let ctx = session();
        ctx.cancel.store(true, Ordering::Relaxed);
        let job = |stop: &AtomicBool| {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
            "partial"
        };
        assert_eq!(
            off_thread_in(&ctx, Duration::from_secs(60), job),
            Ok("partial")
        );
    }

    #[test]
    fn too_many_blocked_reads_refuse_the_next() {
        let ctx = session();
        ctx.reads_running.store(MAX_RUNNING, Ordering::SeqCst);
        let err = off_thread_in(&ctx, Duration::from_secs(5), |_| ()).unwrap_err();
        assert!(err.contains("not starting another"), "{err}");
        assert_eq!(ctx.reads_running.load(Ordering::SeqCst), MAX_RUNNING);
    }
}
