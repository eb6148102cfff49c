//! The `bash` tool: run one shell command in the session's working directory.
//!
//! Called by the dispatcher in `core/dispatch.rs` (inline or on a pool worker). It asks `danger`
//! first, then runs `bash -c COMMAND` in its own process group with stdin closed, reads stdout
//! and stderr until the shell ends, the timeout passes or Ctrl+C sets `ctx.cancel`, and
//! returns the output as text. When the command succeeded, the top-level `cd`s in it become
//! an `Effect::ChangeDir`, so the next command starts where this one ended.
//!
//! The child never sees variables whose names look secret (nor, with `--sandbox`, those naming
//! sockets), and with `--sandbox` it may write only where `ctx.shell` allows and reach no
//! process outside (all applied here in `start`, chosen in `sandbox.rs`); the child is run and
//! read by `process.rs`.
//!
//! While the project's git files are untrusted (`extras/git_files.rs`), a command naming git
//! is refused and every child runs with git switched off; in workspace-write mode each call is
//! watched for changes to them, and the model told.
//!
//! It does not keep a shell alive between calls: environment variables, aliases and
//! functions set by one command are gone in the next. Only the directory carries over.

use crate::core::message::{Effect, Outcome};
use crate::extras::git_files::{self, GitTrust, Watch};
use crate::extras::sandbox::Sandbox;
use crate::tools::ToolContext;
use crate::tools::support::files::resolve;
use crate::tools::support::process::{self, Ending, Finished, Keep, Limits};
use crate::tools::support::text::truncate_middle;
use crate::tools::support::{danger, shell_words};
use serde::Deserialize;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};
use std::process::Child;
use std::time::Duration;

/// What the model is told about this tool (plain data, with the other tools' schemas).
pub(crate) use crate::tools::schemas::bash as schema;

const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// Ten minutes, as Claude Code's bash: a longer wait would hold the turn (and a pool worker)
/// past what anyone watches; a longer job belongs in the background with its output in a file.
const MAX_TIMEOUT_SECS: u64 = 600;
const MAX_OUTPUT_CHARS: usize = 15_000;
/// Per stream we keep the first and the last this many bytes (`process::Keep`).
const KEEP_BYTES: usize = 1 << 20;

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    command: String,
    #[serde(default)]
    timeout: Option<u64>,
}

pub fn run(args: Args, ctx: &ToolContext) -> Result<Outcome, String> {
    // Consent already settled destructive commands (asked, or opted in); this is the last
    // look before the spawn, for callers that skip consent.
    if let Some(danger::Danger::Catastrophic(reason)) = danger::check(&args.command) {
        return Ok(Outcome::text(danger::blocked(reason)));
    }
    let shell_safety = &ctx.shell;
    if shell_safety.git == GitTrust::Untrusted && git_files::mentions_git(&args.command) {
        return Ok(Outcome::text(git_files::refusal()));
    }
    if !ctx.cwd.is_dir() {
        let cwd = ctx.cwd.display();
        return Err(format!("the working directory {cwd} does not exist"));
    }
    let asked = args.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS);
    let timeout_secs = asked.clamp(1, MAX_TIMEOUT_SECS);
    let timeout = Duration::from_secs(timeout_secs);
    let limits = Limits {
        timeout,
        keep: Keep {
            head: KEEP_BYTES,
            tail: KEEP_BYTES,
        },
    };
    // A sandboxed call may plant what git runs outside the sandbox: watch, and say so.
    let watch = match shell_safety.sandbox {
        Sandbox::WorkspaceWrite => shell_safety
            .roots
            .first()
            .map(|launch| Watch::start(launch)),
        _ => None,
    };
    let shell = start(&args.command, ctx)?;
    let finished = process::run(shell, &[], limits, &ctx.cancel)?;
    let planted = watch.and_then(|watch| watch.changed());
    // Only a command that succeeded moves us: after a failure we cannot tell which of its
    // `cd`s ran (`cd build && make` may have failed in either step).
    let effect = match finished.ending {
        Ending::Exited(0) => follow_cds(&ctx.cwd, &args.command),
        _ => Effect::None,
    };
    let mut text = render(&finished, timeout_secs);
    text.push_str(&planted.unwrap_or_default());
    if asked > MAX_TIMEOUT_SECS {
        text.push_str(&format!(
            "\n[the timeout of {asked} s asked for was capped at {MAX_TIMEOUT_SECS} s]"
        ));
    }
    Ok(Outcome { text, effect })
}

/// `bash -c COMMAND` (`sh -c` where there is no bash), started without the variables
/// `ctx.shell` hides and inside its sandbox, if one is on.
fn start(command: &str, ctx: &ToolContext) -> Result<Child, String> {
    // Built here, before the fork; the child only enters it. Closed when this returns.
    let confinement = ctx.shell.confinement()?;
    let start = |program: &str| {
        let mut shell = process::shell(program, command, &ctx.cwd);
        for (name, value) in std::env::vars_os() {
            if ctx
                .shell
                .hides_from_shell(&name.to_string_lossy(), &value.to_string_lossy())
            {
                shell.env_remove(name);
            }
        }
        if ctx.shell.git == GitTrust::Untrusted {
            git_files::switch_off(&mut shell);
        }
        if let Some(confinement) = &confinement {
            confinement.enter_before_exec(&mut shell)?;
        }
        shell.spawn()
    };
    match start("bash") {
        Err(e) if e.kind() == ErrorKind::NotFound => start("sh"),
        started => started,
    }
    .map_err(|e| format!("could not start the shell: {e}"))
}

/// stdout, then `[stderr]` and stderr, then notes on how it ended; `(no output)` if all empty.
fn render(finished: &Finished, timeout_secs: u64) -> String {
    let mut text = finished.stdout.text();
    let stderr = finished.stderr.text();
    if !stderr.is_empty() {
        let gap = if text.is_empty() || text.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        text = format!("{text}{gap}[stderr]\n{stderr}");
    }
    let mut lines = vec![truncate_middle(
        text.trim_end_matches('\n'),
        MAX_OUTPUT_CHARS,
    )];
    let dropped = finished.stdout.dropped + finished.stderr.dropped;
    if dropped > 0 {
        lines.push(format!(
            "[{dropped} more bytes of output were read and dropped]"
        ));
    }
    match finished.ending {
        Ending::Exited(0) => {}
        Ending::Exited(code) => lines.push(format!("[exit code: {code}]")),
        Ending::TimedOut => lines.push(format!(
            "[timed out after {timeout_secs}s; process group killed]"
        )),
        Ending::Interrupted => lines.push("[interrupted]".to_string()),
    }
    if finished.stragglers_killed {
        lines.push("[background processes still holding the output were killed]".to_string());
    }
    lines.retain(|line| !line.is_empty());
    if lines.is_empty() {
        return "(no output)".to_string();
    }
    lines.join("\n")
}

/// Follow the command's top-level `cd`s from `start`, step by step. A target that is not an
/// existing directory (now, after the command ran) is skipped, and `cd -` goes back to the
/// directory before the last `cd` taken. Paths are cleaned lexically, as bash's own `cd` does.
fn follow_cds(start: &Path, command: &str) -> Effect {
    let mut dir = start.to_path_buf();
    let mut previous: Option<PathBuf> = None;
    for target in shell_words::cd::cd_targets(command) {
        let next = match (target.as_str(), &previous) {
            ("-", Some(before)) => before.clone(),
            ("-", None) => continue,
            _ => clean(&resolve(&dir, &target)),
        };
        if next.is_dir() {
            previous = Some(std::mem::replace(&mut dir, next));
        }
    }
    if dir == start {
        return Effect::None;
    }
    Effect::ChangeDir(dir)
}

/// Drop `.` and resolve `..` without touching the file system.
fn clean(path: &Path) -> PathBuf {
    let mut cleaned = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                cleaned.pop();
            }
            other => cleaned.push(other),
        }
    }
    cleaned
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::time::Instant;

    fn ctx(dir: &Path) -> ToolContext {
        crate::tools::test_support::test_context(dir)
    }

    /// A fresh directory per test thread (tests run in parallel), removed when dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
            let thread = format!("{:?}", std::thread::current().id());
            let thread: String = thread.chars().filter(char::is_ascii_digit).collect();
            let unique = format!("corecoder-bash-{}-{thread}-{name}", std::process::id());
            let dir = std::env::temp_dir().join(unique);
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("create temp dir");
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn run_in(dir: &Path, command: &str, timeout: Option<u64>) -> Outcome {
        let args = Args {
            command: command.to_string(),
            timeout,
        };
        run(args, &ctx(dir)).expect("the shell starts")
    }

    fn text_of(command: &str) -> String {
        run_in(&TempDir::new("text").0, command, None).text
    }

    #[test]
    fn formats_stdout_stderr_and_exit_code() {
        assert_eq!(text_of("echo hi"), "hi");
        assert_eq!(
            text_of("echo out; echo err >&2; exit 3"),
            "out\n[stderr]\nerr\n[exit code: 3]"
        );
        assert_eq!(text_of("true"), "(no output)");
        assert_eq!(text_of("exit 2"), "[exit code: 2]");
        // stdin is closed, so `cat` ends at once.
        assert_eq!(text_of("cat"), "(no output)");
    }

    #[test]
    fn long_output_is_cut_in_the_middle() {
        let text = text_of("seq 1 30000");
        assert!(text.starts_with("1\n2\n"));
        assert!(text.ends_with("29999\n30000"));
        assert!(text.contains("characters cut"));
        assert!(text.chars().count() < MAX_OUTPUT_CHARS + 200);
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let temp = TempDir::new("timeout");
        let dir = &temp.0;
        let started = Instant::now();
        let outcome = run_in(dir, "sleep 30 & echo $! > pid; sleep 30", Some(1));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            outcome
                .text
                .contains("[timed out after 1s; process group killed]")
        );
        let pid = std::fs::read_to_string(dir.join("pid")).expect("pid file");
        assert!(gone_or_zombie(pid.trim()), "background sleep survived");
    }

    /// A killed process disappears, or lingers as a zombie until its new parent reaps it.
    fn gone_or_zombie(pid: &str) -> bool {
        for _ in 0..40 {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return true,
                Ok(stat)
                    if stat
                        .rsplit(')')
                        .next()
                        .is_some_and(|s| s.trim().starts_with('Z')) =>
                {
                    return true;
                }
                Ok(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        false
    }

    #[test]
    fn background_child_holding_the_pipe_does_not_hang() {
        let started = Instant::now();
        let text = text_of("sleep 100 & echo started");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(text.starts_with("started\n"));
        assert!(text.contains("background processes"));
    }

    #[test]
    fn process_that_left_the_group_does_not_hang() {
        let started = Instant::now();
        let text = text_of("setsid sleep 3 & echo started");
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(text.starts_with("started"));
    }

    #[test]
    fn huge_output_is_drained_not_kept() {
        let text = text_of("head -c 5000000 /dev/zero | tr '\\0' x");
        assert!(text.contains("more bytes of output were read and dropped"));
        assert!(text.chars().count() < MAX_OUTPUT_CHARS + 200);
    }

    #[test]
    fn ctrl_c_interrupts() {
        let temp = TempDir::new("cancel");
        let dir = &temp.0;
        let context = ctx(dir);
        context.cancel.store(true, Ordering::Relaxed);
        let started = Instant::now();
        let args = Args {
            command: "sleep 30".to_string(),
            timeout: None,
        };
        let outcome = run(args, &context).expect("runs");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(outcome.text, "[interrupted]");
    }

    #[test]
    fn blocked_command_does_not_run() {
        let temp = TempDir::new("blocked");
        let dir = &temp.0;
        let outcome = run_in(dir, "touch ran && mkfs.corecoder-test", None);
        assert!(outcome.text.starts_with("Blocked: mkfs"));
        assert!(!dir.join("ran").exists());
    }

    #[test]
    fn runs_through_the_dispatcher() {
        let temp = TempDir::new("dispatch");
        let outcome = crate::core::dispatch::run(
            "bash",
            r#"{"command": "echo hi", "timeout": 5}"#,
            &ctx(&temp.0),
        );
        assert_eq!(outcome.text, "hi");
        let huge = r#"{"command": "true", "timeout": 18446744073709551615}"#;
        assert_eq!(
            crate::core::dispatch::run("bash", huge, &ctx(&temp.0)).text,
            "(no output)\n[the timeout of 18446744073709551615 s asked for was capped at 600 s]"
        );
        assert_eq!(schema()["function"]["parameters"]["required"][0], "command");
    }

    #[test]
    fn missing_working_directory_is_an_error() {
        let args = Args {
            command: "ls".to_string(),
            timeout: None,
        };
        let missing = std::env::temp_dir().join("corecoder-bash-no-such-dir");
        assert!(run(args, &ctx(&missing)).is_err());
    }

    #[test]
    fn cd_changes_directory() {
        let temp = TempDir::new("cd");
        let dir = &temp.0;
        std::fs::create_dir_all(dir.join("sub/deeper")).expect("mkdir");
        let effect = |command: &str| run_in(dir, command, None).effect;
        assert_eq!(effect("cd sub"), Effect::ChangeDir(dir.join("sub")));
        assert_eq!(
            effect("mkdir -p x && cd x"),
            Effect::ChangeDir(dir.join("x"))
        );
        assert_eq!(effect("cd sub/deeper && cd ../.."), Effect::None);
        assert_eq!(
            effect("cd sub && cd deeper && cd -"),
            Effect::ChangeDir(dir.join("sub"))
        );
        assert_eq!(effect("cd sub && false"), Effect::None);
        assert_eq!(effect("(cd sub)"), Effect::None);
        assert_eq!(
            effect("cd no-such-dir; cd sub"),
            Effect::ChangeDir(dir.join("sub"))
        );
        assert_eq!(
            effect(&format!("cd {}", dir.join("sub").display())),
            Effect::ChangeDir(dir.join("sub"))
        );
    }

    #[test]
    fn every_property_of_its_schema_is_a_field_of_its_args() {
        crate::tools::test_support::check_schema_fits::<Args>(&schema());
    }
}
