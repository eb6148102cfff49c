//! Secrets out of every child's reach: which variables count as secret, and hiding them (and
//! the API key) from corecoder's own `/proc` files.
//!
//! `looks_secret` is the filter `ShellSafety::hides` applies to bash's environment.
//! `hide_from_children` runs once, at the top of `main`, after the command line is parsed and
//! before any thread or child exists. It does four things, each closing one way a child (bash,
//! a hook, an MCP server, a sub-agent's bash) could read a secret out of its parent:
//!
//! 1. Secret variables leave our environment (`remove_var`), so no child inherits them. (A
//!    proxy URL with a password comes back as a heap copy for our own requests, and every
//!    spawn leaves it out: `keep_from_child`.)
//! 2. Their bytes are overwritten where the kernel keeps the environment it gave us at `exec`,
//!    and the `--api-key` value (and any URL password) where it keeps our arguments:
//!    `/proc/PID/environ` and `/proc/PID/cmdline` read exactly that memory. `cmdline` is
//!    readable by everyone, and a root child still opens `environ` (`CAP_SYS_ADMIN`
//!    suffices), so this is what holds there.
//! 3. `PR_SET_DUMPABLE 0`: only a process with `CAP_SYS_PTRACE` may now read our memory
//!    (`/proc/PID/mem`, `process_vm_readv`), where the key must live to be sent. For a child
//!    that is not root, `environ` and `maps` close too.
//! 4. We give up `CAP_SYS_PTRACE` (when running as root), so no child has it either: as root,
//!    step 3 alone would not stop anything (tried: a root child read the key from our memory).
//!
//! Why overwrite in place rather than re-exec with a clean environment and the secrets on a
//! pipe: the result in `/proc` is the same, but a re-exec doubles start-up, changes the pid a
//! debugger follows, and needs a second way in to `main`. Overwriting is thirty lines, done
//! while we are the only thread, and leaves `main` a straight line.
//!
//! What it does not do: hide secrets from processes that are not our children (they could read
//! the user's files anyway), from a root child using kernel means (`bpf`, `/dev/mem`, modules)
//! or a privileged helper (`sudo`, `systemd-run`), or from a debugger the user attaches as
//! root. (`gdb -p` as the same ordinary user no longer attaches; starting corecoder under the
//! debugger still works.)

use std::ffi::OsString;

/// Does a variable with this name or value look like it holds a secret?
///
/// `CORECODER_ENV_ALLOW=NAME1,NAME2`: names, trimmed, empty ones dropped.
pub(crate) fn parse_env_allow(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(String::from)
        .collect()
}

/// Mostly by name, since a key's value looks like any other random string: conventions put
/// KEY, TOKEN, SECRET or PASSWORD in the names of the variables that hold them. Values are
/// judged only where they give themselves away: a URL carrying `user:password@`.
pub(crate) fn looks_secret(name: &str, value: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let inside = [
        "KEY",
        "SECRET",
        "TOKEN",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "WEBHOOK",
    ];
    let suffixes = ["PASS", "PWD", "AUTH", "DSN", "DATABASE_URL", "DB_URL"];
    let named = inside.iter().any(|word| upper.contains(word))
        || suffixes.iter().any(|end| {
            // `MYSQL_PWD` and `PWD` alone differ: the working directory is no secret.
            upper.strip_suffix(end).is_some_and(|rest| {
                rest.ends_with('_') || (rest.is_empty() && *end != "PWD" && *end != "AUTH")
            })
        });
    named || has_url_password(value) || is_webhook_url(value)
}

/// A URL with a password in it: `scheme://user:password@host`, or `redis://:password@host`.
fn has_url_password(value: &str) -> bool {
    value.match_indices("://").any(|(at, _)| {
        let rest = &value[at + 3..];
        let authority = rest.split(['/', '?', '#', ' ']).next().unwrap_or("");
        authority
            .rsplit_once('@')
            .is_some_and(|(user_info, _)| user_info.contains(':'))
    })
}

/// Slack, Discord and similar webhooks: whoever knows the URL may post as you.
fn is_webhook_url(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    lower.contains("://hooks.slack.com/") || lower.contains("/api/webhooks/")
}

/// Hide every variable `hidden` picks, and the secret arguments, from our children (the
/// four steps in the file's header). Call it while this is the only thread; notes what could
/// not be done, for the user to read.
pub(crate) fn hide_from_children(hidden: &dyn Fn(&str, &str) -> bool) -> Vec<String> {
    let mut notes = Vec::new();
    let secret: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, value)| hidden(&name.to_string_lossy(), &value.to_string_lossy()))
        .collect();
    for (name, _) in &secret {
        // SAFETY: the caller guarantees no other thread exists, so nothing reads the
        // environment while it changes.
        unsafe { std::env::remove_var(name) };
    }
    if let Err(e) = overwrite_exec_memory(hidden) {
        notes.push(format!("secrets may still show in /proc of corecoder: {e}"));
    }
    // A proxy with a password is one our own HTTP client must still find: back it goes, as a
    // copy on the heap (not in the memory `/proc/PID/environ` shows), kept from every child
    // by `keep_from_child`.
    for (name, value) in secret.iter().filter(|(name, _)| is_proxy_variable(name)) {
        // SAFETY: as above, no other thread exists.
        unsafe { std::env::set_var(name, value) };
    }
    close_memory_to_children();
    notes
}

/// The variables `ureq::Proxy::try_from_env` reads for corecoder's own requests.
fn is_proxy_variable(name: &std::ffi::OsStr) -> bool {
    let names = [
        "ALL_PROXY",
        "all_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
    ];
    names.iter().any(|proxy| name == *proxy)
}

/// For every child corecoder starts (bash, hooks, MCP servers): leave out the secret proxy
/// variables `hide_from_children` put back for our own HTTP client.
pub(crate) fn keep_from_child(command: &mut std::process::Command) {
    for (name, value) in std::env::vars_os() {
        if is_proxy_variable(&name)
            && looks_secret(&name.to_string_lossy(), &value.to_string_lossy())
        {
            command.env_remove(name);
        }
    }
}

/// Overwrite, in the memory `/proc/self/cmdline` and `/proc/self/environ` read, the value of
/// `--api-key` and every `NAME=VALUE` entry `hidden` picks. Where that memory is, the kernel
/// tells us in `/proc/self/stat` (fields 48 to 51).
#[cfg(target_os = "linux")]
fn overwrite_exec_memory(hidden: &dyn Fn(&str, &str) -> bool) -> Result<(), String> {
    let stat = std::fs::read_to_string("/proc/self/stat").map_err(|e| e.to_string())?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<usize> = (after_name.split_whitespace())
        .map(|field| field.parse().unwrap_or(0))
        .collect();
    let field = |n: usize| fields.get(n - 3).copied().unwrap_or(0);
    let regions = [(field(48), field(49)), (field(50), field(51))];
    for (index, (start, end)) in regions.into_iter().enumerate() {
        if start == 0 || end <= start {
            return Err("/proc/self/stat does not say where the arguments are".to_string());
        }
        // SAFETY: the kernel says these bytes are our arguments or environment, on our stack,
        // mapped and writable. Only raw pointers (argv, environ) point there, and no other
        // thread exists to read through them while we write.
        let bytes = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, end - start) };
        match index {
            0 => blank_secret_arguments(bytes),
            _ => blank_entries(bytes, hidden),
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn overwrite_exec_memory(_hidden: &dyn Fn(&str, &str) -> bool) -> Result<(), String> {
    Err("only Linux is handled".to_string())
}

/// In NUL-separated arguments: the value of `--api-key VALUE` and `--api-key=VALUE`, and what
/// follows `://` in an argument with a URL password (`--base-url https://u:p@host`), become
/// `*`s, so the argument count and the final NUL the kernel looks at stay as they were.
fn blank_secret_arguments(bytes: &mut [u8]) {
    let mut blank_next = false;
    let mut start = 0;
    while start < bytes.len() {
        let end = (bytes[start..].iter().position(|&b| b == 0)).map_or(bytes.len(), |n| start + n);
        let argument = &bytes[start..end];
        let url_at = argument.windows(3).position(|w| w == b"://");
        let value_from = match argument {
            _ if blank_next => Some(start),
            [
                b'-',
                b'-',
                b'a',
                b'p',
                b'i',
                b'-',
                b'k',
                b'e',
                b'y',
                b'=',
                ..,
            ] => Some(start + 10),
            _ if has_url_password(&String::from_utf8_lossy(argument)) => {
                url_at.map(|at| start + at + 3)
            }
            _ => None,
        };
        blank_next = argument == b"--api-key";
        if let Some(from) = value_from {
            bytes[from..end].fill(b'*');
        }
        start = end + 1;
    }
}

/// In NUL-separated `NAME=VALUE` entries: zero every entry `hidden` picks, name included.
fn blank_entries(bytes: &mut [u8], hidden: &dyn Fn(&str, &str) -> bool) {
    let mut start = 0;
    while start < bytes.len() {
        let end = (bytes[start..].iter().position(|&b| b == 0)).map_or(bytes.len(), |n| start + n);
        let entry = String::from_utf8_lossy(&bytes[start..end]);
        if let Some((name, value)) = entry.split_once('=')
            && hidden(name, value)
        {
            bytes[start..end].fill(0);
        }
        start = end + 1;
    }
}

/// Steps 3 and 4: become non-dumpable, then give up `CAP_SYS_PTRACE` for us and every child:
/// out of the bounding set (so no `exec`, not even of a setuid program, brings it back) and
/// out of our own sets. Without it a root child cannot get past `PR_SET_DUMPABLE 0`. Not being
/// root, there is nothing to give up.
#[cfg(target_os = "linux")]
fn close_memory_to_children() {
    const CAP_SYS_PTRACE: u32 = 19;
    const VERSION_3: u32 = 0x2008_0522;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Sets {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    // SAFETY: prctl with integer arguments touches no memory of ours.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0) };
    // SAFETY: integer arguments only. It fails (harmlessly) without CAP_SETPCAP.
    unsafe {
        libc::prctl(
            libc::PR_CAPBSET_DROP,
            CAP_SYS_PTRACE as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut sets = [Sets::default(); 2];
    // SAFETY: a version-3 header and the two-element array that version reads and writes.
    if unsafe { libc::syscall(libc::SYS_capget, &mut header, sets.as_mut_ptr()) } != 0 {
        return;
    }
    let bit = !(1u32 << CAP_SYS_PTRACE);
    sets[0].effective &= bit;
    sets[0].permitted &= bit;
    sets[0].inheritable &= bit;
    // SAFETY: as above; dropping a capability is always allowed.
    unsafe { libc::syscall(libc::SYS_capset, &header, sets.as_ptr()) };
}

#[cfg(not(target_os = "linux"))]
fn close_memory_to_children() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_and_values() {
        let table = [
            ("OPENAI_API_KEY", "x", true),
            ("AWS_SECRET_ACCESS_KEY", "x", true),
            ("GH_TOKEN", "x", true),
            ("PGPASSWORD", "x", true),
            ("FTP_PASSWD", "x", true),
            ("SMTP_PASS", "x", true),
            ("MYSQL_PWD", "x", true),
            ("NPM_CONFIG__AUTH", "x", true),
            ("GOOGLE_APPLICATION_CREDENTIALS", "/k.json", true),
            ("SENTRY_DSN", "https://abc@o1.ingest.sentry.io/1", true),
            ("DATABASE_URL", "postgres://localhost/db", true),
            ("ANALYTICS_DB_URL", "x", true),
            ("SLACK_WEBHOOK_URL", "x", true),
            ("NOTIFY", "https://hooks.slack.com/services/T/B/X", true),
            ("CHAT", "https://discord.com/api/webhooks/1/abc", true),
            ("MIRROR", "https://user:pass@example.com/x", true),
            ("CACHE", "redis://:pw@localhost:6379", true),
            ("PATH", "/usr/bin:/bin", false),
            ("PWD", "/home/u", false),
            ("OLDPWD", "/home/u", false),
            ("SSH_AUTH_SOCK", "/tmp/ssh", false),
            ("COMPASS", "x", false),
            ("PASSTHROUGH", "x", false),
            ("HOMEPAGE", "https://user@example.com/a:b", false),
            ("PROXY", "http://proxy:3128", false),
        ];
        for (name, value, secret) in table {
            assert_eq!(looks_secret(name, value), secret, "{name}={value}");
        }
    }

    #[test]
    fn secret_arguments_are_blanked_in_place() {
        let mut bytes = b"corecoder\0--api-key\0sk-1\0-p\0hi\0--api-key=sk-22\0".to_vec();
        blank_secret_arguments(&mut bytes);
        assert_eq!(
            bytes,
            b"corecoder\0--api-key\0****\0-p\0hi\0--api-key=*****\0".to_vec()
        );
        let mut bytes = b"cc\0--base-url\0http://u:p@h/v1\0--base-url=https://h/v1\0".to_vec();
        blank_secret_arguments(&mut bytes);
        let want = b"cc\0--base-url\0http://********\0--base-url=https://h/v1\0";
        assert_eq!(bytes, want.to_vec());
    }

    #[test]
    fn hidden_entries_are_zeroed_whole() {
        let mut bytes = b"PATH=/bin\0MY_TOKEN=t\0HOME=/h\0".to_vec();
        blank_entries(&mut bytes, &looks_secret);
        let zeroed = [&b"PATH=/bin\0"[..], &[0; 10], b"\0HOME=/h\0"].concat();
        assert_eq!(bytes, zeroed);
    }
}
