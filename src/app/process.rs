//! What the binary does to its own process: glibc's malloc keeps one arena, and secrets leave
//! the environment and `/proc`, before any thread or child exists; then Ctrl+C is caught.
//!
//! `main.rs` calls the first two while it is the only thread, and each face registers
//! `watch_ctrl_c` once its agent exists. The library never calls these (they are process-wide,
//! and an embedding program owns its process). Why one arena is in DESIGN.md ("One malloc
//! arena"); what hiding secrets closes is in `extras/secrets.rs`. Last, the exit code an error
//! ends the process with.

use crate::app::flags::RunOptions;
use crate::core::event::Error;
use crate::extras::secrets;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// One malloc arena for every thread, not one kept per pool worker (DESIGN.md, "One malloc
/// arena"). Call it first, before any thread exists.
pub fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: no other thread exists yet, and this only sets one of malloc's tunables.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// No child may read a secret variable or the API key out of our `/proc` files. Call it once
/// the flags are known and before any thread or child exists; returns what could not be done.
pub fn hide_secrets(options: &RunOptions) -> Vec<String> {
    let key = options.config.api_key.as_deref();
    let hidden = |name: &str, value: &str| options.shell.hides(name, value) || Some(value) == key;
    secrets::hide_from_children(&hidden)
}

/// The first Ctrl+C sets `flag`: the agent stops at the next safe point and the history stays
/// valid. A second one, while the first is still being handled, ends the process at once.
pub(crate) fn watch_ctrl_c(flag: Arc<AtomicBool>) -> Result<(), Error> {
    use signal_hook::consts::SIGINT;
    let failed = |e: std::io::Error| Error::Io(format!("cannot watch for Ctrl+C: {e}"));
    signal_hook::flag::register_conditional_shutdown(SIGINT, 130, flag.clone()).map_err(failed)?;
    signal_hook::flag::register(SIGINT, flag).map_err(failed)?;
    Ok(())
}

/// The process exit code for an error that ended the run (the `Error` variants say which).
pub fn exit_code(error: &Error) -> i32 {
    match error {
        Error::Usage(_) => 2,
        Error::Api(_) | Error::ContextTooLong(_) | Error::Refused(_) | Error::Io(_) => 1,
        Error::Stream(_) => 1,
        Error::Budget(_) => 4,
        Error::Looping(_) => 5,
        Error::Interrupted => 130,
    }
}
