//! The sandbox as a process boundary, through the binary: a sandboxed bash (read-only and
//! workspace-write) tries to reach a process outside it, the way a prompt-injected model would,
//! and fails. Each test starts the process outside itself: a tmux server on its own socket, Unix
//! socket listeners (pathname, abstract, datagram), a `sleep`, an inherited socket.
//!
//! Layout as in `escape.rs` (`safety::with_outside`): HOME is the sandbox root, `HOME/work` the
//! working directory, `HOME/outside` outside every writable root. Tests skip with a `SKIPPED `
//! line where the kernel has no Landlock, or the machine lacks tmux, python3 or `chattr` support.

use crate::run::{Sandbox, finish};
use crate::safety::{bash_once, landlock_available, with_outside};
use serde_json::json;
use std::io::{ErrorKind, Read, Write};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram, UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

const MODES: [&str; 2] = ["read-only", "workspace-write"];

/// Is `program` on PATH and working? If not, say so straight on stderr (as
/// `landlock_available` does) and skip.
fn have(program: &str, test: &str) -> bool {
    let found = Command::new(program)
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !found {
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: no {program} here");
    }
    found
}

/// Run one bash call with `--sandbox MODE` and the sandbox's own TMPDIR.
fn sandboxed(sandbox: &Sandbox, tmp: &str, mode: &str, command: &str) -> String {
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp)];
    bash_once(sandbox, &["--sandbox", mode], &env, command)
}

/// A tmux server of the test's own (its own socket, no config), killed when dropped.
struct Tmux(String);

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-S", &self.0, "kill-server"])
            .status();
    }
}

/// The break of issue 28: inside tmux, sandboxed bash ran `tmux new-window "…"` and the
/// command ran outside the sandbox. Here the server is started by the test, outside; the
/// sandboxed bash asks it for a new window, a `run-shell` and typed keys that each would create
/// a marker outside the roots. None appears, in either mode.
#[test]
fn tmux_runs_nothing_for_a_sandboxed_bash() {
    let test = "walls::tmux_runs_nothing_for_a_sandboxed_bash";
    if !landlock_available(test) || !have("tmux", test) {
        return;
    }
    for mode in MODES {
        let (sandbox, tmp, outside) = with_outside(&format!("walls_tmux_{mode}"));
        let socket = format!("{outside}/tmux.sock");
        let started = Command::new("tmux")
            .args([
                "-S",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "w",
            ])
            .status()
            .expect("start tmux");
        assert!(started.success(), "the test's tmux server did not start");
        let _server = Tmux(socket.clone());
        let command = format!(
            "tmux -S {socket} new-window 'touch {outside}/by-new-window'; \
             tmux -S {socket} run-shell 'touch {outside}/by-run-shell'; \
             tmux -S {socket} send-keys -t w 'touch {outside}/by-send-keys' Enter; echo end"
        );
        let result = sandboxed(&sandbox, &tmp, mode, &command);
        assert!(result.contains("end"), "{mode}: {result}");
        std::thread::sleep(Duration::from_millis(1000));
        for marker in ["by-new-window", "by-run-shell", "by-send-keys"] {
            let made = std::path::Path::new(&outside).join(marker).exists();
            assert!(
                !made,
                "{mode}: tmux ran {marker} outside the sandbox\n{result}"
            );
        }
    }
}

/// A client, run by the sandboxed bash, that tries every way to a Unix socket outside: a
/// stream connect by path and by abstract name, and a datagram socketpair re-aimed at a path.
/// A stream socketpair (what `make -j` and node use) must still work.
const CLIENT: &str = r#"
import socket, sys
path, abstract, dgram = sys.argv[1], "\0" + sys.argv[2], sys.argv[3]
for name, address in [("path", path), ("abstract", abstract)]:
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(address)
        s.send(b"pwned")
        print("connected", name)
    except OSError as e:
        print("refused", name, e)
for kind in [socket.SOCK_DGRAM, socket.SOCK_RAW]:
    try:
        a, b = socket.socketpair(socket.AF_UNIX, kind)
        a.sendto(b"pwned", dgram)
        print("sent dgram", kind)
    except OSError as e:
        print("refused dgram", kind, e)
a, b = socket.socketpair()
a.send(b"inside")
print("pair", b.recv(6).decode())
"#;

/// Pathname, abstract and datagram Unix sockets listened on by the test (outside the sandbox)
/// get nothing from a sandboxed bash; the listeners are read without blocking after the run.
#[test]
fn unix_sockets_outside_get_no_connection() {
    let test = "walls::unix_sockets_outside_get_no_connection";
    if !landlock_available(test) || !have("python3", test) {
        return;
    }
    for mode in MODES {
        let (sandbox, tmp, outside) = with_outside(&format!("walls_unix_{mode}"));
        let path = format!("{outside}/listen.sock");
        let abstract_name = format!("corecoder-walls-{}-{mode}", std::process::id());
        let dgram_path = format!("{outside}/dgram.sock");
        let by_path = UnixListener::bind(&path).expect("bind by path");
        let name = SocketAddr::from_abstract_name(abstract_name.as_bytes()).expect("name");
        let by_name = UnixListener::bind_addr(&name).expect("bind abstract");
        let dgram = UnixDatagram::bind(&dgram_path).expect("bind dgram");
        sandbox.write("client.py", CLIENT);
        let command = format!("python3 client.py {path} {abstract_name} {dgram_path}");
        let result = sandboxed(&sandbox, &tmp, mode, &command);
        assert!(result.contains("pair inside"), "{mode}: {result}");
        for listener in [&by_path, &by_name] {
            listener.set_nonblocking(true).expect("nonblocking");
            let accepted = listener.accept().map(|_| ()).map_err(|e| e.kind());
            assert_eq!(accepted, Err(ErrorKind::WouldBlock), "{mode}: {result}");
        }
        dgram.set_nonblocking(true).expect("nonblocking");
        let got = dgram.recv(&mut [0; 16]).map_err(|e| e.kind());
        assert_eq!(got, Err(ErrorKind::WouldBlock), "{mode}: {result}");
        assert!(!result.contains("connected"), "{mode}: {result}");
        assert!(!result.contains("sent dgram"), "{mode}: {result}");
    }
}

/// A `sleep` the test started (outside the sandbox, same user) survives `kill -9` and
/// `kill -TERM` from a sandboxed bash, while bash may still kill what it started itself.
#[test]
fn a_process_outside_survives_kill_from_sandboxed_bash() {
    let test = "walls::a_process_outside_survives_kill_from_sandboxed_bash";
    if !landlock_available(test) {
        return;
    }
    for mode in MODES {
        let (sandbox, tmp, _) = with_outside(&format!("walls_kill_{mode}"));
        let mut outside = Command::new("sleep").arg("60").spawn().expect("sleep");
        let pid = outside.id();
        let command = format!(
            "kill -TERM {pid}; kill -9 {pid}; echo killed=$?; \
             sleep 30 & kill -9 $! && echo own child killed"
        );
        let result = sandboxed(&sandbox, &tmp, mode, &command);
        std::thread::sleep(Duration::from_millis(200));
        let alive = outside.try_wait().expect("wait").is_none();
        let _ = outside.kill();
        let _ = outside.wait();
        assert!(
            alive,
            "{mode}: the sandboxed bash killed a process outside\n{result}"
        );
        assert!(result.contains("killed=1"), "{mode}: {result}");
        assert!(result.contains("own child killed"), "{mode}: {result}");
    }
}

/// Each bash call enters a domain of its own, so a process an earlier call left running
/// (`setsid`, output elsewhere) is outside the next call's domain: it cannot be killed by it.
#[test]
fn a_later_call_cannot_signal_what_an_earlier_call_left() {
    if !landlock_available("walls::a_later_call_cannot_signal_what_an_earlier_call_left") {
        return;
    }
    let (sandbox, tmp, _) = with_outside("walls_later_call");
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    let calls = [
        (
            "bash",
            json!({"command": "setsid sleep 60 >/dev/null 2>&1 < /dev/null & echo $! > pid"}),
        ),
        ("bash", json!({"command": "kill -9 $(cat pid); echo rc=$?"})),
    ];
    let flags = ["--sandbox", "workspace-write"];
    let results = crate::safety::calls_in_turn(&sandbox, &flags, &env, &calls);
    let pid = sandbox.read("pid").trim().to_string();
    let alive = std::path::Path::new(&format!("/proc/{pid}")).exists();
    if let Ok(pid @ 2..) = pid.parse::<i32>() {
        // SAFETY: kill(2) with one real pid (never 0, -1 or 1); it touches no memory of ours.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert!(alive, "{results:?}");
    assert!(results[1].contains("rc=1"), "{results:?}");
}

/// Nor through `SIGIO`: a pipe whose owner (`F_SETOWN`) is the process outside and which is
/// set to signal on input (`O_ASYNC`) would kill it (`SIGIO` ends a process that does not
/// catch it) when bash writes to the pipe. Landlock's signal scope covers this path too.
#[test]
fn sigio_does_not_reach_a_process_outside() {
    let test = "walls::sigio_does_not_reach_a_process_outside";
    if !landlock_available(test) || !have("python3", test) {
        return;
    }
    for mode in MODES {
        let (sandbox, tmp, _) = with_outside(&format!("walls_sigio_{mode}"));
        let mut outside = Command::new("sleep").arg("60").spawn().expect("sleep");
        let pid = outside.id();
        let command = format!(
            "python3 -c 'import fcntl, os, time\n\
             r, w = os.pipe()\n\
             fcntl.fcntl(r, fcntl.F_SETOWN, {pid})\n\
             fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)\n\
             os.write(w, b\"x\"); time.sleep(0.2); print(\"written\")'"
        );
        let result = sandboxed(&sandbox, &tmp, mode, &command);
        std::thread::sleep(Duration::from_millis(200));
        let alive = outside.try_wait().expect("wait").is_none();
        let _ = outside.kill();
        let _ = outside.wait();
        assert!(result.contains("written"), "{mode}: {result}");
        assert!(
            alive,
            "{mode}: SIGIO from a sandboxed bash killed a process outside\n{result}"
        );
    }
}

/// Nor can it trace one (`ptrace`, which would let it run code in it), write its memory or
/// open one of its descriptors (`/proc/PID/fd/1`, its output) to write: Landlock refuses them
/// across the domain's edge, and corecoder gave up `CAP_SYS_PTRACE`. (Reading its `/proc`
/// files, `environ` included, is not refused: SECURITY.md says so.)
#[test]
fn a_process_outside_cannot_be_traced() {
    let test = "walls::a_process_outside_cannot_be_traced";
    if !landlock_available(test) || !have("python3", test) {
        return;
    }
    for mode in MODES {
        let (sandbox, tmp, _) = with_outside(&format!("walls_trace_{mode}"));
        let sleep = Command::new("sleep")
            .arg("60")
            .stdout(Stdio::piped())
            .spawn();
        let mut outside = sleep.expect("sleep");
        let pid = outside.id();
        let command = format!(
            "python3 -c 'import ctypes as c\n\
             l = c.CDLL(None, use_errno=True)\n\
             print(\"attach\", l.ptrace(16, {pid}, None, None), c.get_errno())\n\
             try: open(\"/proc/{pid}/mem\", \"r+b\"); print(\"mem opened\")\n\
             except OSError as e: print(\"mem refused\", e.errno)\n\
             try: open(\"/proc/{pid}/fd/1\", \"wb\"); print(\"fd opened\")\n\
             except OSError as e: print(\"fd refused\", e.errno)\n\
             p = l.syscall(434, {pid}, 0)\n\
             print(\"getfd\", l.syscall(438, p, 1, 0), c.get_errno())'"
        );
        let result = sandboxed(&sandbox, &tmp, mode, &command);
        let alive = outside.try_wait().expect("wait").is_none();
        let _ = outside.kill();
        let _ = outside.wait();
        assert!(alive, "{mode}: {result}");
        assert!(result.contains("attach -1 1\n"), "{mode}: {result}");
        assert!(result.contains("mem refused"), "{mode}: {result}");
        assert!(result.contains("fd refused"), "{mode}: {result}");
        assert!(result.ends_with("getfd -1 1"), "{mode}: {result}");
    }
}

/// corecoder sits outside the domain, so its own kill on timeout still reaches the whole group
/// of a sandboxed bash, background processes included.
#[test]
fn a_timeout_still_kills_a_sandboxed_group() {
    let test = "walls::a_timeout_still_kills_a_sandboxed_group";
    if !landlock_available(test) {
        return;
    }
    let (sandbox, tmp, _) = with_outside("walls_timeout");
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    let calls = [(
        "bash",
        json!({"command": "sleep 30 & echo pid=$!; sleep 30", "timeout": 1}),
    )];
    let flags = ["--sandbox", "read-only"];
    let results = crate::safety::calls_in_turn(&sandbox, &flags, &env, &calls);
    let result = &results[0];
    assert!(result.contains("timed out after 1s"), "{result}");
    let pid = result
        .split("pid=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the background pid");
    std::thread::sleep(Duration::from_millis(300));
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit(')').next().unwrap_or("").trim();
    assert!(
        stat.is_empty() || state.starts_with('Z'),
        "{pid} lives: {stat}"
    );
}

/// `env` in a sandboxed bash shows none of the variables naming a socket, an agent or a
/// display; with the sandbox off they pass (they are not secrets).
#[test]
fn a_sandboxed_env_names_no_socket() {
    if !landlock_available("walls::a_sandboxed_env_names_no_socket") {
        return;
    }
    let names = [
        "TMUX",
        "TMUX_PANE",
        "STY",
        "DBUS_SESSION_BUS_ADDRESS",
        "DOCKER_HOST",
        "SSH_AUTH_SOCK",
        "GPG_AGENT_INFO",
        "XDG_RUNTIME_DIR",
        "WAYLAND_DISPLAY",
        "DISPLAY",
        "XAUTHORITY",
    ];
    let mut env = vec![
        ("OPENAI_API_KEY", "sk-test"),
        ("CORECODER_ENV_ALLOW", "TMUX"),
    ];
    env.extend(names.iter().map(|name| (*name, "/tmp/walls-socket")));
    for mode in ["off", "read-only", "workspace-write"] {
        let sandbox = Sandbox::new(&format!("walls_env_{mode}"));
        let result = bash_once(&sandbox, &["--sandbox", mode], &env, "env");
        assert!(result.contains("PATH="), "{result}");
        for name in names {
            let shown = result
                .lines()
                .any(|line| line.starts_with(&format!("{name}=")));
            assert_eq!(shown, mode == "off", "{mode}: {name}\n{result}");
        }
    }
}

/// A socket corecoder inherited (as from a terminal or systemd) is not handed on to a
/// sandboxed bash: `echo >&7` finds no descriptor 7, and the test's end reads nothing.
#[test]
fn an_inherited_socket_does_not_reach_a_sandboxed_bash() {
    if !landlock_available("walls::an_inherited_socket_does_not_reach_a_sandboxed_bash") {
        return;
    }
    for mode in MODES {
        let (sandbox, tmp, _) = with_outside(&format!("walls_fd_{mode}"));
        let (ours, theirs) = UnixStream::pair().expect("pair");
        let server = crate::server::Server::start(vec![
            crate::server::Reply::Sse(crate::sse::tool_calls(&[(
                "call_0",
                "bash",
                json!({"command": "echo pwned >&7; echo rc=$?"}),
            )])),
            crate::server::Reply::Sse(crate::sse::text("done")),
        ]);
        let mut binary = Command::new(env!("CARGO_BIN_EXE_corecoder"));
        binary
            .args(["-p", "go", "--yes", "--sandbox", mode])
            .current_dir(&sandbox.dir)
            .env_clear()
            .env("HOME", &sandbox.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TMPDIR", &tmp)
            .env("OPENAI_API_KEY", "sk-test")
            .env("OPENAI_BASE_URL", server.url())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let fd = std::os::fd::AsRawFd::as_raw_fd(&theirs);
        // SAFETY: dup2 is async-signal-safe; the copy at 7 is inherited (no close-on-exec).
        unsafe {
            binary.pre_exec(move || match libc::dup2(fd, 7) {
                7 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            })
        };
        let output = finish(binary.spawn().expect("start corecoder"));
        drop(theirs);
        assert_eq!(output.code, 0, "{output:?}");
        let result = server.requests()[1].last_tool_result();
        ours.set_nonblocking(true).expect("nonblocking");
        let mut got = Vec::new();
        let _ = (&ours).read_to_end(&mut got);
        assert!(
            got.is_empty(),
            "{mode}: bash wrote to the inherited socket\n{result}"
        );
        assert!(result.contains("Bad file descriptor"), "{mode}: {result}");
    }
}

/// Another process's shared memory (`/dev/shm`, a file the test made there) and the rest of
/// `/dev` are not writable from a sandboxed bash, not even in place (`>>`, which truncates
/// nothing); `/dev/null` and a new pseudo-terminal are.
#[test]
fn shared_memory_outside_is_not_writable() {
    let test = "walls::shared_memory_outside_is_not_writable";
    if !landlock_available(test) || !std::path::Path::new("/dev/shm").is_dir() {
        return;
    }
    for mode in MODES {
        let (sandbox, tmp, _) = with_outside(&format!("walls_shm_{mode}"));
        let shm = format!("/dev/shm/corecoder-walls-{}-{mode}", std::process::id());
        std::fs::write(&shm, "original").expect("a shared-memory file");
        let command = format!(
            "echo pwned >> {shm}; echo quiet > /dev/null && echo null ok; \
             python3 -c 'import os; m = os.open(\"/dev/ptmx\", os.O_RDWR); print(\"pty ok\")'"
        );
        let result = sandboxed(&sandbox, &tmp, mode, &command);
        let kept = std::fs::read_to_string(&shm).unwrap_or_default();
        let _ = std::fs::remove_file(&shm);
        assert_eq!(kept, "original", "{mode}: {result}");
        assert!(result.contains("Permission denied"), "{mode}: {result}");
        assert!(result.contains("null ok"), "{mode}: {result}");
        assert!(result.contains("pty ok"), "{mode}: {result}");
    }
}

/// Not defended, and said so: TCP is not walled. A service listening on loopback (here the
/// test's; in life a docker daemon on `tcp://localhost:2375`, an X server on port 6000, a dev
/// server, a debugger port) is reached from a sandboxed bash. This test fails the day it closes.
#[test]
fn a_loopback_tcp_service_is_reached_as_documented() {
    let test = "walls::a_loopback_tcp_service_is_reached_as_documented";
    if !landlock_available(test) {
        return;
    }
    let (sandbox, tmp, _) = with_outside("walls_tcp");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let command = format!("echo hello > /dev/tcp/127.0.0.1/{port} && echo sent");
    let result = sandboxed(&sandbox, &tmp, "read-only", &command);
    listener.set_nonblocking(true).expect("nonblocking");
    let reached = listener.accept().is_ok();
    assert!(reached, "the documented gap closed? {result}");
}
