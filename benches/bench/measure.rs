//! Timing and memory helpers: medians over repeated runs, and the peak RSS of a process.
//!
//! Every measurement runs once to warm caches, then `runs` times; the median is what is
//! reported. Peak memory is the kernel's own high-water mark (`wait4`), never a sum over a
//! process tree (see `peak_rss`).
//! Nothing here knows what is being measured.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Run `work` once to warm up, then `runs` times; the median duration.
pub fn median_of(runs: usize, mut work: impl FnMut() -> Duration) -> Duration {
    work();
    let mut times: Vec<Duration> = (0..runs).map(|_| work()).collect();
    times.sort();
    times[times.len() / 2]
}

/// Time a closure.
pub fn timed(work: impl FnOnce()) -> Duration {
    let start = Instant::now();
    work();
    start.elapsed()
}

/// The CPU time this thread spent in `work`: for single-threaded library code on a machine
/// other jobs share, where wall time would mostly measure the neighbours.
pub fn thread_cpu_timed(work: impl FnOnce()) -> Duration {
    let now = || {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a live, writable timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    };
    let start = now();
    work();
    now().saturating_sub(start)
}

/// The wall time of one run of `command` (output discarded), and whether it exited 0.
pub fn run_quiet(command: &mut Command) -> (Duration, bool) {
    let start = Instant::now();
    let status = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    (start.elapsed(), status.is_ok_and(|s| s.success()))
}

/// Run `command` to the end; its peak resident memory, in bytes: the kernel's high-water mark
/// from `wait4` (`ru_maxrss`), the largest of the process's own and each waited-for
/// descendant's own. Never a sum over processes alive at once: a short-lived fork (CoreCoder
/// runs `uname`) maps its parent's pages, and summing counted them twice (136 MB read against
/// 70 MB). The same measure for every program compared.
pub fn peak_rss(command: &mut Command) -> Option<u64> {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let pid = child.id() as i32;
    let mut status = 0;
    // SAFETY: all-zero is a valid rusage (plain integers), filled in by the kernel below.
    let mut rusage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child; status and rusage point at live locals.
    let done = unsafe { libc::wait4(pid, &mut status, 0, &mut rusage) };
    if done != pid {
        return None;
    }
    // ru_maxrss is in KiB on Linux.
    Some(u64::try_from(rusage.ru_maxrss).unwrap_or(0) * 1024)
}

pub fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    match ms {
        x if x < 10.0 => format!("{x:.2} ms"),
        x if x < 10_000.0 => format!("{x:.0} ms"),
        x => format!("{:.1} s", x / 1000.0),
    }
}

pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

pub fn ratio(slow: Duration, fast: Duration) -> String {
    format!("{:.1}×", slow.as_secs_f64() / fast.as_secs_f64().max(1e-9))
}
