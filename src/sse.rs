//! STUB (replaced by the real reader on merge)
use std::io::BufRead;
use std::sync::atomic::AtomicBool;
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
}
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamedCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<StreamedCall>,
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
}
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Delta<'a> {
    Text(&'a str),
    Reasoning(&'a str),
}
#[derive(Debug)]
pub enum StreamError {
    Io(std::io::Error),
    Ended,
    Provider(String),
    Interrupted,
}
impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}
pub fn read_stream(
    _r: &mut dyn BufRead,
    _c: &AtomicBool,
    _d: &mut dyn FnMut(Delta),
) -> Result<Reply, StreamError> {
    Err(StreamError::Ended)
}
