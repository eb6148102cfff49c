//! Timing and memory helpers: medians over repeated runs, and the peak RSS of a process tree.
//!
//! Every measurement runs once to warm caches, then `runs` times; the median is what is
//! reported. Peak memory samples the child and its descendants from `/proc` every 2 ms and
//! also asks the kernel (`wait4`) for the child's own high-water mark; the larger one wins.
//! Nothing here knows what is being measured.

use std::fs;
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

/// Run `command` to the end; the peak resident memory of its process tree, in bytes.
pub fn peak_rss(command: &mut Command) -> Option<u64> {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let pid = child.id() as i32;
    let mut sampled = 0;
    let mut rusage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        let mut status = 0;
        // SAFETY: `pid` is our own child; status and rusage point at live locals.
        let done = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut rusage) };
        if done == pid || done < 0 {
            break;
        }
        sampled = sampled.max(tree_rss(pid as u32));
        std::thread::sleep(Duration::from_millis(2));
    }
    // ru_maxrss is in KiB on Linux.
    let own_peak = u64::try_from(rusage.ru_maxrss).unwrap_or(0) * 1024;
    Some(sampled.max(own_peak))
}

/// The summed VmRSS of `pid` and all its descendants right now.
fn tree_rss(pid: u32) -> u64 {
    let mut total = 0;
    let mut pending = vec![pid];
    while let Some(pid) = pending.pop() {
        let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        total += status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
            * 1024;
        let tasks = fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten();
        for task in tasks.flatten() {
            let children = fs::read_to_string(task.path().join("children")).unwrap_or_default();
            pending.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    total
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
