//! What a sandboxed bash could reach beyond the file system, and corecoder's part in closing
//! it: the environment variables that name a way out to a process outside the sandbox (dropped
//! by `ShellSafety::hides_from_shell` when bash starts), the descriptors corecoder inherited
//! (closed at bash's `exec`, `close_inherited_on_exec`, in the forked child), and what this
//! kernel cannot wall off (`kernel_gaps`, a note at start-up).
//!
//! It does not build the walls: the kernel holds them (`seccomp.rs` refuses `AF_UNIX` sockets
//! and `io_uring`, `landlock.rs` scopes signals and abstract sockets). Without `TMUX`, tmux still
//! finds `/tmp/tmux-UID/default`, so dropping the names is not what holds: it keeps tools from
//! trying, and the model from reading where to go. TCP is not walled (SECURITY.md, "What it may
//! reach"): `DISPLAY=host:0` or `DOCKER_HOST=tcp://…` are dropped, the port is not closed.

use super::landlock;

/// Terminal multiplexers and terminals with a control socket; editors' servers (which open and
/// run files); buses, daemons and agents; displays, sound and window managers.
const SOCKET_VARIABLES: &str = "\
    TMUX TMUX_PANE TMUX_TMPDIR STY WINDOW SCREENDIR ZELLIJ ZELLIJ_SESSION_NAME KITTY_LISTEN_ON \
    WEZTERM_UNIX_SOCKET \
    NVIM NVIM_LISTEN_ADDRESS EMACS_SOCKET_NAME VSCODE_IPC_HOOK_CLI VSCODE_GIT_IPC_HANDLE \
    DBUS_SESSION_BUS_ADDRESS DBUS_SYSTEM_BUS_ADDRESS DOCKER_HOST CONTAINER_HOST SSH_AUTH_SOCK \
    SSH_AGENT_PID GPG_AGENT_INFO GNOME_KEYRING_CONTROL NOTIFY_SOCKET LISTEN_FDS LISTEN_PID \
    LISTEN_FDNAMES \
    XDG_RUNTIME_DIR DISPLAY XAUTHORITY WAYLAND_DISPLAY WAYLAND_SOCKET PULSE_SERVER \
    PIPEWIRE_REMOTE SWAYSOCK I3SOCK HYPRLAND_INSTANCE_SIGNATURE";

/// Does this variable name a socket, an agent, a display or a server outside the sandbox?
pub(crate) fn names_a_way_out(name: &str) -> bool {
    SOCKET_VARIABLES
        .split_whitespace()
        .any(|listed| listed == name)
}

/// At start-up, for the notes of a sandboxed session: what this kernel cannot wall off.
pub(crate) fn kernel_gaps() -> Option<String> {
    landlock::gaps()
}

/// In the forked child, before `exec`: every descriptor past stdin, stdout and stderr closes
/// at `exec`. One corecoder was started with (a socket from the terminal, systemd's
/// `LISTEN_FDS`, a `WAYLAND_SOCKET`) would otherwise stay open in bash, a connection already
/// made to a process outside. Marked rather than closed: std's own pipe, which reports a failed
/// `exec` to the parent, must live until the `exec`. `close_range` is Linux 5.11+, older than
/// Landlock; a kernel without it stops the shell rather than leak.
#[cfg(target_os = "linux")]
pub(crate) fn close_inherited_on_exec() -> std::io::Result<()> {
    // SAFETY: three integers; the kernel reads no memory of ours.
    let done = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
    match done {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn close_inherited_on_exec() -> std::io::Result<()> {
    Ok(())
}

/// `linux/close_range.h`; libc may not name it.
#[cfg(target_os = "linux")]
const CLOSE_RANGE_CLOEXEC: u32 = 1 << 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_variables_are_named_exactly() {
        for name in [
            "TMUX",
            "SSH_AUTH_SOCK",
            "DISPLAY",
            "XDG_RUNTIME_DIR",
            "LISTEN_FDNAMES",
        ] {
            assert!(names_a_way_out(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "tmux",
            "TMUX_",
            "TERM",
            "SSH_CONNECTION",
            "",
        ] {
            assert!(!names_a_way_out(name), "{name}");
        }
        // This machine's kernel (6.18, ABI 7) has every wall; older ones say what is missing.
        // (`landlock.rs` tests the note of an older kernel's gap.)
        if landlock::present() {
            assert_eq!(kernel_gaps(), None);
        }
    }
}
