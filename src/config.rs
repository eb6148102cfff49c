//! STUB
pub struct Config;
