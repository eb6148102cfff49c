//! STUB: the `todo_write` tool (to be written).

use super::{Outcome, ToolContext};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize)]
pub struct Args {}

pub fn schema() -> Value {
    json!({"type": "function", "function": {"name": "todo_write", "description": "", "parameters": {"type": "object", "properties": {}}}})
}

pub fn run(_args: Args, _ctx: &ToolContext) -> Result<Outcome, String> {
    Err("not yet written".into())
}

#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
pub struct Todo {
    pub content: String,
    pub status: Status,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    InProgress,
    Done,
}

pub fn render(todos: &[Todo]) -> String {
    let line = |t: &Todo| format!("{:?} {}", t.status, t.content);
    todos.iter().map(line).collect::<Vec<_>>().join("\n")
}
