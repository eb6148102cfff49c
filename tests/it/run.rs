//! Running the real `corecoder` binary in a sealed-off sandbox, with a hard timeout.
//!
//! Every run starts from an empty environment (only `PATH` survives), so no real API key, base
//! URL, proxy or `CORECODER_*` setting can leak in; `HOME` is the sandbox's own directory,
//! which is also the parent of the working directory, so the `.env` search stops inside the
//! sandbox. A run that outlives `TIMEOUT` is killed and the test fails with what it printed.
//! This file does not judge the output; the tests do.

use crate::server::Server;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(60);

/// What a finished run left behind.
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit code {}\n--- stdout ---\n{}\n--- stderr ---\n{}\n--------------",
            self.code, self.stdout, self.stderr
        )
    }
}

/// A fresh directory tree for one test: `root/` is `HOME`, `root/work/` the working directory.
/// Removed on drop unless the test is failing, so a failure can be looked at.
pub struct Sandbox {
    root: PathBuf,
    pub home: PathBuf,
    pub dir: PathBuf,
}

impl Sandbox {
    /// `name` must be unique among tests (use the test's name): it names the directory.
    pub fn new(name: &str) -> Sandbox {
        let root = std::env::temp_dir().join(format!("corecoder-it-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = root.join("work");
        std::fs::create_dir_all(&dir).expect("create sandbox");
        Sandbox {
            home: root.clone(),
            root,
            dir,
        }
    }

    /// A sandbox whose working directory holds a copy of `fixtures/repos/REPO`.
    pub fn with_repo(name: &str, repo: &str) -> Sandbox {
        Sandbox::with_copy(name, &format!("fixtures/repos/{repo}"))
    }

    /// A sandbox whose working directory holds a copy of the fixture directory `relative`.
    pub fn with_copy(name: &str, relative: &str) -> Sandbox {
        let sandbox = Sandbox::new(name);
        copy_tree(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join(relative),
            &sandbox.dir,
        );
        sandbox
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.join(relative)
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative))
            .unwrap_or_else(|e| panic!("read {relative}: {e}"))
    }

    pub fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent");
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {relative}: {e}"));
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if !thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    let entries = std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    for entry in entries {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).expect("create dir");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// Run against `server` with the test key `sk-test`.
pub fn run(args: &[&str], server: &Server, sandbox: &Sandbox) -> Output {
    let url = server.url();
    run_with(
        args,
        &[("CORECODER_API_KEY", "sk-test"), ("OPENAI_BASE_URL", &url)],
        sandbox,
    )
}

/// Run with exactly the environment `env` (plus `PATH` and `HOME`).
pub fn run_with(args: &[&str], env: &[(&str, &str)], sandbox: &Sandbox) -> Output {
    finish(spawn_with(args, env, sandbox))
}

/// Run with `input` written to the binary's stdin (a pipe, closed after the input).
pub fn run_with_stdin(
    args: &[&str],
    env: &[(&str, &str)],
    sandbox: &Sandbox,
    input: &str,
) -> Output {
    let mut command = command(args, env, sandbox);
    let mut child = command
        .stdin(Stdio::piped())
        .spawn()
        .expect("start the corecoder binary");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_string();
    // Written from its own thread, so a big input cannot block on a child that reads late.
    let writer = thread::spawn(move || std::io::Write::write_all(&mut stdin, input.as_bytes()));
    let output = finish(child);
    let _ = writer.join();
    output
}

/// Start a run without waiting for it, for tests that act while it runs (Ctrl+C).
pub fn spawn_with(args: &[&str], env: &[(&str, &str)], sandbox: &Sandbox) -> Child {
    command(args, env, sandbox)
        .spawn()
        .expect("start the corecoder binary")
}

/// The binary with `args`, in `sandbox`, with exactly `env` (plus `PATH` and `HOME`).
fn command(args: &[&str], env: &[(&str, &str)], sandbox: &Sandbox) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_corecoder"));
    command
        .args(args)
        .current_dir(&sandbox.dir)
        .env_clear()
        .env("HOME", &sandbox.home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    command.envs(env.iter().copied());
    command
}

/// Wait for a run to end (killing it after `TIMEOUT`) and collect what it printed.
pub fn finish(mut child: Child) -> Output {
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    thread::scope(|scope| {
        // Read both pipes while waiting, or a chatty child blocks on a full pipe.
        let stdout = scope.spawn(|| read_all(stdout));
        let stderr = scope.spawn(|| read_all(stderr));
        let code = wait_or_kill(&mut child);
        let output = Output {
            code: code.unwrap_or(-1),
            stdout: stdout.join().expect("stdout reader"),
            stderr: stderr.join().expect("stderr reader"),
        };
        if code.is_none() {
            panic!("corecoder ran longer than {TIMEOUT:?} and was killed\n{output:?}");
        }
        output
    })
}

/// `finish`, and the run's peak memory in KiB: its own `VmHWM`, sampled while it runs. Not
/// `wait4`'s `ru_maxrss`: a child inherits the test harness's through `fork` and keeps it past
/// `exec`, so under the whole suite that reads hundreds of MB for a small run.
pub fn finish_measured(child: Child) -> (Output, u64) {
    let status = format!("/proc/{}/status", child.id());
    thread::scope(|scope| {
        let peak = scope.spawn(move || {
            let mut peak = 0;
            // VmHWM only grows; a zombie's status has none, so the last reading is the peak.
            while let Ok(text) = std::fs::read_to_string(&status) {
                let field = text.lines().find_map(|l| l.strip_prefix("VmHWM:"));
                match field.and_then(|f| f.trim().trim_end_matches("kB").trim().parse().ok()) {
                    Some(kib) => peak = kib,
                    None => break,
                }
                thread::sleep(Duration::from_millis(5));
            }
            peak
        });
        let output = finish(child);
        (output, peak.join().expect("the sampler"))
    })
}

fn read_all(mut pipe: impl Read) -> String {
    let mut bytes = Vec::new();
    let _ = pipe.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The exit code (-1 for death by signal), or None if the run timed out and was killed.
fn wait_or_kill(child: &mut Child) -> Option<i32> {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status.code().unwrap_or(-1));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        thread::sleep(Duration::from_millis(10));
    }
}
