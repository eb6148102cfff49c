//! The built-in tools, one file each: the leaves of a turn, which a reader may skim. The
//! dispatch `match` that calls them is `core/dispatch.rs`; what they share is in `support/`.

pub mod agent;
pub mod bash;
pub mod edit_file;
pub mod glob;
pub mod grep;
pub mod preview;
pub mod read_file;
pub mod support;
#[cfg(test)]
pub mod test_support;
pub mod todo_write;
pub mod write_file;
