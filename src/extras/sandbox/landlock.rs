//! Landlock, through the `landlock` crate its kernel authors maintain: the ruleset a bash
//! command enters, and the one `write_confined`'s writer thread enters.
//!
//! `sandbox.rs` builds the ruleset in the parent (`ruleset`, which allocates and opens the
//! writable roots) and the forked child enters it just before `exec` (`restrict_self`, which
//! allocates nothing). It handles only the rights that change the file system; reads,
//! execution, the network, device ioctls and metadata changes (`chmod`, `chown`, `utimes`,
//! `setxattr`, which Landlock cannot handle at all) are left alone.
//!
//! It also walls the shell off from processes outside it, where the kernel can: from ABI 6
//! (Linux 6.12) the domain is *scoped*, so a sandboxed process can signal only processes of
//! its own domain (its own tree) and connect only to abstract Unix sockets made inside it; from
//! ABI 9 (Linux 7.1) the same holds for pathname Unix sockets. The crate drops, best-effort,
//! what an older kernel lacks (`gaps` says so at start-up); the write rights of ABI 1 are a
//! hard requirement, so a kernel without Landlock fails the build rather than confine nothing.
//! corecoder itself stays outside the domain, so it can still kill the shell's group.

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use std::io;
use std::path::{Path, PathBuf};

/// A built ruleset, not yet entered.
pub(crate) type Built = landlock::RulesetCreated;

/// Every right that changes the file system, from the ABI that brought it: ABI 1's, `Refer`
/// (2: linking or renaming into another directory), `Truncate` (3) and `ResolveUnix` (9:
/// connecting to a pathname Unix socket). Not ABI 5's `IoctlDev`: device ioctls are left alone.
fn write_rights() -> BitFlags<AccessFs> {
    AccessFs::from_write(ABI::V3) | AccessFs::ResolveUnix
}

/// The builder every ruleset starts from: ABI 1's write rights or an error, then each newer
/// right and scope where the kernel has it.
fn handling() -> Result<Ruleset, landlock::RulesetError> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_write(ABI::V1))?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(write_rights())?
        .scope(Scope::from_all(ABI::V6))
}

/// Does this kernel offer Landlock (ABI 1's write rights)?
pub(crate) fn present() -> bool {
    handling().and_then(|ruleset| ruleset.create()).is_ok()
}

/// Said at start-up when the kernel cannot scope (before ABI 6).
const SCOPE_GAP: &str = "this kernel's Landlock (before Linux 6.12) cannot scope signals or \
    abstract Unix sockets: sandboxed bash can still signal your other processes";

/// What this kernel cannot wall off that a newer one would, for the start-up note; `None` when
/// nothing is missing (or there is no Landlock at all, which `present` reports).
pub(crate) fn gaps() -> Option<String> {
    let scoped = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .scope(Scope::from_all(ABI::V6))
        .and_then(|ruleset| ruleset.create());
    (present() && scoped.is_err()).then(|| SCOPE_GAP.to_string())
}

/// The device files bash may write (those that exist): the sinks and sources every tool uses,
/// the terminal, and new pseudo-terminals (`/dev/pts` holds your other terminals too; what is
/// written there reaches their screens, not their input: seccomp refuses `TIOCSTI`). Not the
/// rest of `/dev`: disks and memory (root could write them), `/dev/shm` (other processes'
/// shared memory), `/dev/mqueue`.
const DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// A ruleset that handles every write right and scope this kernel knows, allowing the writes
/// beneath `writable` and plain writes to `DEVICES` (so `> /dev/null` works).
pub(crate) fn ruleset(writable: &[PathBuf]) -> Result<Built, String> {
    let failed = |e: landlock::RulesetError| format!("could not build the Landlock ruleset: {e}");
    let mut ruleset = handling().and_then(|r| r.create()).map_err(failed)?;
    for device in DEVICES.iter().map(Path::new).filter(|d| d.exists()) {
        ruleset = allow(ruleset, device, AccessFs::WriteFile.into())?;
    }
    // Sockets are granted nowhere, not even beneath the roots: the temp directory holds
    // tmux's, ssh-agent's and X11's. Only those made inside the domain may be reached.
    for dir in writable {
        ruleset = allow(ruleset, dir, write_rights() & !AccessFs::ResolveUnix)?;
    }
    Ok(ruleset)
}

/// Allow `access` beneath `dir`, which is opened only for as long as the rule takes.
fn allow(ruleset: Built, dir: &Path, access: BitFlags<AccessFs>) -> Result<Built, String> {
    let opened = PathFd::new(dir).map_err(|e| format!("sandbox: {e}"))?;
    (ruleset.add_rule(PathBeneath::new(opened, access)))
        .map_err(|e| format!("sandbox: cannot allow writes in {}: {e}", dir.display()))
}

/// Enter `ruleset` (and `PR_SET_NO_NEW_PRIVS`, which Landlock requires of an unprivileged
/// process: no exec may gain privileges). Binds the calling thread and what it starts. Runs
/// between fork and exec, so it allocates nothing: the crate's `restrict_self` consumes a
/// ruleset, so it gets a `dup` (one `fcntl`), and an error is the kernel's `errno`.
pub(crate) fn restrict_self(ruleset: &Built) -> io::Result<()> {
    match ruleset.try_clone()?.restrict_self() {
        Ok(status) if status.ruleset != RulesetStatus::NotEnforced => Ok(()),
        Ok(_) => Err(io::Error::from_raw_os_error(libc::ENOSYS)),
        Err(_) => Err(io::Error::last_os_error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rights_are_ours_and_no_device_ioctls() {
        let rights = write_rights();
        assert!(rights.contains(AccessFs::from_write(ABI::V1)));
        assert!(rights.contains(AccessFs::Refer | AccessFs::Truncate | AccessFs::ResolveUnix));
        assert!(!rights.contains(AccessFs::IoctlDev));
        assert!(!rights.intersects(AccessFs::from_read(ABI::V9)));
        assert!(SCOPE_GAP.contains("signal"));
    }

    #[test]
    fn this_kernels_ruleset_is_taken_with_every_scope() {
        // This machine's kernel (6.18, ABI 7) has Landlock and its scopes.
        if present() {
            assert!(ruleset(&[]).is_ok());
            assert_eq!(gaps(), None);
        }
    }
}
