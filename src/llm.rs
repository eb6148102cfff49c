//! STUB
pub struct Llm;
