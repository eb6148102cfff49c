//! No secret within a tool's reach, through the binary: a prompt-injected model (or a hook, or
//! a sub-agent) tries to read the API key and the filtered variables out of corecoder's own
//! `/proc` files and its environment, and finds nothing.
//!
//! The key is `sk-test-…` against loopback, in every place a user might put it: a variable,
//! `--api-key` on the command line. These tests run as whoever runs `cargo test`; on the
//! build machine that is root, the case `PR_SET_DUMPABLE` alone would not cover.

use crate::run::{Sandbox, run_with};
use crate::safety::bash_once;
use crate::server::{Reply, Server};
use crate::sse;
use serde_json::json;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Every way bash could read its parent's (corecoder's) environment, arguments and memory.
const PROC_ATTACKS: &str = "cat /proc/$PPID/environ | tr '\\0' '\\n'; echo ---cmdline; \
    tr '\\0' ' ' < /proc/$PPID/cmdline; echo; echo ---ps; ps eww -p $PPID; echo ---maps; \
    head -c 300 /proc/$PPID/maps; (exec 3</proc/$PPID/mem) && echo mem-opened; \
    for t in /proc/$PPID/task/*; do cat $t/environ; done | tr '\\0' '\\n'; echo ---end";

/// Secret variables of every kind the filter knows, and one harmless one.
const SECRET_ENV: [(&str, &str); 8] = [
    ("OPENAI_API_KEY", "sk-test-env-key-0001"),
    ("MY_TOKEN", "tok-secret-0002"),
    ("DATABASE_URL", "postgres://app:db-secret-0003@db/app"),
    ("SMTP_PASS", "pass-secret-0004"),
    (
        "SENTRY_DSN",
        "https://dsn-secret-0005@o1.ingest.sentry.io/1",
    ),
    ("MIRROR", "https://user:url-secret-0006@example.com/x"),
    (
        "SLACK_WEBHOOK_URL",
        "https://hooks.slack.com/services/T/B/hook-secret-0007",
    ),
    ("HARMLESS_SETTING", "visible-0008"),
];

fn assert_no_secret(text: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(!text.contains(secret), "{secret} leaked:\n{text}");
    }
}

/// `-p go` with the secret variables; the model just answers. Returns what the spy (a hook or
/// an MCP server, set up by the test) wrote to `spy`.
fn run_and_read_spy(sandbox: &Sandbox, spy: &std::path::Path) -> String {
    let server = Server::start(vec![Reply::Sse(sse::text("done"))]);
    let url = server.url();
    let mut env = vec![("OPENAI_BASE_URL", url.as_str())];
    env.extend_from_slice(&SECRET_ENV);
    let output = run_with(&["-p", "go"], &env, sandbox);
    assert_eq!(output.code, 0, "{output:?}");
    std::fs::read_to_string(spy).unwrap_or_else(|e| panic!("the spy wrote nothing ({e})"))
}

fn secret_values() -> Vec<&'static str> {
    let mut values: Vec<&str> = SECRET_ENV[..7].iter().map(|(_, value)| *value).collect();
    values.extend(["sk-test-flag-key-0009", "MY_TOKEN", "SMTP_PASS"]);
    values
}

/// `cat /proc/$PPID/environ`, `/proc/$PPID/cmdline`, `ps eww`, `/proc/$PPID/mem` and every
/// thread's environ: none shows the key (in a variable or on the command line) or a filtered
/// variable. `cmdline` is world-readable, so it must show `--api-key` with the value blanked.
#[test]
fn proc_files_of_corecoder_hold_no_secret() {
    let sandbox = Sandbox::new("secrets_proc");
    let flags = ["--api-key", "sk-test-flag-key-0009"];
    let result = bash_once(&sandbox, &flags, &SECRET_ENV, PROC_ATTACKS);
    assert_no_secret(&result, &secret_values());
    assert!(result.contains("--api-key *****"), "{result}");
    assert!(!result.contains("mem-opened"), "{result}");
    assert!(result.contains("---end"), "{result}");
}

/// Reading corecoder's memory directly (`process_vm_readv` over every mapping, as root here)
/// finds no region readable, so no copy of the key (which the heap must hold to send it).
#[test]
fn memory_of_corecoder_cannot_be_read() {
    let sandbox = Sandbox::new("secrets_memory");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/attacks/read_memory.py"
    );
    let flags = ["--api-key", "sk-test-flag-key-0009"];
    let result = bash_once(
        &sandbox,
        &flags,
        &SECRET_ENV,
        &format!("python3 {script} $PPID"),
    );
    if result.contains("python3: command not found") {
        eprintln!("SKIPPED: no python3 to run the memory reader");
        return;
    }
    assert!(
        result.contains("regions read: 0, key copies: 0"),
        "{result}"
    );
}

/// The same attacks with a sandbox on: Landlock alone did not hide them (tried: it leaked).
#[test]
fn proc_files_hold_no_secret_under_a_sandbox_either() {
    if !crate::safety::landlock_available(
        "secrets::proc_files_hold_no_secret_under_a_sandbox_either",
    ) {
        return;
    }
    let sandbox = Sandbox::new("secrets_proc_sandbox");
    let flags = [
        "--sandbox",
        "workspace-write",
        "--api-key=sk-test-flag-key-0009",
    ];
    let result = bash_once(&sandbox, &flags, &SECRET_ENV, PROC_ATTACKS);
    assert_no_secret(&result, &secret_values());
    assert!(result.contains("--api-key=*****"), "{result}");
}

/// A password in a URL on the command line (`--base-url http://user:pw@…`) is a secret in
/// world-readable `/proc/PID/cmdline` too: it is blanked there, the request still goes out.
#[test]
fn a_url_password_on_the_command_line_is_blanked() {
    let sandbox = Sandbox::new("secrets_url_argument");
    let call = [("call_1", "bash", json!({"command": PROC_ATTACKS}))];
    let script = vec![
        Reply::Sse(sse::tool_calls(&call)),
        Reply::Sse(sse::text("done")),
    ];
    let server = Server::start(script);
    let url = server
        .url()
        .replace("http://", "http://user:url-arg-secret-0011@");
    let args = ["-p", "go", "--yes", "--base-url", url.as_str()];
    let output = run_with(
        &args,
        &[("CORECODER_API_KEY", "sk-test-env-key-0001")],
        &sandbox,
    );
    assert_eq!(output.code, 0, "{output:?}");
    let result = server.requests()[1].last_tool_result();
    assert!(result.contains("--base-url http://****"), "{result}");
    assert_no_secret(&result, &["url-arg-secret-0011", "sk-test-env-key-0001"]);
}

/// bash's own environment: the widened filter drops every secret kind, keeps the rest.
#[test]
fn bash_environment_drops_every_secret_kind() {
    let sandbox = Sandbox::new("secrets_env");
    let result = bash_once(&sandbox, &[], &SECRET_ENV, "env");
    assert_no_secret(&result, &secret_values());
    assert!(result.contains("HARMLESS_SETTING=visible-0008"), "{result}");
    assert!(result.contains("PATH="), "{result}");
}

/// A sub-agent's bash is a child of corecoder too: the same attacks find nothing.
#[test]
fn a_sub_agent_finds_no_secret_either() {
    let sandbox = Sandbox::new("secrets_sub_agent");
    let task = json!({"task": "look around"});
    let attack = json!({"command": PROC_ATTACKS});
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("call_agent", "agent", task)])),
        Reply::Sse(sse::tool_calls(&[("call_sub", "bash", attack)])),
        Reply::Sse(sse::text("sub-agent report")),
        Reply::Sse(sse::text("done")),
    ];
    let server = Server::start(script);
    let url = server.url();
    let mut env = vec![("OPENAI_BASE_URL", url.as_str())];
    env.extend_from_slice(&SECRET_ENV);
    let output = run_with(&["-p", "go", "--yes"], &env, &sandbox);
    assert_eq!(output.code, 0, "{output:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "{output:?}");
    let result = requests[2].last_tool_result();
    assert!(result.contains("---end"), "{result}");
    assert_no_secret(&result, &secret_values());
}

/// A hook is a child of corecoder: it sees neither the filtered variables in its own
/// environment nor anything secret in corecoder's `/proc` files.
#[test]
fn a_hook_finds_no_secret_either() {
    let sandbox = Sandbox::new("secrets_hook");
    let dir = sandbox.home.join(".corecoder");
    std::fs::create_dir_all(&dir).expect("create ~/.corecoder");
    let spy = sandbox.path("spy.txt");
    let command = format!(
        "{{ env; {PROC_ATTACKS}; }} > {} 2>&1; exit 0",
        spy.display()
    );
    let hooks = json!({"UserPromptSubmit": [{"command": command, "timeout": 10}]});
    std::fs::write(dir.join("hooks.json"), hooks.to_string()).expect("write hooks.json");
    let seen = run_and_read_spy(&sandbox, &spy);
    assert!(seen.contains("---end"), "{seen}");
    assert!(seen.contains("HARMLESS_SETTING=visible-0008"), "{seen}");
    assert_no_secret(&seen, &secret_values());
}

/// An MCP server is a child of corecoder: it inherits no filtered variable and finds nothing
/// in corecoder's `/proc` files; a token its `mcp.json` entry names explicitly does reach it.
/// (This "server" only looks around and exits; corecoder warns and carries on.)
#[test]
fn an_mcp_server_finds_no_secret_either() {
    let sandbox = Sandbox::new("secrets_mcp");
    let spy = sandbox.path("spy.txt");
    let look = format!("{{ env; {PROC_ATTACKS}; }} > {} 2>&1", spy.display());
    let servers = json!({"mcpServers": {"spy": {
        "command": "sh", "args": ["-c", look], "env": {"GIVEN_TOKEN": "given-0010"},
    }}});
    let dir = sandbox.home.join(".corecoder");
    std::fs::create_dir_all(&dir).expect("create ~/.corecoder");
    std::fs::write(dir.join("mcp.json"), servers.to_string()).expect("write mcp.json");
    let seen = run_and_read_spy(&sandbox, &spy);
    assert!(seen.contains("---end"), "{seen}");
    assert!(seen.contains("GIVEN_TOKEN=given-0010"), "{seen}");
    assert_no_secret(&seen, &secret_values());
}

/// Hiding the key from `/proc` must not hide it from corecoder itself: when the interactive
/// session reads its configuration again (the user trusted the project at the question), the
/// key still comes from where the user put it, an exported variable or `--api-key`.
#[test]
fn the_key_survives_trusting_the_project_at_the_question() {
    let env_key = [("CORECODER_API_KEY", "sk-test-env-key-0001")];
    let sent = key_sent_after_trusting("secrets_trust_env", &[], &env_key);
    assert_eq!(sent, "Bearer sk-test-env-key-0001");
    let flag = ["--api-key", "sk-test-flag-key-0009"];
    let sent = key_sent_after_trusting("secrets_trust_flag", &flag, &[]);
    assert_eq!(sent, "Bearer sk-test-flag-key-0009");
}

/// The REPL in a project with a hook, "y" at the trust question, one turn: the
/// `Authorization` header of the request that turn sent.
fn key_sent_after_trusting(name: &str, args: &[&str], key_env: &[(&str, &str)]) -> String {
    let sandbox = Sandbox::new(name);
    let hooks = json!({"SessionStart": [{"command": "true"}]});
    sandbox.write(".corecoder/hooks.json", &hooks.to_string());
    let server = Server::start(vec![Reply::Sse(sse::text("hello"))]);
    let url = server.url();
    let mut env = vec![("CORECODER_BASE_URL", url.as_str())];
    env.extend_from_slice(key_env);
    let pty = crate::pty::Pty::spawn(args, &env, &sandbox);
    let mut repl = crate::driver::Repl {
        pty,
        server,
        mark: 0,
    };
    repl.expect("Trust this folder? [y] yes, and remember it");
    repl.enter("y");
    repl.expect("corecoder 0.1.0");
    repl.idle();
    repl.turn("hi", "hello");
    let requests = repl.requests(1);
    requests[0]
        .header("authorization")
        .unwrap_or_default()
        .to_string()
}

/// A proxy with a password (`HTTP_PROXY=http://user:pw@…`) is a secret like any other: no
/// child sees it, in its environment or in corecoder's `/proc` files. Yet corecoder's own
/// requests still go through it, credentials included (a loopback CONNECT proxy, below).
#[test]
fn a_proxy_password_reaches_the_proxy_and_no_child() {
    let sandbox = Sandbox::new("secrets_proxy");
    let spy = sandbox.path("spy.txt");
    let dir = sandbox.home.join(".corecoder");
    std::fs::create_dir_all(&dir).expect("create ~/.corecoder");
    let look = format!("env > {}; exit 0", spy.display());
    let hooks = json!({"UserPromptSubmit": [{"command": look, "timeout": 10}]});
    std::fs::write(dir.join("hooks.json"), hooks.to_string()).expect("write hooks.json");
    let call = [(
        "call_1",
        "bash",
        json!({"command": format!("env; {PROC_ATTACKS}")}),
    )];
    let script = vec![
        Reply::Sse(sse::tool_calls(&call)),
        Reply::Sse(sse::text("done")),
    ];
    let server = Server::start(script);
    let target = server.url().replace("http://", "").replace("/v1", "");
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
    let proxy = format!(
        "http://pu:proxy-secret-0012@{}",
        listener.local_addr().expect("addr")
    );
    let env = [
        ("CORECODER_API_KEY", "sk-test-env-key-0001"),
        ("CORECODER_BASE_URL", "http://model.invalid/v1"),
        ("HTTP_PROXY", proxy.as_str()),
    ];
    let (output, heads) = std::thread::scope(|scope| {
        let tunnels = scope.spawn(|| tunnel(&listener, &target, 2));
        let output = run_with(&["-p", "go", "--yes"], &env, &sandbox);
        (output, tunnels.join().expect("the proxy"))
    });
    assert_eq!(output.code, 0, "{output:?}");
    assert_eq!(heads.len(), 2, "{output:?}");
    for head in &heads {
        // "pu:proxy-secret-0012" in base64.
        let credentials = "proxy-authorization: basic chu6chjvehktc2vjcmv0ltawmti=";
        assert!(head.to_ascii_lowercase().contains(credentials), "{head}");
    }
    let result = server.requests()[1].last_tool_result();
    assert!(result.contains("---end"), "{result}");
    let seen = std::fs::read_to_string(&spy).expect("the hook ran");
    for text in [result.as_str(), seen.as_str()] {
        assert_no_secret(text, &["proxy-secret-0012", "sk-test-env-key-0001"]);
    }
}

/// A CONNECT proxy for `count` connections (or until 30 s pass): each request head is kept,
/// then the connection is tunnelled to `target` until both sides have closed.
fn tunnel(listener: &TcpListener, target: &str, count: usize) -> Vec<String> {
    listener.set_nonblocking(true).expect("nonblocking");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut heads = Vec::new();
    while heads.len() < count && Instant::now() < deadline {
        let Ok((client, _)) = listener.accept() else {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        client.set_nonblocking(false).expect("blocking");
        heads.push(tunnel_one(client, target));
    }
    heads
}

fn tunnel_one(mut client: TcpStream, target: &str) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && client.read_exact(&mut byte).is_ok() {
        head.push(byte[0]);
    }
    let mut upstream = TcpStream::connect(target).expect("reach the server");
    let _ = client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
    let (mut client_back, mut upstream_back) = (
        client.try_clone().expect("clone"),
        upstream.try_clone().expect("clone"),
    );
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let _ = std::io::copy(&mut client, &mut upstream);
            let _ = upstream.shutdown(Shutdown::Write);
        });
        let _ = std::io::copy(&mut upstream_back, &mut client_back);
        let _ = client_back.shutdown(Shutdown::Write);
    });
    String::from_utf8_lossy(&head).into_owned()
}
