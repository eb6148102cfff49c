//! Hostile peers, through the binary (issue 28, section 6): an MCP server that stops reading
//! its stdin, one that lists 60,000 tools, a provider that redirects to another host or
//! reports absurd token counts, a model asking for a 24-hour bash timeout, and two sessions
//! sharing one HOME that save trust, "always" rules and history at the same moment.
//!
//! Each test plays the attack against the real binary and checks it is held: the run ends in
//! time, the request stays small, the other host is never contacted, the figures stay sane,
//! nothing one session saved is lost to the other. The MCP servers are small Python scripts
//! the tests write into their sandbox.

use crate::driver::{Repl, WAIT};
use crate::run::{Output, Sandbox, finish, finish_measured, run, spawn_with};
use crate::server::{Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

/// Answers the handshake (one tool, `sink`), then never reads stdin again.
const DEAF_SERVER: &str = r#"
import json, sys, time
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
for _ in range(3):
    line = sys.stdin.readline()
    if not line:
        sys.exit()
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-06-18",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "deaf", "version": "1"}}})
    elif msg.get("method") == "tools/list":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [{"name": "sink",
              "description": "Takes text.", "inputSchema": {"type": "object",
              "properties": {"text": {"type": "string"}}}}]}})
time.sleep(120)
"#;

/// 60,000 tools in 60 pages of 1,000, each with a 1,000-byte description.
const CROWDED_SERVER: &str = r#"
import json, sys
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-06-18",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "crowd", "version": "1"}}})
    elif method == "tools/list":
        page = int((msg.get("params") or {}).get("cursor") or "0")
        tools = [{"name": "t%d" % (page * 1000 + i), "description": "d" * 1000,
                  "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}
                 for i in range(1000)]
        result = {"tools": tools}
        if page + 1 < 60:
            result["nextCursor"] = str(page + 1)
        send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
"#;

/// `script` as the user's MCP server `name`, with `extra` settings (such as `timeout`).
fn configure_script(sandbox: &Sandbox, name: &str, script: &str, extra: Value) {
    let file = sandbox.home.join(format!("{name}.py"));
    std::fs::write(&file, script).expect("write the server script");
    let mut entry = json!({"command": "python3", "args": [file.display().to_string()]});
    if let (Some(entry), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
        entry.extend(extra.clone());
    }
    let dir = sandbox.home.join(".corecoder");
    std::fs::create_dir_all(&dir).expect("create ~/.corecoder");
    let config = json!({"mcpServers": {name: entry}});
    std::fs::write(dir.join("mcp.json"), config.to_string()).expect("write mcp.json");
}

/// A call to the deaf server's `sink` with 1 MB of text: far more than a pipe holds.
fn sink_call() -> Reply {
    let text = "x".repeat(1 << 20);
    Reply::Sse(sse::tool_calls(&[(
        "call_1",
        "mcp__deaf__sink",
        json!({"text": text}),
    )]))
}

/// The write to a server that reads nothing is bounded by its timeout (2 s here): the call
/// answers an error, the server counts as broken (a second call is refused at once), and the
/// run goes on to the model's answer.
#[test]
fn a_server_that_stops_reading_fails_the_call_within_its_timeout() {
    let sandbox = Sandbox::new("peers_deaf_timeout");
    configure_script(&sandbox, "deaf", DEAF_SERVER, json!({"timeout": 2}));
    let again = json!({"text": "small"});
    let script = vec![
        sink_call(),
        Reply::Sse(sse::tool_calls(&[("call_2", "mcp__deaf__sink", again)])),
        Reply::Sse(sse::text("gave up on it")),
    ];
    let server = Server::start(script);
    let started = Instant::now();
    let out = run(&["-p", "use the sink", "--yes"], &server, &sandbox);
    let took = started.elapsed();
    assert_eq!(out.code, 0, "{out:?}");
    assert!(took < Duration::from_secs(20), "took {took:?}: {out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{out:?}");
    let result = requests[1].last_tool_result();
    assert!(
        result.starts_with("Error executing mcp__deaf__sink"),
        "{result}"
    );
    assert!(
        result.contains("did not read its input in time"),
        "{result}"
    );
    let again = requests[2].last_tool_result();
    assert!(again.contains("MCP server deaf is not running"), "{again}");
    assert!(out.stdout.contains("gave up on it"), "{out:?}");
}

/// With the default timeout (60 s), the first Ctrl+C ends the blocked call at once.
#[test]
fn ctrl_c_ends_a_call_blocked_on_a_server_that_stops_reading() {
    let sandbox = Sandbox::new("peers_deaf_ctrl_c");
    configure_script(&sandbox, "deaf", DEAF_SERVER, json!({}));
    let script = vec![sink_call(), Reply::Sse(sse::text("after the interrupt"))];
    interrupt_while(&sandbox, script, "use the sink", "mcp__deaf__sink");
}

/// A server that reads the call but answers slowly: the first Ctrl+C ends the wait too.
#[test]
fn ctrl_c_ends_the_wait_for_a_slow_answer() {
    let sandbox = Sandbox::new("peers_slow_ctrl_c");
    crate::mcp::configure_fixture(&sandbox, "good");
    let slow = json!({"text": "late", "ms": 30_000});
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "mcp__mis__slow", slow)])),
        Reply::Sse(sse::text("after the interrupt")),
    ];
    interrupt_while(&sandbox, script, "wait for it", "mcp__mis__slow");
}

/// Start a session that runs `task`, press Ctrl+C once `tool` is on screen: the prompt is
/// back within 5 s.
fn interrupt_while(sandbox: &Sandbox, script: Vec<Reply>, task: &str, tool: &str) {
    let mut repl = Repl::start(sandbox, &["--yes"], script);
    repl.enter(task);
    repl.expect(tool);
    thread::sleep(Duration::from_millis(500));
    repl.mark = repl.pty.screen().len();
    let pressed = Instant::now();
    repl.pty.send("\x03");
    repl.idle();
    let took = pressed.elapsed();
    assert!(took < Duration::from_secs(5), "back after {took:?}");
}

/// 60,000 tools (66 MB in 60 pages): the request offers at most the cap, a warning says how
/// many were dropped, and the process stays small (70 MB requests and 825 MB before; the
/// peak is the child's own, `run::finish_measured`).
#[test]
fn a_server_listing_sixty_thousand_tools_is_capped() {
    let sandbox = Sandbox::new("peers_crowded");
    configure_script(&sandbox, "crowd", CROWDED_SERVER, json!({}));
    let server = Server::start(vec![Reply::Sse(sse::text("hello"))]);
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
    ];
    let child = spawn_with(&["-p", "say hello"], &env, &sandbox);
    let (output, peak_kb) = finish_measured(child);
    let stderr = output.stderr;
    assert_eq!(output.code, 0, "{stderr}");
    let peak_mb = peak_kb / 1024;
    eprintln!("60,000 MCP tools: peak RSS {peak_mb} MB");
    assert!(peak_kb > 0, "no VmHWM was read");
    assert!(peak_mb < 150, "peak RSS {peak_mb} MB");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{stderr}");
    let size = requests[0].raw.len();
    assert!(size < 1 << 20, "a request of {size} bytes");
    let offered = requests[0].body["tools"].as_array().map_or(0, Vec::len);
    assert!(offered <= 128, "{offered} tools offered");
    assert!(
        stderr.contains("MCP server crowd: 100 tools offered, "),
        "{stderr}"
    );
    assert!(stderr.contains("dropped"), "{stderr}");
}

/// A 302 to another host (another loopback port here) is not followed: that host is never
/// contacted, and the error names the status and the `Location`.
#[test]
fn a_redirect_to_another_host_is_refused() {
    let sandbox = Sandbox::new("peers_redirect");
    let elsewhere = Server::start(vec![Reply::Sse(sse::text("answer from elsewhere"))]);
    let location = format!("{}/chat/completions", elsewhere.url());
    let moved = Reply::Status {
        code: 302,
        headers: vec![("Location".into(), location.clone())],
        body: String::new(),
    };
    let server = Server::start(vec![moved]);
    let out = run(&["-p", "hello"], &server, &sandbox);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(elsewhere.requests().is_empty(), "the other host was asked");
    assert!(!out.stdout.contains("answer from elsewhere"), "{out:?}");
    assert!(out.stderr.contains("302"), "{out:?}");
    assert!(out.stderr.contains(&location), "{out:?}");
}

/// A reply whose usage chunk carries `usage` as written (raw JSON, so any number fits).
fn answer_with_usage(usage: &str) -> Reply {
    let chunk = format!("data: {{\"choices\":[],\"usage\":{usage}}}\n\n");
    let body = sse::role() + &sse::content("counted") + &sse::finish("stop") + &chunk;
    Reply::Sse(body + &sse::done())
}

const ABSURD_USAGES: [&str; 3] = [
    r#"{"prompt_tokens":-5,"completion_tokens":7}"#,
    r#"{"prompt_tokens":1e30,"completion_tokens":7}"#,
    r#"{"prompt_tokens":18446744073709551615,"completion_tokens":18446744073709551615}"#,
];

/// Negative, huge and fractional counts are not believed: the totals stay sane, the cost is
/// not priced from them, and a notice says so.
#[test]
fn absurd_token_counts_are_clamped_and_said() {
    let sandbox = Sandbox::new("peers_usage_json");
    for usage in ABSURD_USAGES {
        let server = Server::start(vec![answer_with_usage(usage)]);
        let args = ["-p", "count", "-m", "gpt-4.1", "--output-format", "json"];
        let out = run(&args, &server, &sandbox);
        assert_eq!(out.code, 0, "{usage}: {out:?}");
        let result: Value = serde_json::from_str(out.stdout.trim()).expect("one JSON object");
        let input = result["usage"]["input_tokens"].as_u64().unwrap_or(u64::MAX);
        let output = result["usage"]["output_tokens"]
            .as_u64()
            .unwrap_or(u64::MAX);
        assert!(input < 1_000_000 && output < 1_000_000, "{usage}: {result}");
        let dollars = result["total_cost_usd"].as_f64().unwrap_or(f64::MAX);
        assert!((0.0..1.0).contains(&dollars), "{usage}: {result}");
        assert_eq!(result["usage"]["source"], "estimated", "{usage}: {result}");

        let server = Server::start(vec![answer_with_usage(usage)]);
        let args = [
            "-p",
            "count",
            "-m",
            "gpt-4.1",
            "--output-format",
            "stream-json",
        ];
        let out = run(&args, &server, &sandbox);
        let notice = out.stdout.lines().find(|line| line.contains("\"notice\""));
        let notice = notice.unwrap_or_default();
        assert!(notice.contains("token count"), "{usage}: {out:?}");
    }
}

/// `/tokens` in the REPL shows the clamped figures, never the absurd ones.
#[test]
fn absurd_token_counts_are_clamped_in_tokens() {
    let sandbox = Sandbox::new("peers_usage_repl");
    let script = vec![answer_with_usage(ABSURD_USAGES[2])];
    let mut repl = Repl::start(&sandbox, &["-m", "gpt-4.1"], script);
    repl.turn("count", "counted");
    repl.turn("/tokens", "tokens:");
    let screen = repl.pty.screen();
    let shown = &screen[screen.rfind("tokens:").unwrap()..];
    assert!(!shown.contains("18,446,744"), "{shown}");
    assert!(!shown.contains("-5"), "{shown}");
    assert!(shown.contains("without usable token counts"), "{shown}");
}

/// A 24-hour bash timeout is capped, and the result says so.
#[test]
fn a_day_long_bash_timeout_is_capped() {
    let sandbox = Sandbox::new("peers_bash_timeout");
    let call = json!({"command": "echo ran", "timeout": 86_400});
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "bash", call)])),
        Reply::Sse(sse::text("done")),
    ];
    let server = Server::start(script);
    let out = run(&["-p", "run it", "--yes"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let result = server.requests()[1].last_tool_result();
    assert!(result.starts_with("ran"), "{result}");
    assert!(result.contains("capped at 600 s"), "{result}");
    let schema = server.requests()[0].body["tools"].to_string();
    assert!(schema.contains("at most 600"), "{schema}");
}

/// Projects already in a shared store: about 500 KB, so that reading and writing it takes a
/// moment (as a long-used HOME's does), the window in which two sessions could overwrite each
/// other; and within the 1 MiB a settings file may hold.
const SEEDED: usize = 5_000;

/// A store already holding `count` entries.
fn seed(file: &Path, count: usize, entry: Value) {
    let projects: serde_json::Map<String, Value> = (0..count)
        .map(|i| (format!("/seeded/project-{i:05}"), entry.clone()))
        .collect();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, json!({"projects": projects}).to_string()).unwrap();
}

/// A second sandbox for the same HOME: its own working directory.
fn sibling(first: &Sandbox, name: &str) -> Sandbox {
    let mut other = Sandbox::new(name);
    other.home = first.home.clone();
    other
}

/// Two sessions trust a different project each at the same moment, 20 times: every project
/// (and every one trusted before) is still in `trusted.json`.
#[test]
fn concurrent_sessions_keep_every_trusted_project() {
    let home = Sandbox::new("peers_trust_home");
    let store = home.home.join(".corecoder/trusted.json");
    seed(
        &store,
        SEEDED,
        json!({"/seeded/x/.mcp.json": "0".repeat(64)}),
    );
    let mut projects = Vec::new();
    for round in 0..20 {
        let pair = ["a", "b"].map(|side| sibling(&home, &format!("peers_trust_{round}{side}")));
        for project in &pair {
            project.write(".corecoder/hooks.json", "{\"hooks\": {}}");
        }
        let server = Server::start(vec![
            Reply::Sse(sse::text("ok")),
            Reply::Sse(sse::text("ok")),
        ]);
        let env = [
            ("CORECODER_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &server.url()),
        ];
        let args = ["-p", "hi", "--trust-project"];
        let children = pair.each_ref().map(|p| spawn_with(&args, &env, p));
        let outs: Vec<Output> = children.into_iter().map(finish).collect();
        for out in &outs {
            assert_eq!(out.code, 0, "{out:?}");
        }
        projects.extend(pair.map(|p| p.dir.canonicalize().unwrap()));
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&store).unwrap()).unwrap();
        let saved = saved["projects"].as_object().cloned().unwrap_or_default();
        let lost: Vec<_> = (projects.iter())
            .filter(|p| !saved.contains_key(p.to_string_lossy().as_ref()))
            .collect();
        assert!(lost.is_empty(), "round {round}: lost {lost:?}");
        assert_eq!(saved.len(), SEEDED + projects.len(), "round {round}");
    }
}

/// Two REPLs in different projects answer "always" at the same moment, then quit at the same
/// moment, 10 times: every rule is in `project-rules.json` and every line in the history.
#[test]
fn concurrent_sessions_keep_every_always_rule_and_history_line() {
    let home = Sandbox::new("peers_always_home");
    let rules = home.home.join(".corecoder/project-rules.json");
    let allow = json!({"permissions": {"allow": ["Bash(true:*)"]}});
    seed(&rules, SEEDED, allow);
    let mut expected = Vec::new();
    for round in 0..10 {
        let sides = ["a", "b"];
        let pair = sides.map(|side| sibling(&home, &format!("peers_always_{round}{side}")));
        let mut repls = Vec::new();
        for (project, side) in pair.iter().zip(sides) {
            let command = format!("touch {side}{round}");
            let script = vec![
                Reply::Sse(sse::tool_calls(&[(
                    "c1",
                    "bash",
                    json!({"command": command}),
                )])),
                Reply::Sse(sse::text(&format!("touched {side}{round}"))),
            ];
            let mut repl = Repl::start(project, &[], script);
            repl.enter(&format!("task {side} {round}"));
            repl.expect("[a] always allow");
            repls.push(repl);
        }
        for repl in &mut repls {
            repl.pty.send("a\r");
        }
        for (repl, side) in repls.iter_mut().zip(sides) {
            repl.expect(&format!("touched {side}{round}"));
            repl.idle();
        }
        for repl in &mut repls {
            repl.pty.send("exit\r");
        }
        for repl in &mut repls {
            assert_eq!(repl.pty.wait_exit(WAIT), Some(0), "{}", repl.pty.screen());
        }
        for (project, side) in pair.iter().zip(sides) {
            let dir = project.dir.canonicalize().unwrap();
            expected.push((dir, format!("task {side} {round}")));
        }
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&rules).unwrap()).unwrap();
        let history = home.home.join(".corecoder/history");
        let history = std::fs::read_to_string(history).unwrap_or_default();
        let (mut lost_rules, mut lost_lines) = (Vec::new(), Vec::new());
        for (dir, task) in &expected {
            let entry = &saved["projects"][dir.to_string_lossy().as_ref()];
            if !entry["permissions"]["allow"]
                .to_string()
                .contains("Bash(touch:*)")
            {
                lost_rules.push(dir);
            }
            if !history.contains(task.as_str()) {
                lost_lines.push(task);
            }
        }
        assert!(
            lost_rules.is_empty() && lost_lines.is_empty(),
            "round {round}: rules lost for {lost_rules:?}, history lines lost: {lost_lines:?}"
        );
        let count = saved["projects"].as_object().map_or(0, |p| p.len());
        assert_eq!(count, SEEDED + expected.len(), "round {round}");
    }
}

/// Two REPLs answer "always" for a different MCP tool at the same moment, 10 times (the list
/// set back to 5,000 other tools each round): both tools are in `permissions.json`.
#[test]
fn concurrent_sessions_keep_every_always_tool() {
    let home = Sandbox::new("peers_tools_home");
    crate::mcp::configure_fixture(&home, "good");
    let file = home.home.join(".corecoder/permissions.json");
    let seeded: Vec<String> = (0..SEEDED)
        .map(|i| format!("mcp__seeded__tool{i}"))
        .collect();
    let tools = ["echo", "pong_seen"];
    for round in 0..10 {
        std::fs::write(&file, json!({ "always": seeded }).to_string()).unwrap();
        let pair = tools.map(|tool| sibling(&home, &format!("peers_tools_{round}{tool}")));
        let mut repls = Vec::new();
        for (project, tool) in pair.iter().zip(tools) {
            let call = format!("mcp__mis__{tool}");
            let script = vec![
                Reply::Sse(sse::tool_calls(&[("c1", &call, json!({"text": "hi"}))])),
                Reply::Sse(sse::text(&format!("called {tool}"))),
            ];
            let mut repl = Repl::start(project, &[], script);
            repl.enter(&format!("call {tool}"));
            repl.expect("[a] always allow this tool");
            repls.push(repl);
        }
        for repl in &mut repls {
            repl.pty.send("a\r");
        }
        for (repl, tool) in repls.iter_mut().zip(tools) {
            repl.expect(&format!("called {tool}"));
            repl.idle();
        }
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let saved = saved["always"].to_string();
        let lost: Vec<_> = (tools.iter())
            .filter(|tool| !saved.contains(&format!("\"mcp__mis__{tool}\"")))
            .collect();
        assert!(lost.is_empty(), "round {round}: lost {lost:?}");
        assert!(saved.contains("mcp__seeded__tool4999"), "round {round}");
    }
}
