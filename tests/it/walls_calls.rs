//! The calls the sandbox's seccomp filter refuses, tried through the binary by a sandboxed bash:
//! `chattr +a` on a file outside (read-only mode; workspace-write's gap, as documented), an
//! `io_uring` ring (both modes), and `TIOCSTI`, which types into a terminal (both modes). The
//! sockets, signals and environment are in `walls.rs`.
//!
//! Tests skip with a `SKIPPED ` line where the kernel has no Landlock, the machine has no
//! python3, or the file system under the temp directory takes no `chattr +a`.

use crate::driver::Repl;
use crate::safety::{bash_once, landlock_available, with_outside};
use crate::server::Reply;
use crate::sse;
use serde_json::json;
use std::io::Write;
use std::process::Command;

/// Does the temp directory's file system take `chattr +a` from us? (It needs ext4, xfs or
/// btrfs, and `CAP_LINUX_IMMUTABLE`: root.) Tried on `probe`, then undone.
fn chattr_works(probe: &std::path::Path, test: &str) -> bool {
    std::fs::write(probe, "x").expect("probe");
    let set = Command::new("chattr").arg("+a").arg(probe).status();
    let works = set.is_ok_and(|status| status.success());
    let _ = Command::new("chattr").arg("-a").arg(probe).status();
    if !works {
        let why = "chattr +a does not work here (no chattr, the file system, or not root)";
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
    }
    works
}

/// Is the append-only flag set on `path`? (`lsattr` prints it as an `a` in the flags column.)
fn append_only(path: &std::path::Path) -> bool {
    let listed = Command::new("lsattr").arg(path).output().expect("lsattr");
    let text = String::from_utf8_lossy(&listed.stdout).into_owned();
    text.split_whitespace().next().unwrap_or("").contains('a')
}

/// Python's `ioctl` with both `FS_IOC_SETFLAGS` numbers (the 64-bit one `chattr` uses and the
/// 32-bit one a 64-bit kernel also serves), setting `FS_APPEND_FL` (0x20).
fn python_setflags(file: &str) -> String {
    format!(
        "python3 -c 'import fcntl, os, struct\n\
         fd = os.open(\"{file}\", os.O_RDONLY)\n\
         for n in (0x40086602, 0x40046602):\n\
         \x20   try: fcntl.ioctl(fd, n, struct.pack(\"l\", 0x20)); print(\"set\", hex(n))\n\
         \x20   except OSError as e: print(\"refused\", hex(n), e)'"
    )
}

/// `chattr +a` on a file outside the project, from a read-only sandbox: refused (the seccomp
/// filter refuses `FS_IOC_SETFLAGS` in both numbers, `FS_IOC_FSSETXATTR` and `file_setattr`);
/// the file keeps no flag. Read-only opens are all Landlock leaves it, so this was the gap.
#[test]
fn chattr_outside_is_refused_in_read_only() {
    let test = "walls_calls::chattr_outside_is_refused_in_read_only";
    if !landlock_available(test) {
        return;
    }
    let (sandbox, tmp, outside) = with_outside("walls_chattr_ro");
    let target = std::path::Path::new(&outside).join("f");
    if !chattr_works(&target, test) {
        return;
    }
    let f = target.display().to_string();
    let command = format!(
        "chattr +a {f}; echo rc=$?; {}; echo end",
        python_setflags(&f)
    );
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    let result = bash_once(&sandbox, &["--sandbox", "read-only"], &env, &command);
    let flagged = append_only(&target);
    let _ = Command::new("chattr").arg("-a").arg(&target).status();
    assert!(!flagged, "read-only bash made {f} append-only\n{result}");
    assert!(result.contains("rc=1"), "{result}");
    assert!(!result.contains("set 0x"), "{result}");
    assert!(result.contains("end"), "{result}");
}

/// Workspace-write does not refuse it: a filter cannot see paths, and inside the workspace
/// these calls are wanted. This test states the gap and fails the day it closes.
#[test]
fn workspace_write_does_not_stop_chattr_outside_as_documented() {
    let test = "walls_calls::workspace_write_does_not_stop_chattr_outside_as_documented";
    if !landlock_available(test) {
        return;
    }
    let (sandbox, tmp, outside) = with_outside("walls_chattr_ww");
    let target = std::path::Path::new(&outside).join("f");
    if !chattr_works(&target, test) {
        return;
    }
    let command = format!("chattr +a {}; echo rc=$?", target.display());
    let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
    let result = bash_once(&sandbox, &["--sandbox", "workspace-write"], &env, &command);
    let flagged = append_only(&target);
    let _ = Command::new("chattr").arg("-a").arg(&target).status();
    assert!(flagged, "the documented gap closed? {result}");
}

/// `io_uring_setup` (a ring can open sockets and files around the filter) and `TIOCSTI` (push
/// keystrokes into a terminal's input; here a terminal bash opened itself, which root may do
/// to any terminal) are refused in both modes, with EPERM.
#[test]
fn io_uring_and_tiocsti_are_refused_in_both_modes() {
    let test = "walls_calls::io_uring_and_tiocsti_are_refused_in_both_modes";
    if !landlock_available(test) {
        return;
    }
    if Command::new("python3").arg("-V").output().is_err() {
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: no python3 here");
        return;
    }
    let script = "import ctypes as c, fcntl, os\n\
        l = c.CDLL(None, use_errno=True)\n\
        l.syscall(425, 1, None); print('io_uring_setup errno', c.get_errno())\n\
        m = os.open('/dev/ptmx', os.O_RDWR | os.O_NOCTTY)\n\
        l.unlockpt(m); l.ptsname.restype = c.c_char_p\n\
        s = os.open(l.ptsname(m), os.O_RDWR | os.O_NOCTTY)\n\
        try: fcntl.ioctl(s, 0x5412, b'x'); print('typed')\n\
        except OSError as e: print('TIOCSTI refused', e.errno)\n";
    for mode in ["read-only", "workspace-write"] {
        let (sandbox, tmp, _) = with_outside(&format!("walls_calls_{mode}"));
        sandbox.write("calls.py", script);
        let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
        let flags = ["--sandbox", mode];
        let result = bash_once(&sandbox, &flags, &env, "python3 calls.py");
        assert!(
            result.contains("io_uring_setup errno 1\n"),
            "{mode}: {result}"
        );
        assert!(result.contains("TIOCSTI refused 1"), "{mode}: {result}");
    }
}

/// What the sandboxed bash sends: a message to the test's System V queue, bytes into its
/// System V shared memory, a message to its POSIX queue (ids and name as arguments).
const IPC_CLIENT: &str = r#"
import ctypes as c, sys
l = c.CDLL(None, use_errno=True)
msq, shm, mq = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
message = c.create_string_buffer(b"\x01\0\0\0\0\0\0\0pwned")
print("msgsnd", l.msgsnd(msq, message, 5, 0o4000), c.get_errno())
l.shmat.restype = c.c_void_p
at = l.shmat(shm, None, 0)
if at is None or at == c.c_void_p(-1).value:
    print("shmat refused", c.get_errno())
else:
    c.memmove(at, b"pwned", 5)
    print("shm written")
q = l.mq_open(mq, 1)
print("mq_open", q, c.get_errno())
if q >= 0:
    print("mq_send", l.mq_send(q, b"pwned", 5, 0))
"#;

/// System V IPC and POSIX message queues are named by numbers and names, not paths, so
/// Landlock does not see them: the test (outside) makes a message queue, a shared memory
/// segment and a POSIX queue, and a sandboxed bash in either mode reaches none of them.
#[test]
fn ipc_objects_outside_are_not_reached() {
    let test = "walls_calls::ipc_objects_outside_are_not_reached";
    if !landlock_available(test) {
        return;
    }
    if Command::new("python3").arg("-V").output().is_err() {
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: no python3 here");
        return;
    }
    for mode in ["read-only", "workspace-write"] {
        let (sandbox, tmp, _) = with_outside(&format!("walls_ipc_{mode}"));
        let name = format!("/corecoder-walls-{}-{mode}\0", std::process::id());
        // SAFETY: plain libc calls on objects this test makes, removes, and reads into buffers
        // it owns; every size passed is the buffer's own.
        let (msq, shm, mq, at) = unsafe {
            let flags = libc::IPC_CREAT | 0o600;
            let msq = libc::msgget(libc::IPC_PRIVATE, flags);
            let shm = libc::shmget(libc::IPC_PRIVATE, 4096, flags);
            let mq_flags = libc::O_CREAT | libc::O_RDWR | libc::O_NONBLOCK;
            let mq = libc::mq_open(
                name.as_ptr().cast(),
                mq_flags,
                0o600,
                std::ptr::null::<u8>(),
            );
            (
                msq,
                shm,
                mq,
                libc::shmat(shm, std::ptr::null(), 0).cast::<u8>(),
            )
        };
        assert!(msq >= 0 && shm >= 0 && mq >= 0, "the test's IPC objects");
        sandbox.write("ipc.py", IPC_CLIENT);
        let command = format!("python3 ipc.py {msq} {shm} {}", name.trim_end_matches('\0'));
        let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
        let result = bash_once(&sandbox, &["--sandbox", mode], &env, &command);
        // SAFETY: as above.
        let (queued, shared, posted) = unsafe {
            let mut message = [0u8; 64];
            let queued = libc::msgrcv(msq, message.as_mut_ptr().cast(), 56, 0, libc::IPC_NOWAIT);
            let shared = std::slice::from_raw_parts(at, 5).to_vec();
            let mut posted = vec![0u8; 1 << 16];
            let len = posted.len();
            let posted =
                libc::mq_receive(mq, posted.as_mut_ptr().cast(), len, std::ptr::null_mut());
            libc::shmdt(at.cast());
            libc::shmctl(shm, libc::IPC_RMID, std::ptr::null_mut());
            libc::msgctl(msq, libc::IPC_RMID, std::ptr::null_mut());
            libc::mq_close(mq);
            libc::mq_unlink(name.as_ptr().cast());
            (queued, shared, posted)
        };
        assert_eq!(
            queued, -1,
            "{mode}: a message reached the test's queue\n{result}"
        );
        assert_eq!(
            shared, [0; 5],
            "{mode}: bash wrote the test's shared memory\n{result}"
        );
        assert_eq!(
            posted, -1,
            "{mode}: a message reached the POSIX queue\n{result}"
        );
        assert!(result.contains("msgsnd -1 1\n"), "{mode}: {result}");
        assert!(result.contains("shmat refused 1"), "{mode}: {result}");
        assert!(result.contains("mq_open -1 1"), "{mode}: {result}");
    }
}

/// Your keyrings are shared by all your processes (Kerberos tickets, ecryptfs keys): the test
/// puts a key in its user keyring, and a sandboxed bash can neither find nor read it.
#[test]
fn a_key_in_your_keyring_is_not_read() {
    let test = "walls_calls::a_key_in_your_keyring_is_not_read";
    if !landlock_available(test) {
        return;
    }
    let description = format!("corecoder-walls-{}\0", std::process::id());
    let payload = b"sk-test-keyring";
    const USER_KEYRING: i32 = -4;
    // SAFETY: add_key reads the two NUL-ended strings and the payload, all alive for the call.
    let key = unsafe {
        let (kind, name) = (c"user".as_ptr(), description.as_ptr());
        let data = payload.as_ptr();
        libc::syscall(
            libc::SYS_add_key,
            kind,
            name,
            data,
            payload.len(),
            USER_KEYRING,
        )
    };
    if key < 0 {
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: no keyrings here");
        return;
    }
    let name = description.trim_end_matches('\0');
    let command = format!(
        "python3 -c 'import ctypes as c\n\
         l = c.CDLL(None, use_errno=True)\n\
         k = l.syscall({keyctl}, 10, -4, b\"user\", b\"{name}\", 0); print(\"search\", k, c.get_errno())\n\
         b = c.create_string_buffer(64); n = l.syscall({keyctl}, 11, {key}, b, 64)\n\
         print(\"read\", n, b.raw[:max(n, 0)])'",
        keyctl = libc::SYS_keyctl,
    );
    for mode in ["read-only", "workspace-write"] {
        let (sandbox, tmp, _) = with_outside(&format!("walls_keys_{mode}"));
        let env = [("OPENAI_API_KEY", "sk-test"), ("TMPDIR", tmp.as_str())];
        let result = bash_once(&sandbox, &["--sandbox", mode], &env, &command);
        let leaked = result.contains("sk-test-keyring");
        if leaked || !result.contains("search -1 1\n") {
            // SAFETY: KEYCTL_INVALIDATE (21) on the key this test made.
            unsafe { libc::syscall(libc::SYS_keyctl, 21, key) };
        }
        assert!(
            !leaked,
            "{mode}: a sandboxed bash read your keyring\n{result}"
        );
        assert!(result.contains("search -1 1\n"), "{mode}: {result}");
        assert!(result.contains("read -1"), "{mode}: {result}");
    }
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_keyctl, 21, key) };
}

/// What the model's bash runs to type a line into corecoder's own terminal.
const TYPIST: &str = "import fcntl
tty = open('/dev/tty', 'wb', buffering=0)
try:
    for b in b'INJECTED-PROMPT\\r':
        fcntl.ioctl(tty, 0x5412, bytes([b]))
    print('typed')
except OSError as e:
    print('refused', e.errno)
";

/// The attack `TIOCSTI` makes possible, end to end: in the REPL, a sandboxed bash types a line
/// into corecoder's own terminal, which the REPL would read as the user's next prompt (or as
/// "y" to its next question). Refused, so no turn starts that the user did not type.
#[test]
fn a_sandboxed_bash_cannot_type_into_the_repl() {
    let test = "walls_calls::a_sandboxed_bash_cannot_type_into_the_repl";
    if !landlock_available(test) {
        return;
    }
    if Command::new("python3").arg("-V").output().is_err() {
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: no python3 here");
        return;
    }
    let sandbox = crate::run::Sandbox::new("walls_type_into_repl");
    sandbox.write("typist.py", TYPIST);
    let call = json!({"command": "python3 typist.py"});
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("call_0", "bash", call)])),
        Reply::Sse(sse::text("first turn done")),
        Reply::Sse(sse::text("a turn nobody typed")),
    ];
    let mut repl = Repl::start(&sandbox, &["--yes", "--sandbox", "read-only"], script);
    repl.turn("go", "first turn done");
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let requests = repl.server.requests();
    let sent = format!(
        "{:?}",
        requests.iter().map(|r| r.messages()).collect::<Vec<_>>()
    );
    assert!(!sent.contains("INJECTED-PROMPT"), "{}", repl.pty.screen());
    assert_eq!(requests.len(), 2, "{}", repl.pty.screen());
    assert!(
        requests[1].last_tool_result().contains("refused 1"),
        "{sent}"
    );
}
