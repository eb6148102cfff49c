//! Timing and memory helpers: medians over repeated runs, and the peak RSS of a process.
//!
//! Every measurement runs once to warm caches, then `runs` times; the median is what is
//! reported. Peak memory is the measured process's own high-water mark, never a sum over a
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

/// Run `command` to the end; its peak resident memory, in bytes: the process's own high-water
/// mark (`VmHWM` in `/proc/PID/status`), sampled every millisecond until it exits, counted only
/// once it runs its own program. Not a sum over its process tree: a short-lived fork (CoreCoder
/// runs `uname`) maps its parent's pages, and summing counted them twice (136 MB read against
/// 70 MB). Not `wait4`'s `ru_maxrss` either: a child spawned with `vfork` (as `Command` does)
/// inherits the spawner's high-water mark at `exec`, so it would report the bench's own memory.
/// The same measure for every program compared.
pub fn peak_rss(command: &mut Command) -> Option<u64> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let (ours, status) = (
        std::env::current_exe().ok(),
        format!("/proc/{}/status", child.id()),
    );
    let exe = format!("/proc/{}/exe", child.id());
    let mut peak = 0;
    while let Ok(None) = child.try_wait() {
        // Before its `exec` the child still shares the bench's memory: not its own yet.
        if std::fs::read_link(&exe).ok() != ours {
            peak = peak.max(high_water_mark(&status).unwrap_or(0));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    (peak > 0).then_some(peak)
}

/// `VmHWM` of a `/proc/PID/status` file, in bytes.
fn high_water_mark(status: &str) -> Option<u64> {
    let text = std::fs::read_to_string(status).ok()?;
    let kb = text.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    let kb: u64 = kb.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb * 1024)
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
