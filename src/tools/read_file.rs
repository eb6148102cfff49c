//! STUB: the `read_file` tool (to be written).

use super::{Outcome, ToolContext};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize)]
pub struct Args {}

pub fn schema() -> Value {
    json!({"type": "function", "function": {"name": "read_file", "description": "", "parameters": {"type": "object", "properties": {}}}})
}

pub fn run(_args: Args, _ctx: &ToolContext) -> Result<Outcome, String> {
    Err("not yet written".into())
}
