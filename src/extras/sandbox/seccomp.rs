//! A seccomp filter for `--sandbox read-only`: the metadata changes Landlock cannot see
//! (`chmod`, `chown`, `utimes`, `setxattr` and their relatives) fail with `EPERM`.
//!
//! `sandbox.rs` builds the filter in the parent (`read_only_filter`, which allocates) and the
//! forked child installs it after entering Landlock (`install`). A seccomp filter sees a
//! syscall's number and raw arguments, never the path behind a pointer, so it cannot tell
//! "inside the roots" from "outside". In read-only mode no metadata change is wanted anywhere,
//! so refusing them all is sound. In workspace-write mode it would also refuse `touch`,
//! `chmod +x` and `git checkout` inside the workspace, so it is not used there: that gap is
//! stated in the banner, the README and SECURITY.md.
//!
//! Only x86_64 and aarch64 are described here; elsewhere `read_only_filter` returns `None`
//! and read-only mode has Landlock alone (SECURITY.md says so).

use std::io;

/// One BPF instruction, `struct sock_filter`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instruction {
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
// compare it with a constant, return.
const LOAD_WORD: u16 = 0x20; // BPF_LD (0) | BPF_W (0) | BPF_ABS (0x20)
const JUMP_IF_EQUAL: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const JUMP_IF_AT_LEAST: u16 = 0x05 | 0x30; // BPF_JMP | BPF_JGE | BPF_K
const RETURN: u16 = 0x06; // BPF_RET | BPF_K
/// Offsets in `struct seccomp_data`: the syscall number, then the calling convention.
const NUMBER_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;
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

/// The syscalls read-only mode refuses. `io_uring` is among them because it can set
/// extended attributes without any of the calls above.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn refused() -> Vec<i64> {
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
        libc::SYS_io_uring_setup,
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

/// The filter: calls of another calling convention (32-bit `int 0x80`, x32), which have other
/// numbers, are refused whole; then each refused number; everything else is allowed.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub fn read_only_filter() -> Option<Vec<Instruction>> {
    let numbers = refused();
    let n = numbers.len() as u8;
    let step = |code, k, jump_if_true| Instruction {
        code,
        jump_if_true,
        jump_if_false: 0,
        k,
    };
    // Laid out as: arch check, number checks, ALLOW, REFUSE. A jump counts the
    // instructions it skips, so "to REFUSE" from position p is (REFUSE's position - p - 1).
    let mut program = vec![
        step(LOAD_WORD, ARCH_OFFSET, 0),
        Instruction {
            jump_if_false: n + 3, // not our convention: past the number checks and ALLOW
            ..step(JUMP_IF_EQUAL, ARCH, 0)
        },
        step(LOAD_WORD, NUMBER_OFFSET, 0),
        // x32 numbers have bit 30 set (aarch64 has no such range; the check costs nothing).
        step(JUMP_IF_AT_LEAST, 0x4000_0000, n + 1),
    ];
    for (i, number) in numbers.iter().enumerate() {
        program.push(step(JUMP_IF_EQUAL, *number as u32, n - i as u8));
    }
    program.push(step(RETURN, ALLOW, 0));
    program.push(step(RETURN, REFUSE, 0));
    Some(program)
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
pub fn read_only_filter() -> Option<Vec<Instruction>> {
    None
}

/// In the forked child: install `filter` for good. Needs `PR_SET_NO_NEW_PRIVS`, which
/// entering Landlock has already set. One syscall, no allocation.
#[cfg(target_os = "linux")]
pub fn install(filter: &[Instruction]) -> io::Result<()> {
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
pub fn install(_filter: &[Instruction]) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn every_jump_lands_on_a_return() {
        let program = read_only_filter().expect("a filter");
        let returns = [program.len() - 2, program.len() - 1];
        for (at, step) in program.iter().enumerate() {
            if step.code == JUMP_IF_EQUAL || step.code == JUMP_IF_AT_LEAST {
                let taken = at + 1 + step.jump_if_true as usize;
                let not_taken = at + 1 + step.jump_if_false as usize;
                for target in [taken, not_taken] {
                    let ok = target < program.len();
                    assert!(ok, "jump from {at} past the end");
                }
                // A number check that matches refuses; the arch check goes on when it matches.
                if at > 1 {
                    assert_eq!(taken, returns[1], "jump from {at}");
                } else {
                    assert_eq!(not_taken, returns[1], "arch jump");
                }
            }
        }
        assert_eq!(program[returns[0]].k, ALLOW);
        assert_eq!(program[returns[1]].k, REFUSE);
    }
}
