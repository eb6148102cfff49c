//! The `todo_write` tool: the model's own task list for a long job.
//!
//! Runs when the model calls it (no consent needed: it touches no files). Each call replaces the
//! whole list; the tool only validates and renders it, and hands the list back as
//! `Effect::SetTodos` so the loop stores it and `render` can show it in the system prompt.
//! It does not merge with the previous list or track time.

use crate::core::message::{Effect, Outcome};
use crate::tools::ToolContext;
use crate::tools::support::todos::{Todo, render};
use serde::Deserialize;

/// What the model is told about this tool (plain data, with the other tools' schemas).
pub(crate) use crate::tools::schemas::todo_write as schema;

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    pub(crate) tasks: Vec<Todo>,
}

pub fn run(args: Args, _ctx: &ToolContext) -> Result<Outcome, String> {
    if let Some(i) = args.tasks.iter().position(|t| t.content.trim().is_empty()) {
        return Err(format!(
            "task {} has empty content; every task needs a description",
            i + 1
        ));
    }
    let text = if args.tasks.is_empty() {
        "Todo list cleared".to_string()
    } else {
        render(&args.tasks)
    };
    Ok(Outcome {
        text,
        effect: Effect::SetTodos(args.tasks),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::support::todos::Status;
    use crate::tools::test_support::test_context;
    use serde_json::{Value, json};
    use std::path::Path;

    fn call(tasks: Value) -> Result<Outcome, String> {
        let args: Args =
            serde_json::from_value(json!({ "tasks": tasks })).map_err(|e| e.to_string())?;
        run(args, &test_context(Path::new("/")))
    }

    #[test]
    fn renders_and_sets_the_list() {
        let outcome = call(json!([
            {"content": "read code", "status": "done"},
            {"content": "write fix", "status": "in_progress"},
            {"content": "run tests", "status": "pending"},
            {"content": "commit", "status": "completed"}
        ]))
        .unwrap();
        assert_eq!(
            outcome.text,
            "[x] read code\n[>] write fix\n[ ] run tests\n[x] commit"
        );
        let Effect::SetTodos(list) = outcome.effect else {
            panic!("no SetTodos")
        };
        assert_eq!(list.len(), 4);
        assert_eq!(list[1].status, Status::InProgress);
    }

    #[test]
    fn empty_list_clears() {
        let outcome = call(json!([])).unwrap();
        assert_eq!(outcome.text, "Todo list cleared");
        assert_eq!(outcome.effect, Effect::SetTodos(Vec::new()));
    }

    #[test]
    fn invalid_entries_are_rejected() {
        let err = call(
            json!([{"content": "ok", "status": "pending"}, {"content": " ", "status": "done"}]),
        );
        assert!(err.unwrap_err().starts_with("task 2 has empty content"));
        assert!(call(json!([{"content": "x", "status": "later"}])).is_err());
    }

    #[test]
    fn every_property_of_its_schema_is_a_field_of_its_args() {
        crate::tools::test_support::check_schema_fits::<Args>(&schema());
    }
}
