//! Landlock where there is none (every system but Linux): `Sandbox::check_supported` refuses
//! every mode but `off`, so these stand-ins are never asked to confine anything.

use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::path::PathBuf;

pub fn abi() -> Option<u32> {
    None
}

pub fn gaps(_abi: u32) -> Option<String> {
    None
}

pub fn ruleset(_abi: u32, _writable: &[PathBuf]) -> Result<OwnedFd, String> {
    Err("Landlock exists only on Linux".to_string())
}

pub fn restrict_self(_ruleset: RawFd) -> io::Result<()> {
    Ok(())
}
