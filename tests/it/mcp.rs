//! MCP servers as the binary meets them: a real reference server from npm in `-p` mode, a
//! misbehaving fixture server that dies mid-call and is brought back with `/mcp reconnect`,
//! and a tool the fixture marks `readOnlyHint`, which starts while the reply still streams
//! only where consent would run it anyway.
//!
//! The protocol details (handshake, paging, noise on the wire) are unit-tested in
//! `src/extras/mcp.rs` against the same fixture; here only what the model is offered and sent back,
//! what `/mcp` says, and when a tool started are checked.

use crate::driver::{Repl, WAIT};
use crate::run::{Sandbox, run};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

const FILESYSTEM_PACKAGE: &str = "@modelcontextprotocol/server-filesystem@2026.8.31";

/// Write `servers` as the user's mcp.json.
fn configure(sandbox: &Sandbox, servers: Value) {
    let dir = sandbox.home.join(".corecoder");
    std::fs::create_dir_all(&dir).expect("create ~/.corecoder");
    let config = json!({ "mcpServers": servers });
    std::fs::write(dir.join("mcp.json"), config.to_string()).expect("write mcp.json");
}

fn offered_tools(request: &Recorded) -> Vec<String> {
    let tools = request.body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let name = |tool: &Value| tool["function"]["name"].as_str().map(str::to_string);
    tools.iter().filter_map(name).collect()
}

#[test]
fn filesystem_server_end_to_end() {
    let server_bin = filesystem_server();
    let sandbox = Sandbox::new("mcp_filesystem");
    sandbox.write("hello.txt", "hello from the sandbox\nsecond line\n");
    let dir = sandbox.dir.display().to_string();
    // The project's .mcp.json this time; the other test uses the user's file.
    let config = json!({"mcpServers": {"fs": {
        "command": server_bin.display().to_string(),
        "args": [dir],
    }}});
    sandbox.write(".mcp.json", &config.to_string());
    let read = json!({ "path": format!("{dir}/hello.txt") });
    let script = vec![
        Reply::Sse(sse::tool_calls(&[(
            "call_1",
            "mcp__fs__read_text_file",
            read,
        )])),
        Reply::Sse(sse::text("it says hello")),
    ];
    let server = Server::start(script);
    let args = ["-p", "read hello.txt", "--yes", "--trust-project"];
    let out = run(&args, &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{out:?}");
    let offered = offered_tools(&requests[0]);
    assert!(
        offered.iter().any(|t| t == "mcp__fs__read_text_file"),
        "{offered:?}"
    );
    let result = requests[1].last_tool_result();
    assert_eq!(result, "hello from the sandbox\nsecond line\n");
    assert!(out.stdout.contains("it says hello"), "{out:?}");
}

/// The reference filesystem server, installed from npm into the cargo target's temporary
/// directory on first use.
fn filesystem_server() -> PathBuf {
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("npm-mcp");
    let bin = "node_modules/.bin/mcp-server-filesystem";
    npm_install(&prefix, FILESYSTEM_PACKAGE, bin).unwrap_or_else(|why| panic!("{why}"));
    prefix.join(bin)
}

/// `package` installed by npm under `prefix` unless `installed` (a path in it) is there
/// already. A lock file keeps two test runs from installing at once. `Err` when npm cannot
/// be started (the caller decides whether that fails or skips); a failed install panics.
pub fn npm_install(prefix: &Path, package: &str, installed: &str) -> Result<(), String> {
    std::fs::create_dir_all(prefix).expect("create the npm prefix");
    let lock = File::create(prefix.join("install.lock")).expect("create the install lock");
    // SAFETY: flock on a descriptor we own; the lock goes with the file when it drops.
    let locked = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } == 0;
    assert!(locked, "flock: {}", std::io::Error::last_os_error());
    if prefix.join(installed).exists() {
        return Ok(());
    }
    let args = ["install", "--no-audit", "--no-fund", "--prefix"];
    let out = (Command::new("npm")
        .args(args)
        .arg(prefix)
        .arg(package)
        .output())
    .map_err(|e| format!("this test needs npm (Node.js) to install {package}: {e}"))?;
    assert!(
        out.status.success() && prefix.join(installed).exists(),
        "npm install {package} failed ({})\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    Ok(())
}

/// The fixture server in `mode` as the user's MCP server `mis`.
pub fn configure_fixture(sandbox: &Sandbox, mode: &str) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/mcp/misbehaving_server.py");
    let fixture = fixture.display().to_string();
    configure(
        sandbox,
        json!({"mis": {"command": "python3", "args": [fixture, mode]}}),
    );
}

#[test]
fn reconnect_after_the_server_dies() {
    let sandbox = Sandbox::new("mcp_reconnect");
    configure_fixture(&sandbox, "good");
    let echo = json!({"text": "back again"});
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "mcp__mis__crash", json!({}))])),
        Reply::Sse(sse::text("it crashed")),
        Reply::Sse(sse::tool_calls(&[("call_2", "mcp__mis__echo", echo)])),
        Reply::Sse(sse::text("it echoed")),
    ];
    // `--yes`: MCP tools would ask for consent otherwise.
    let mut repl = Repl::start(&sandbox, &["--yes"], script);
    repl.turn("/mcp", "mis: alive, 6 tools");
    repl.turn("crash it", "it crashed");
    repl.turn("/mcp", "mis: dead");
    repl.turn("/mcp reconnect mis", "mis: reconnected");
    repl.turn("echo something", "it echoed");
    repl.turn("/mcp", "mis: alive");

    assert!(repl.server.wait_for_requests(4, WAIT));
    let requests = repl.server.requests();
    assert_eq!(requests.len(), 4, "{}", repl.pty.screen());
    let offered = offered_tools(&requests[0]);
    assert!(
        offered.iter().any(|t| t == "mcp__mis__crash"),
        "{offered:?}"
    );
    let crashed = requests[1].last_tool_result();
    assert!(
        crashed.starts_with("Error executing mcp__mis__crash"),
        "{crashed}"
    );
    assert_eq!(requests[3].last_tool_result(), "back again");
}

/// A reply whose one call, `mcp__mis__slow` writing to `mark` when it starts, is whole at once,
/// while the rest of the reply trickles in over about two seconds.
fn slow_call_then_slow_tail(mark: &Path) -> Reply {
    let args = json!({"text": "looked up", "mark": mark.display().to_string()});
    let head = sse::role()
        + &sse::call_start(0, "call_slow", "mcp__mis__slow")
        + &sse::call_args(0, &args.to_string());
    let mut tail: Vec<String> = (0..20).map(|_| ": keep-alive\n\n".to_string()).collect();
    tail.push(sse::finish("tool_calls") + &sse::usage(100, 20) + &sse::done());
    Reply::SseSlowTail {
        head,
        tail,
        pause_ms: 100,
    }
}

/// Poll for `file` until it exists: the moment the tool started. None if not within `give_up`.
fn wait_for_file(file: &Path, give_up: Duration) -> Option<Instant> {
    let deadline = Instant::now() + give_up;
    while Instant::now() < deadline {
        if file.exists() {
            return Some(Instant::now());
        }
        thread::sleep(Duration::from_millis(5));
    }
    None
}

/// `-p --yes` against the fixture in `mode`, the reply from `slow_call_then_slow_tail`: when
/// the tool started, and the two requests.
fn time_the_slow_call(name: &str, mode: &str) -> (Instant, Vec<Recorded>) {
    let sandbox = Sandbox::new(name);
    configure_fixture(&sandbox, mode);
    let mark = sandbox.path("started");
    let script = vec![
        slow_call_then_slow_tail(&mark),
        Reply::Sse(sse::text("found it")),
    ];
    let server = Server::start(script);
    let started = thread::scope(|scope| {
        let watcher = scope.spawn(|| wait_for_file(&mark, Duration::from_secs(30)));
        let out = run(&["-p", "look it up", "--yes"], &server, &sandbox);
        assert_eq!(out.code, 0, "{out:?}");
        watcher.join().expect("watcher")
    });
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].last_tool_result(), "looked up");
    (started.expect("the tool ran"), requests)
}

#[test]
fn a_tool_marked_read_only_starts_while_the_reply_streams() {
    let (started, requests) = time_the_slow_call("mcp_early_marked", "readonly");
    let stream_ended = requests[1].at;
    assert!(
        started + Duration::from_millis(1500) < stream_ended,
        "the tool started only {:?} before the next request",
        stream_ended.saturating_duration_since(started)
    );
}

#[test]
fn an_unmarked_tool_waits_for_the_whole_reply() {
    let (started, requests) = time_the_slow_call("mcp_early_unmarked", "good");
    // The reply took about two seconds after its call was whole.
    let sent = requests[0].at;
    assert!(
        started > sent + Duration::from_millis(1500),
        "the tool started {:?} after the request",
        started.saturating_duration_since(sent)
    );
}

/// Asked about first: the call does not run before the answer, though the server marks it
/// read-only. Once the user allows the tool "always", the next such call starts early.
#[test]
fn an_asking_session_runs_a_marked_tool_only_after_consent() {
    let sandbox = Sandbox::new("mcp_early_asking");
    configure_fixture(&sandbox, "readonly");
    let (first, second) = (sandbox.path("first"), sandbox.path("second"));
    let script = vec![
        slow_call_then_slow_tail(&first),
        Reply::Sse(sse::text("first done")),
        slow_call_then_slow_tail(&second),
        Reply::Sse(sse::text("second done")),
    ];
    let mut repl = Repl::start(&sandbox, &[], script);
    repl.turn("/mcp", "mis: alive, 6 tools, 1 marked read-only");
    repl.enter("look it up");
    repl.expect("Allow mcp__mis__slow(");
    // The whole reply is in and the question is up: had the call started early, it would
    // have started about two seconds ago.
    assert!(
        !first.exists(),
        "ran before consent:\n{}",
        repl.pty.screen()
    );
    repl.pty.send("a\r");
    repl.expect("first done");
    repl.idle();
    assert!(first.exists(), "{}", repl.pty.screen());
    let started = thread::scope(|scope| {
        let watcher = scope.spawn(|| wait_for_file(&second, Duration::from_secs(30)));
        repl.turn("look again", "second done");
        watcher.join().expect("watcher")
    });
    let requests = repl.requests(4);
    let started = started.expect("the second call ran");
    assert!(
        started + Duration::from_millis(1500) < requests[3].at,
        "allowed always, the tool started only {:?} before the next request",
        requests[3].at.saturating_duration_since(started)
    );
}

/// The third identical call in a row is refused by the loop guard: it must not start early
/// either, so the tool runs twice, not three times.
#[test]
fn a_call_the_loop_guard_refuses_does_not_start_early() {
    let sandbox = Sandbox::new("mcp_early_guarded");
    configure_fixture(&sandbox, "readonly");
    let mark = sandbox.path("started");
    let args = json!({"text": "same", "mark": mark.display().to_string()});
    let calls: Vec<(&str, &str, Value)> = (["call_1", "call_2", "call_3"].into_iter())
        .map(|id| (id, "mcp__mis__slow", args.clone()))
        .collect();
    let script = vec![
        Reply::Sse(sse::tool_calls(&calls)),
        Reply::Sse(sse::text("stopped repeating")),
    ];
    let server = Server::start(script);
    let out = run(&["-p", "look it up thrice", "--yes"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let results = server.requests()[1].tool_results();
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[2].1.starts_with("Not run"), "{results:?}");
    assert_eq!(sandbox.read("started"), "started\nstarted\n");
}
