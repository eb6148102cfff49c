//! The seccomp filters of the two sandboxed modes: what Landlock cannot see, refused with `EPERM`.
//!
//! `sandbox.rs` builds a filter in the parent (`filter`, which allocates) and the forked child
//! installs it after entering Landlock (`install`). A filter sees a syscall's number and raw
//! arguments, never the path behind a pointer: what it refuses, it refuses everywhere.
//!
//! Both modes refuse the ways out to processes outside (SECURITY.md, "What it may reach"):
//! `socket(AF_UNIX, …)` (tmux, D-Bus, docker and ssh-agent sockets are reached by path, which
//! Landlock before ABI 9 does not check), a datagram `socketpair` (`connect`/`sendto` re-aim
//! it), `io_uring_setup` (a ring opens sockets and files around this filter), `TIOCSTI` and
//! `TIOCLINUX` (typing into a terminal), System V IPC, POSIX queues and keyrings (numbers and
//! names, no path). A stream `socketpair` stays: it links processes of the tree (`make -j`, node's stdio).
//! Read-only mode also refuses metadata changes: `chmod`, `chown`, `utimes`, `setxattr`,
//! `file_setattr` and the inode-flag ioctls (`chattr +a`, fs-verity, encryption policies).
//! Workspace-write cannot: `touch`, `chmod +x`, `git checkout` need them in the workspace.
//!
//! Only x86_64 and aarch64 are described here; elsewhere `filter` returns `None` and the
//! sandbox has Landlock alone (SECURITY.md says so). Not `seccompiler`: it cannot refuse x32.

use std::io;

/// One BPF instruction, `struct sock_filter`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Instruction {
    code: u16,
    jump_if_true: u8,
    jump_if_false: u8,
    k: u32,
}

/// `struct sock_fprog`: the program as the kernel takes it.
#[repr(C)]
struct Program {
    len: u16,
    filter: *const Instruction,
}

// The classic-BPF opcodes a filter needs: load a 32-bit word of `struct seccomp_data`,
// mask it, compare it with a constant, return.
const LOAD_WORD: u16 = 0x20; // BPF_LD (0) | BPF_W (0) | BPF_ABS (0x20)
const AND: u16 = 0x04 | 0x50; // BPF_ALU | BPF_AND | BPF_K
const JUMP_IF_EQUAL: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const JUMP_IF_AT_LEAST: u16 = 0x05 | 0x30; // BPF_JMP | BPF_JGE | BPF_K
const RETURN: u16 = 0x06; // BPF_RET | BPF_K
/// Offsets in `struct seccomp_data`: the syscall number, the calling convention, then the six
/// arguments, 8 bytes each. We compare an argument's low 32 bits (little-endian: its first
/// word): every argument checked here is an `int` or `unsigned int` the kernel truncates to.
const NUMBER_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;
const ARGS_OFFSET: u32 = 16;
const ALLOW: u32 = 0x7fff_0000;
const REFUSE: u32 = 0x0005_0000 | libc::EPERM as u32;

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

/// Numbers from Linux 6.6 and later, the same on every architecture; libc may not name them.
const FCHMODAT2: i64 = 452;
const SETXATTRAT: i64 = 463;
const REMOVEXATTRAT: i64 = 466;
/// Linux 6.17: sets a file's flags (append-only, immutable) by path, without an ioctl.
const FILE_SETATTR: i64 = 469;

/// `_IOW(type, nr, size)` and `_IOR` as `asm-generic/ioctl.h` spells them (x86_64 and aarch64).
const fn ioctl_number(direction: u32, kind: u8, nr: u8, size: u32) -> u32 {
    (direction << 30) | (size << 16) | ((kind as u32) << 8) | nr as u32
}
const WRITE: u32 = 1;
const READ: u32 = 2;
/// `FS_IOC_SETFLAGS` takes a `long` (8 bytes); the 32-bit `FS_IOC32_SETFLAGS` an `int`. Both
/// reach `chattr`'s code on a 64-bit kernel.
const FS_IOC_SETFLAGS: u32 = ioctl_number(WRITE, b'f', 2, 8);
const FS_IOC32_SETFLAGS: u32 = ioctl_number(WRITE, b'f', 2, 4);
/// `struct fsxattr` is 28 bytes everywhere, so this one has a single number.
const FS_IOC_FSSETXATTR: u32 = ioctl_number(WRITE, b'X', 32, 28);
const FS_IOC_ENABLE_VERITY: u32 = ioctl_number(WRITE, b'f', 133, 128);
const FS_IOC_SET_ENCRYPTION_POLICY: u32 = ioctl_number(READ, b'f', 19, 12);
/// Push a byte into a terminal's input queue, as if typed; select and paste on a console.
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;
const AF_UNIX: u32 = 1;
const SOCK_DGRAM: u32 = 2;
/// A Unix `SOCK_RAW` socket is made a datagram one (`unix_create`).
const SOCK_RAW: u32 = 3;
/// `SOCK_NONBLOCK` and `SOCK_CLOEXEC` ride in the type argument's upper bits.
const SOCK_TYPE_MASK: u32 = 0xf;

/// One thing a filter refuses: a whole syscall, or `Argument(call, arg, mask, values)`: the
/// syscall `call` when its argument number `arg`, masked with `mask`, is one of `values`.
enum Refusal {
    Call(i64),
    Argument(i64, u32, u32, Vec<u32>),
}

/// Whether a filter also refuses the metadata changes (read-only mode) or not (workspace-write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metadata {
    Refused,
    Allowed,
}

/// Where a jump goes, before the program's length (and so REFUSE's place) is known.
#[derive(Clone, Copy)]
enum Target {
    Next,
    Refuse,
    Skip(usize),
}

/// What a filter refuses, on the two architectures described here.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn refusals(metadata: Metadata) -> Vec<Refusal> {
    let mut ioctls = vec![TIOCSTI, TIOCLINUX];
    let datagrams = vec![SOCK_DGRAM, SOCK_RAW];
    let mut refused = vec![
        Refusal::Call(libc::SYS_io_uring_setup),
        Refusal::Argument(libc::SYS_socket, 0, u32::MAX, vec![AF_UNIX]),
        Refusal::Argument(libc::SYS_socketpair, 1, SOCK_TYPE_MASK, datagrams),
    ];
    // System V IPC objects are named by a number any process of yours may guess, so each use is
    // refused, not only `*get`; a POSIX queue's descriptor comes only from `mq_open`. Your
    // keyrings are shared by all your processes (Kerberos tickets, ecryptfs keys).
    let gets = [libc::SYS_shmget, libc::SYS_msgget, libc::SYS_semget];
    let uses = [libc::SYS_shmat, libc::SYS_msgsnd, libc::SYS_msgrcv];
    let ctls = [libc::SYS_shmctl, libc::SYS_msgctl, libc::SYS_semctl];
    let sems = [libc::SYS_semop, libc::SYS_semtimedop];
    let queues = [libc::SYS_mq_open, libc::SYS_mq_unlink];
    let keys = [libc::SYS_add_key, libc::SYS_request_key, libc::SYS_keyctl];
    let shared = gets
        .into_iter()
        .chain(uses)
        .chain(ctls)
        .chain(sems)
        .chain(queues);
    refused.extend(shared.chain(keys).map(Refusal::Call));
    if metadata == Metadata::Refused {
        refused.extend(metadata_calls().into_iter().map(Refusal::Call));
        ioctls.extend([
            FS_IOC_SETFLAGS,
            FS_IOC32_SETFLAGS,
            FS_IOC_FSSETXATTR,
            FS_IOC_ENABLE_VERITY,
            FS_IOC_SET_ENCRYPTION_POLICY,
        ]);
    }
    refused.push(Refusal::Argument(libc::SYS_ioctl, 1, u32::MAX, ioctls));
    refused
}

/// The metadata changes read-only mode refuses, which Landlock cannot see.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn metadata_calls() -> Vec<i64> {
    let mut numbers = vec![
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        FCHMODAT2,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_utimensat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        SETXATTRAT,
        REMOVEXATTRAT,
        FILE_SETATTR,
    ];
    #[cfg(target_arch = "x86_64")]
    numbers.extend([
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
    ]);
    numbers
}

/// The filter of a sandboxed mode. Calls of another calling convention (32-bit `int 0x80`,
/// x32), which have other numbers, are refused whole; then each refusal; the rest is allowed.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub(crate) fn filter(metadata: Metadata) -> Option<Vec<Instruction>> {
    let step = |code, k, if_true, if_false| (code, k, if_true, if_false);
    let mut steps = vec![
        step(LOAD_WORD, ARCH_OFFSET, Target::Next, Target::Next),
        step(JUMP_IF_EQUAL, ARCH, Target::Next, Target::Refuse),
        step(LOAD_WORD, NUMBER_OFFSET, Target::Next, Target::Next),
        // x32 numbers have bit 30 set (aarch64 has no such range; the check costs nothing).
        step(JUMP_IF_AT_LEAST, 0x4000_0000, Target::Refuse, Target::Next),
    ];
    for refusal in refusals(metadata) {
        match refusal {
            Refusal::Call(number) => {
                steps.push(step(
                    JUMP_IF_EQUAL,
                    number as u32,
                    Target::Refuse,
                    Target::Next,
                ));
            }
            Refusal::Argument(call, arg, mask, values) => {
                // Not this call: skip its argument checks (load, mask, one per value), then
                // reload the number the load clobbered for the refusals after it.
                let rest = 2 + values.len();
                steps.push(step(
                    JUMP_IF_EQUAL,
                    call as u32,
                    Target::Next,
                    Target::Skip(rest),
                ));
                steps.push(step(
                    LOAD_WORD,
                    ARGS_OFFSET + 8 * arg,
                    Target::Next,
                    Target::Next,
                ));
                steps.push(step(AND, mask, Target::Next, Target::Next));
                for value in values {
                    steps.push(step(JUMP_IF_EQUAL, value, Target::Refuse, Target::Next));
                }
                steps.push(step(LOAD_WORD, NUMBER_OFFSET, Target::Next, Target::Next));
            }
        }
    }
    steps.push(step(RETURN, ALLOW, Target::Next, Target::Next));
    steps.push(step(RETURN, REFUSE, Target::Next, Target::Next));
    Some(resolve(&steps))
}

/// Turn targets into the jump lengths BPF counts: instructions skipped, at most 255.
fn resolve(steps: &[(u16, u32, Target, Target)]) -> Vec<Instruction> {
    let refuse = steps.len() - 1;
    let jump = |at: usize, target| match target {
        Target::Next => 0,
        Target::Refuse => u8::try_from(refuse - at - 1).expect("a filter under 256 steps"),
        Target::Skip(n) => n as u8,
    };
    (steps.iter().enumerate())
        .map(|(at, &(code, k, if_true, if_false))| Instruction {
            code,
            jump_if_true: jump(at, if_true),
            jump_if_false: jump(at, if_false),
            k,
        })
        .collect()
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
pub(crate) fn filter(_metadata: Metadata) -> Option<Vec<Instruction>> {
    None
}

/// In the forked child: install `filter` for good. Needs `PR_SET_NO_NEW_PRIVS`, which
/// entering Landlock has already set. One syscall, no allocation.
#[cfg(target_os = "linux")]
pub(crate) fn install(filter: &[Instruction]) -> io::Result<()> {
    let program = Program {
        len: filter.len() as u16,
        filter: filter.as_ptr(),
    };
    // SAFETY: `program` points at `filter`, alive for the call; the kernel copies it.
    let done = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &program as *const Program,
        )
    };
    match done {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Elsewhere there is no filter to install (and no sandbox mode starts: no Landlock).
#[cfg(not(target_os = "linux"))]
pub(crate) fn install(_filter: &[Instruction]) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    // The filter is described for x86_64 and aarch64 only, so are its tests.
    use super::*;

    const MODES: [Metadata; 2] = [Metadata::Refused, Metadata::Allowed];

    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn every_jump_lands_on_a_return() {
        for mode in MODES {
            let program = filter(mode).expect("a filter");
            let returns = [program.len() - 2, program.len() - 1];
            for (at, step) in program.iter().enumerate() {
                if step.code == JUMP_IF_EQUAL || step.code == JUMP_IF_AT_LEAST {
                    let taken = at + 1 + step.jump_if_true as usize;
                    let not_taken = at + 1 + step.jump_if_false as usize;
                    for target in [taken, not_taken] {
                        let ok = target < program.len();
                        assert!(ok, "jump from {at} past the end");
                    }
                    // A jump goes to the next step, to REFUSE, or (a call whose argument is
                    // not looked at) to the load after that call's argument checks.
                    let refuses = taken == returns[1] || not_taken == returns[1];
                    let loads = program[not_taken].code == LOAD_WORD;
                    assert!(refuses || loads, "jump from {at}");
                } else if step.code == RETURN {
                    assert!(returns.contains(&at), "a return at {at}");
                }
            }
            assert_eq!(program[returns[0]].k, ALLOW);
            assert_eq!(program[returns[1]].k, REFUSE);
        }
    }

    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    /// Run `program` as the kernel would on one call: classic BPF, the few opcodes we emit.
    fn verdict(program: &[Instruction], arch: u32, number: i64, args: [u64; 6]) -> u32 {
        let mut data = vec![number as u32, arch, 0, 0];
        data.extend(args.iter().flat_map(|&a| [a as u32, (a >> 32) as u32]));
        let (mut at, mut a) = (0, 0u32);
        loop {
            let step = program[at];
            at += 1;
            match step.code {
                LOAD_WORD => a = data[step.k as usize / 4],
                AND => a &= step.k,
                RETURN => return step.k,
                JUMP_IF_EQUAL | JUMP_IF_AT_LEAST => {
                    let hit = match step.code {
                        JUMP_IF_EQUAL => a == step.k,
                        _ => a >= step.k,
                    };
                    at += usize::from(if hit {
                        step.jump_if_true
                    } else {
                        step.jump_if_false
                    });
                }
                other => panic!("opcode {other:#x} at {}", at - 1),
            }
        }
    }

    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn each_mode_refuses_what_it_says_and_allows_the_rest() {
        let cloexec = libc::SOCK_CLOEXEC as u64;
        let unix = libc::AF_UNIX as u64;
        let (stream, dgram) = (libc::SOCK_STREAM as u64, libc::SOCK_DGRAM as u64);
        let both = [
            (
                "socket(AF_UNIX)",
                libc::SYS_socket,
                [unix, stream | cloexec, 0, 0, 0, 0],
                true,
            ),
            (
                "socket(AF_INET)",
                libc::SYS_socket,
                [2, stream, 0, 0, 0, 0],
                false,
            ),
            (
                "socket(AF_INET6)",
                libc::SYS_socket,
                [10, dgram, 0, 0, 0, 0],
                false,
            ),
            (
                "socketpair stream",
                libc::SYS_socketpair,
                [unix, stream | cloexec, 0, 0, 0, 0],
                false,
            ),
            (
                "socketpair dgram",
                libc::SYS_socketpair,
                [unix, dgram | cloexec, 0, 0, 0, 0],
                true,
            ),
            (
                "socketpair raw",
                libc::SYS_socketpair,
                [unix, 3, 0, 0, 0, 0],
                true,
            ),
            (
                "socketpair seqpacket",
                libc::SYS_socketpair,
                [unix, 5, 0, 0, 0, 0],
                false,
            ),
            (
                "io_uring_setup",
                libc::SYS_io_uring_setup,
                [8, 0, 0, 0, 0, 0],
                true,
            ),
            ("TIOCSTI", libc::SYS_ioctl, [0, 0x5412, 0, 0, 0, 0], true),
            // The kernel takes the command as an `unsigned int`: the upper half is no way round.
            (
                "TIOCSTI, upper bits set",
                libc::SYS_ioctl,
                [0, 0xffff_ffff_0000_5412, 0, 0, 0, 0],
                true,
            ),
            (
                "TIOCGWINSZ",
                libc::SYS_ioctl,
                [1, 0x5413, 0, 0, 0, 0],
                false,
            ),
            ("read", libc::SYS_read, [0, 0, 0, 0, 0, 0], false),
            ("connect", libc::SYS_connect, [3, 0, 0, 0, 0, 0], false),
            ("msgsnd", libc::SYS_msgsnd, [0; 6], true),
            ("shmat", libc::SYS_shmat, [0; 6], true),
            ("mq_open", libc::SYS_mq_open, [0; 6], true),
            ("keyctl", libc::SYS_keyctl, [0; 6], true),
        ];
        let read_only_only = [
            ("fchmodat", libc::SYS_fchmodat, [0; 6], true),
            ("file_setattr", FILE_SETATTR, [0; 6], true),
            (
                "FS_IOC_SETFLAGS",
                libc::SYS_ioctl,
                [3, 0x4008_6602, 0, 0, 0, 0],
                true,
            ),
            (
                "FS_IOC32_SETFLAGS",
                libc::SYS_ioctl,
                [3, 0x4004_6602, 0, 0, 0, 0],
                true,
            ),
            (
                "FS_IOC_FSSETXATTR",
                libc::SYS_ioctl,
                [3, 0x401c_5820, 0, 0, 0, 0],
                true,
            ),
        ];
        for mode in MODES {
            let program = filter(mode).expect("a filter");
            let refused = |number, args| verdict(&program, ARCH, number, args) == REFUSE;
            for (what, number, args, refuse) in both {
                assert_eq!(refused(number, args), refuse, "{mode:?}: {what}");
            }
            for (what, number, args, refuse) in read_only_only {
                let expected = refuse && mode == Metadata::Refused;
                assert_eq!(refused(number, args), expected, "{mode:?}: {what}");
            }
            // Another calling convention, and x32 numbers, are refused whole.
            assert_eq!(verdict(&program, 0x4000_0003, 0, [0; 6]), REFUSE);
            assert_eq!(verdict(&program, ARCH, 0x4000_0000, [0; 6]), REFUSE);
            let x32_unix_socket = [libc::AF_UNIX as u64, 1, 0, 0, 0, 0];
            let x32_socket = 0x4000_0000 | libc::SYS_socket;
            assert_eq!(verdict(&program, ARCH, x32_socket, x32_unix_socket), REFUSE);
        }
    }

    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn ioctl_numbers_are_the_kernels() {
        assert_eq!(FS_IOC_SETFLAGS, 0x4008_6602);
        assert_eq!(FS_IOC32_SETFLAGS, 0x4004_6602);
        assert_eq!(FS_IOC_FSSETXATTR, 0x401c_5820);
        assert_eq!(FS_IOC_ENABLE_VERITY, 0x4080_6685);
        assert_eq!(FS_IOC_SET_ENCRYPTION_POLICY, 0x800c_6613);
        assert_eq!(TIOCSTI, libc::TIOCSTI as u32);
    }
}
