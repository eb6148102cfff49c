//! What the binary does to its own process before anything else runs: glibc's malloc keeps one
//! arena, and secrets leave the environment and `/proc` before any thread or child exists.
//!
//! `main.rs` calls these first, while it is the only thread; the library never does (they are
//! process-wide, and an embedding program owns its own process). Why one arena is in
//! DESIGN.md ("One malloc arena"); what hiding secrets closes is in `extras/secrets.rs`.

use crate::app::flags::RunOptions;
use crate::extras::secrets;

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
