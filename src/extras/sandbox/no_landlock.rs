//! Landlock where there is none (every system but Linux): `Sandbox::check_supported` refuses
//! every mode but `off`, so these stand-ins are never asked to confine anything.

use std::io;
use std::path::PathBuf;

/// Never built: `ruleset` always refuses.
pub(crate) struct Built;

impl Built {
    pub(crate) fn try_clone(&self) -> io::Result<Built> {
        Ok(Built)
    }
}

pub(crate) fn present() -> bool {
    false
}

pub(crate) fn gaps() -> Option<String> {
    None
}

pub(crate) fn ruleset(_writable: &[PathBuf]) -> Result<Built, String> {
    Err("Landlock exists only on Linux".to_string())
}

pub(crate) fn restrict_self(_ruleset: &Built) -> io::Result<()> {
    Ok(())
}
