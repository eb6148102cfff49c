//! STUB
fn main() {}
