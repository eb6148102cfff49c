//! A todo list as the `todo_write` tool validates it, the loop stores it and the system prompt
//! shows it: the item type and its one-line-per-task rendering. It does not check the list.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub(crate) struct Todo {
    pub(crate) content: String,
    pub(crate) status: Status,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    Pending,
    InProgress,
    // Many models were trained on tools that call this "completed".
    #[serde(alias = "completed")]
    Done,
}

/// One line per task: `[x] done`, `[>] in progress`, `[ ] pending`.
pub(crate) fn render(todos: &[Todo]) -> String {
    let lines: Vec<String> = todos
        .iter()
        .map(|todo| {
            let mark = match todo.status {
                Status::Done => "[x]",
                Status::InProgress => "[>]",
                Status::Pending => "[ ]",
            };
            format!("{mark} {}", todo.content)
        })
        .collect();
    lines.join("\n")
}
