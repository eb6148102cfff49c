//! Landlock where there is none (every system but Linux): `Sandbox::check_supported` refuses
//! every mode but `off`, so these stand-ins are never asked to confine anything.

use std::io;
use std::path::PathBuf;

/// Never built: `ruleset` always refuses.
pub struct Built;

impl Built {
    pub fn try_clone(&self) -> io::Result<Built> {
        Ok(Built)
    }
}

pub fn present() -> bool {
    false
}

pub fn gaps() -> Option<String> {
    None
}

pub fn ruleset(_writable: &[PathBuf]) -> Result<Built, String> {
    Err("Landlock exists only on Linux".to_string())
}

pub fn restrict_self(_ruleset: &Built) -> io::Result<()> {
    Ok(())
}
