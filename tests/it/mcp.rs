//! MCP servers as the binary meets them: a real reference server from npm in `-p` mode, and
//! a misbehaving fixture server that dies mid-call and is brought back with `/mcp reconnect`.
//!
//! The protocol details (handshake, paging, noise on the wire) are unit-tested in
//! `src/mcp.rs` against the same fixture; here only what the model is offered and sent back,
//! and what `/mcp` says, are checked.

use crate::driver::{Repl, WAIT};
use crate::run::{Sandbox, run};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    let out = run(&["-p", "read hello.txt", "--yes"], &server, &sandbox);
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
/// directory on first use. A lock file keeps two test runs from installing at once.
fn filesystem_server() -> PathBuf {
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("npm-mcp");
    let bin = prefix.join("node_modules/.bin/mcp-server-filesystem");
    std::fs::create_dir_all(&prefix).expect("create the npm prefix");
    let lock = File::create(prefix.join("install.lock")).expect("create the install lock");
    // SAFETY: flock on a descriptor we own; the lock goes with the file when it drops.
    let locked = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } == 0;
    assert!(locked, "flock: {}", std::io::Error::last_os_error());
    if bin.exists() {
        return bin;
    }
    let args = ["install", "--no-audit", "--no-fund", "--prefix"];
    let installed = Command::new("npm")
        .args(args)
        .arg(&prefix)
        .arg(FILESYSTEM_PACKAGE)
        .output()
        .unwrap_or_else(|e| {
            panic!("this test needs npm (Node.js) to install {FILESYSTEM_PACKAGE}: {e}")
        });
    assert!(
        installed.status.success() && bin.exists(),
        "npm install {FILESYSTEM_PACKAGE} failed ({})\n{}\n{}",
        installed.status,
        String::from_utf8_lossy(&installed.stdout),
        String::from_utf8_lossy(&installed.stderr),
    );
    bin
}

#[test]
fn reconnect_after_the_server_dies() {
    let sandbox = Sandbox::new("mcp_reconnect");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/mcp/misbehaving_server.py");
    let fixture = fixture.display().to_string();
    configure(
        &sandbox,
        json!({"mis": {"command": "python3", "args": [fixture, "good"]}}),
    );
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
