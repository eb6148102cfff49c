//! Extending the agent without touching the loop: sub-agent teams and project instructions.

use crate::run::{Sandbox, run};
use crate::server::{Reply, Server};
use crate::sse;
use serde_json::json;

/// A team of three workers: each worker's request carries only its own task, and the reports
/// come back to the model in the order the tasks were given, headed by their names.
#[test]
fn a_team_reports_in_input_order() {
    let sandbox = Sandbox::new("team");
    let tasks = json!({"tasks": [
        {"name": "alpha", "task": "count the apples"},
        {"name": "beta", "task": "count the bananas"},
        {"name": "gamma", "task": "count the cherries"},
    ]});
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("call_team", "agent", tasks)])),
        Reply::EchoLastUser,
        Reply::EchoLastUser,
        Reply::EchoLastUser,
        Reply::Sse(sse::text("all counted")),
    ];
    let server = Server::start(script);
    let out = run(&["-p", "count the fruit", "--yes"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    let worker_tasks: Vec<String> = requests[1..4]
        .iter()
        .map(|r| {
            r.messages()
                .last()
                .map(|m| m["content"].to_string())
                .unwrap_or_default()
        })
        .collect();
    for fruit in ["apples", "bananas", "cherries"] {
        assert_eq!(
            worker_tasks.iter().filter(|t| t.contains(fruit)).count(),
            1,
            "{worker_tasks:?}"
        );
    }
    let report = requests[4].last_tool_result();
    let order: Vec<usize> = [
        "## alpha\nreport: count the apples",
        "## beta\nreport: count the bananas",
        "## gamma\nreport: count the cherries",
    ]
    .iter()
    .map(|section| {
        report
            .find(section)
            .unwrap_or_else(|| panic!("{section:?} in {report}"))
    })
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{report}");
}

/// `AGENTS.md` from the repository root down to the working directory reaches the first
/// request's system prompt, under headings that name the files.
#[test]
fn agents_md_is_in_the_first_system_prompt() {
    let sandbox = Sandbox::new("agents_md");
    // The sandbox's home is the repository root here; the run starts in its `work` folder.
    let (repo, work) = (&sandbox.home, &sandbox.dir);
    std::fs::create_dir_all(repo.join(".git")).expect("git dir");
    std::fs::write(
        repo.join("AGENTS.md"),
        "Always run the tests with make check.",
    )
    .expect("write");
    std::fs::write(work.join("CLAUDE.md"), "This folder is frozen.").expect("write");
    let server = Server::start(vec![Reply::Sse(sse::text("ok"))]);
    let out = run(&["-p", "hi"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let system = server.requests()[0].messages()[0]["content"].to_string();
    assert!(
        system.contains("Always run the tests with make check."),
        "{system}"
    );
    assert!(system.contains("This folder is frozen."), "{system}");
    assert!(system.contains("AGENTS.md"), "{system}");
}

/// `--trace FILE` writes the raw protocol: each request, each stream line, each tool call, as
/// JSON lines, and never the key.
#[test]
fn trace_file_shows_the_raw_protocol() {
    let sandbox = Sandbox::new("trace");
    sandbox.write("notes.txt", "traced notes\n");
    let script = vec![
        Reply::Sse(sse::tool_calls(&[(
            "call_1",
            "read_file",
            json!({"file_path": "notes.txt"}),
        )])),
        Reply::Sse(sse::text("done")),
    ];
    let server = Server::start(script);
    let trace = sandbox.path("trace.jsonl");
    let trace_arg = trace.to_string_lossy().to_string();
    let out = run(&["-p", "read", "--trace", &trace_arg], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let text = std::fs::read_to_string(&trace).expect("trace written");
    assert!(!text.contains("sk-test"), "the key leaked into the trace");
    let lines: Vec<serde_json::Value> = (text.lines())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["kind"].as_str()).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "request").count(),
        2,
        "{kinds:?}"
    );
    assert!(kinds.contains(&"sse"), "{kinds:?}");
    assert!(
        !kinds.contains(&"repair"),
        "nothing needed repair: {kinds:?}"
    );
    let tool = lines
        .iter()
        .find(|l| l["kind"] == "tool")
        .expect("a tool line");
    assert_eq!(tool["name"], "read_file");
    assert!(
        tool["result"]
            .as_str()
            .unwrap_or("")
            .contains("traced notes"),
        "{tool}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["line"].as_str().is_some_and(|s| s.contains("[DONE]")))
    );
}
