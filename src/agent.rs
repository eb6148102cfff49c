//! STUB
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission { RefuseMutating, AllowAll }
pub struct Agent;
