//! `corecoder --acp` as an editor meets it: the official ACP SDK's client from npm
//! (`@agentclientprotocol/sdk`, driven by `tests/acp/client.mjs`) runs the real binary against
//! the scripted model, and the tests assert on what the client saw (the results, the
//! `session/update`s in order, the permission questions) and on what happened to the files and
//! what the model was sent. The malformed line is written as raw bytes, past the SDK.
//!
//! The SDK is installed into the cargo target's temporary directory on first use (CI installs
//! it first, in `.ci/run`); without npm or node these tests say SKIPPED and pass.

use crate::mcp::npm_install;
use crate::run::{Output, Sandbox, finish};
use crate::server::{Reply, Server};
use crate::sse;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SDK_PACKAGE: &str = "@agentclientprotocol/sdk@2.4.0";

/// What the client saw, line by line.
struct Seen(Vec<Value>);

impl Seen {
    fn of(&self, kind: &str) -> Vec<&Value> {
        self.0.iter().filter(|line| line["seen"] == kind).collect()
    }
    fn result(&self, step: u64) -> &Value {
        let found = self
            .0
            .iter()
            .find(|l| l["seen"] == "result" && l["step"] == step);
        &found.unwrap_or_else(|| panic!("no result for step {step}: {:#?}", self.0))["result"]
    }
    /// The `session/update`s, as `sessionUpdate` names, in order.
    fn update_kinds(&self) -> Vec<String> {
        let kind = |l: &&Value| l["update"]["sessionUpdate"].as_str().map(String::from);
        self.of("update").iter().filter_map(kind).collect()
    }
    fn updates(&self, kind: &str) -> Vec<&Value> {
        let lines = self.of("update").into_iter();
        lines
            .map(|l| &l["update"])
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }
    /// The answer's text, its chunks joined.
    fn answer(&self) -> String {
        let text = |u: &&Value| u["content"]["text"].as_str().unwrap_or("").to_string();
        self.updates("agent_message_chunk")
            .iter()
            .map(text)
            .collect()
    }
}

/// The SDK's npm prefix, installed on first use; `None` (the test skips) without node or npm.
fn sdk() -> Option<PathBuf> {
    // Straight on stderr, past the test harness's capture, where CI counts SKIPPED lines.
    let skipped = |why: &str| writeln!(std::io::stderr(), "SKIPPED acp: {why}");
    if Command::new("node").arg("--version").output().is_err() {
        let _ = skipped("no node to run the ACP SDK's client");
        return None;
    }
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("npm-acp");
    let installed = "node_modules/@agentclientprotocol/sdk/package.json";
    match npm_install(&prefix, SDK_PACKAGE, installed) {
        Ok(()) => Some(prefix),
        Err(why) => {
            let _ = skipped(&why);
            None
        }
    }
}

/// Run the SDK's client through `steps` against `corecoder --acp` (model: `server`), from the
/// sandbox's home (so a path that resolves at all resolves against the session's `cwd`).
fn drive(sandbox: &Sandbox, server: &Server, steps: Value, answer: &str) -> Option<Seen> {
    drive_with(&[], sandbox, server, steps, answer)
}

/// `drive`, with `args` after `--acp`.
fn drive_with(
    args: &[&str],
    sandbox: &Sandbox,
    server: &Server,
    steps: Value,
    answer: &str,
) -> Option<Seen> {
    let prefix = sdk()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/client.mjs");
    // The temp directory is one of the read roots: under the sandbox, so that the sandbox's
    // home is outside every root, as a user's home is.
    let tmp = sandbox.home.join("tmp");
    std::fs::create_dir_all(&tmp).expect("create the sandbox's temp directory");
    let mut command = Command::new("node");
    command
        .arg(script)
        .current_dir(&sandbox.home)
        .env_clear()
        .env("HOME", &sandbox.home)
        .env("TMPDIR", &tmp)
        .env("CORECODER_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", server.url())
        .env("CORECODER_BIN", env!("CARGO_BIN_EXE_corecoder"))
        .env("ACP_SDK_PREFIX", &prefix)
        .env("ACP_STEPS", steps.to_string())
        .env("ACP_ANSWER", answer)
        .env("ACP_ARGS", json!(args).to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    let out: Output = finish(command.spawn().expect("start node"));
    assert_eq!(out.code, 0, "{out:?}");
    let lines = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"));
    Some(Seen(lines.collect()))
}

/// `initialize`, `session/new` in the sandbox's directory, and `prompt` with a resource link to
/// `notes.txt` there.
fn session_steps(sandbox: &Sandbox, prompt: &str) -> Value {
    let cwd = sandbox.dir.display().to_string();
    let link = format!("file://{cwd}/notes.txt");
    json!([{"do": "initialize"}, {"do": "new", "cwd": cwd},
        {"do": "prompt", "text": prompt, "link": link}])
}

/// A session whose model reads `notes.txt` (holding `notes`), then answers `answer`.
fn read_notes(name: &str, notes: &str, answer: &str) -> Option<(Sandbox, Server, Seen)> {
    let sandbox = Sandbox::new(name);
    sandbox.write("notes.txt", notes);
    let read = json!({"file_path": "notes.txt"});
    let server = Server::start(vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "read_file", read)])),
        Reply::Sse(sse::text(answer)),
    ]);
    let seen = drive(
        &sandbox,
        &server,
        session_steps(&sandbox, "read notes.txt"),
        "",
    )?;
    Some((sandbox, server, seen))
}

#[test]
fn a_prompt_streams_a_read_then_the_answer_and_ends_the_turn() {
    let notes = "hello from the session's cwd\n";
    let Some((sandbox, server, seen)) = read_notes("acp_read", notes, "It says hello.") else {
        return;
    };
    let init = seen.result(0);
    assert_eq!(init["protocolVersion"], 1, "{init}");
    assert_eq!(init["agentCapabilities"]["loadSession"], true, "{init}");
    assert_eq!(seen.result(2)["stopReason"], "end_turn", "{:#?}", seen.0);
    let kinds = seen.update_kinds();
    let first_chunk = kinds.iter().position(|k| k == "agent_message_chunk");
    assert_eq!(kinds[..2], ["tool_call", "tool_call_update"], "{kinds:?}");
    assert_eq!(
        first_chunk,
        Some(2),
        "the answer streams after the call: {kinds:?}"
    );
    let call = seen.updates("tool_call")[0];
    assert_eq!(call["kind"], "read", "{call}");
    assert_eq!(call["status"], "pending", "{call}");
    let file = sandbox.dir.join("notes.txt").display().to_string();
    assert_eq!(
        call["locations"][0]["path"], file,
        "absolute, from the session's cwd"
    );
    let done = seen.updates("tool_call_update")[0];
    assert_eq!(
        (done["toolCallId"].clone(), &done["status"]),
        (call["toolCallId"].clone(), &json!("completed"))
    );
    assert!(
        done["content"][0]["content"]["text"]
            .as_str()
            .unwrap_or("")
            .contains("hello from"),
        "{done}"
    );
    assert_eq!(seen.answer(), "It says hello.");
    let requests = server.requests();
    let asked = requests[0].messages().last().cloned().unwrap_or_default();
    let mention = format!("read notes.txt @{}/notes.txt", sandbox.dir.display());
    assert!(
        asked["content"]
            .as_str()
            .unwrap_or("")
            .starts_with(&mention),
        "{asked}"
    );
    let result = requests[1].last_tool_result();
    assert!(result.contains("hello from the session's cwd"), "{result}");
}

/// A `write_file` the REPL would ask about is asked about; a reject leaves no file, an allow
/// once writes it and shows the edit as a diff.
#[test]
fn a_write_asks_first_reject_writes_nothing_allow_once_writes() {
    for (answer, written) in [("reject_once", false), ("allow_once", true)] {
        let sandbox = Sandbox::new(&format!("acp_write_{answer}"));
        let write = json!({"file_path": "new.txt", "content": "made by the agent\n"});
        let script = vec![
            Reply::Sse(sse::tool_calls(&[("call_1", "write_file", write)])),
            Reply::Sse(sse::text("Done.")),
        ];
        let server = Server::start(script);
        let steps = session_steps(&sandbox, "write new.txt");
        let Some(seen) = drive(&sandbox, &server, steps, answer) else {
            return;
        };
        let asked = seen.of("permission");
        assert_eq!(asked.len(), 1, "{:#?}", seen.0);
        let kinds: Vec<&Value> = (asked[0]["params"]["options"].as_array().unwrap().iter())
            .map(|o| &o["kind"])
            .collect();
        assert_eq!(
            kinds,
            [
                &json!("allow_once"),
                &json!("allow_always"),
                &json!("reject_once")
            ]
        );
        let call = seen.updates("tool_call")[0];
        assert_eq!(
            asked[0]["params"]["toolCall"]["toolCallId"],
            call["toolCallId"]
        );
        assert_eq!(sandbox.dir.join("new.txt").exists(), written, "{answer}");
        let done = seen.updates("tool_call_update")[0];
        let diff = &done["content"][0];
        match written {
            true => {
                assert_eq!(done["status"], "completed", "{done}");
                let path = sandbox.dir.join("new.txt").display().to_string();
                let want = json!({"type": "diff", "path": path, "oldText": null, "newText": "made by the agent\n"});
                assert_eq!(diff, &want);
            }
            false => assert_eq!(done["status"], "failed", "{done}"),
        }
        assert_eq!(seen.result(2)["stopReason"], "end_turn");
    }
}

#[test]
fn a_cancel_mid_stream_answers_cancelled_at_once() {
    let sandbox = Sandbox::new("acp_cancel");
    let body = sse::role() + &sse::content("Starting a long answer");
    let server = Server::start(vec![Reply::SseThenStall { body, ms: 8000 }]);
    let cwd = sandbox.dir.display().to_string();
    let steps = json!([{"do": "initialize"}, {"do": "new", "cwd": cwd},
        {"do": "prompt", "text": "go on and on", "cancelOnChunk": true}]);
    let Some(seen) = drive(&sandbox, &server, steps, "") else {
        return;
    };
    server.expect_repairs();
    assert_eq!(seen.result(2)["stopReason"], "cancelled", "{:#?}", seen.0);
    let ms = seen.of("cancelled")[0]["ms"].as_u64().unwrap();
    assert!(
        ms < 2000,
        "the prompt answered {ms} ms after session/cancel"
    );
}

#[test]
fn the_todo_list_is_sent_as_a_plan() {
    let sandbox = Sandbox::new("acp_plan");
    let tasks = json!({"tasks": [{"content": "read the code", "status": "done"},
        {"content": "fix the bug", "status": "in_progress"}, {"content": "run the tests", "status": "pending"}]});
    let script = vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "todo_write", tasks)])),
        Reply::Sse(sse::text("Planned.")),
    ];
    let server = Server::start(script);
    let Some(seen) = drive(&sandbox, &server, session_steps(&sandbox, "plan it"), "") else {
        return;
    };
    let plans = seen.updates("plan");
    assert_eq!(plans.len(), 1, "{:#?}", seen.0);
    let entry = |content: &str, status: &str| json!({"content": content, "priority": "medium", "status": status});
    let want = json!([
        entry("read the code", "completed"),
        entry("fix the bug", "in_progress"),
        entry("run the tests", "pending")
    ]);
    assert_eq!(plans[0]["entries"], want);
    assert_eq!(seen.updates("tool_call")[0]["kind"], "think");
}

/// Raw bytes, past the SDK: a line that is not JSON gets -32700 with a null id, and the agent
/// goes on to serve the next request; an unknown method and bad params get their codes too.
#[test]
fn a_malformed_line_gets_a_parse_error_and_the_next_request_is_served() {
    let sandbox = Sandbox::new("acp_malformed");
    let mut agent = Command::new(env!("CARGO_BIN_EXE_corecoder"))
        .arg("--acp")
        .current_dir(&sandbox.dir)
        .env_clear()
        .env("HOME", &sandbox.home)
        .env("CORECODER_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start corecoder --acp");
    let mut stdin = agent.stdin.take().expect("piped stdin");
    let lines: [&[u8]; 4] = [
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"par\xff",
        br#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}"#,
        br#"{"jsonrpc":"2.0","id":3,"method":"session/levitate","params":{}}"#,
        br#"{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"relative/dir"}}"#,
    ];
    for line in lines {
        stdin
            .write_all(line)
            .and_then(|()| stdin.write_all(b"\n"))
            .expect("write");
    }
    drop(stdin);
    let stdout = BufReader::new(agent.stdout.take().expect("piped stdout"));
    let said: Vec<Value> = (stdout.lines().map_while(Result::ok))
        .map(|line| serde_json::from_str(&line).expect("stdout holds only JSON-RPC"))
        .collect();
    // stdout ended: the agent is gone, as it should be once stdin closed.
    let status = agent.wait().expect("wait for corecoder --acp");
    assert!(status.success(), "{status}");
    assert_eq!(said.len(), 4, "{said:#?}");
    assert_eq!(
        (&said[0]["id"], &said[0]["error"]["code"]),
        (&Value::Null, &json!(-32700))
    );
    assert_eq!(
        (&said[1]["id"], &said[1]["result"]["protocolVersion"]),
        (&json!(2), &json!(1))
    );
    assert_eq!(said[2]["error"]["code"], -32601, "{}", said[2]);
    assert_eq!(said[3]["error"]["code"], -32602, "{}", said[3]);
    assert!(
        said[3]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("absolute"),
        "{}",
        said[3]
    );
}

/// A session saved by one process is loaded by a fresh one: the conversation comes back as
/// updates before the answer, without a request to the model; the next prompt continues it.
#[test]
fn a_saved_session_loads_in_a_new_process_and_goes_on() {
    let first = "The first answer.";
    let Some((sandbox, _first, seen)) = read_notes("acp_load", "the first line\n", first) else {
        return;
    };
    let id = seen.result(1)["sessionId"]
        .as_str()
        .expect("a session id")
        .to_string();
    let second = Server::start(vec![Reply::Sse(sse::text("The second answer."))]);
    let cwd = sandbox.dir.display().to_string();
    let steps = json!([{"do": "initialize"}, {"do": "load", "sessionId": id, "cwd": cwd},
        {"do": "prompt", "text": "and now?"}]);
    let again = drive(&sandbox, &second, steps, "").expect("the SDK was there a moment ago");
    assert!(again.of("error").is_empty(), "{:#?}", again.0);
    let kinds = again.update_kinds();
    let replayed = [
        "user_message_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
    ];
    assert_eq!(kinds[..4], replayed, "{kinds:?}");
    let user = &again.updates("user_message_chunk")[0]["content"]["text"];
    assert!(
        user.as_str().unwrap().starts_with("read notes.txt"),
        "{user}"
    );
    assert_eq!(again.updates("tool_call")[0]["toolCallId"], "call_1");
    assert_eq!(again.answer(), "The first answer.The second answer.");
    assert_eq!(again.result(2)["stopReason"], "end_turn");
    let requests = second.requests();
    assert_eq!(requests.len(), 1, "loading asked the model nothing");
    let sent = serde_json::to_string(&requests[0].messages()).unwrap();
    assert!(
        sent.contains("The first answer.") && sent.contains("the first line"),
        "{sent}"
    );
}

/// "Always" saves what the session's `[a]` saves: the second write of the session runs
/// without a question.
#[test]
fn allow_always_is_asked_once_and_the_next_write_runs_without_asking() {
    let sandbox = Sandbox::new("acp_always");
    let write = |file: &str| json!({"file_path": file, "content": "x\n"});
    let server = Server::start(vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "write_file", write("a.txt"))])),
        Reply::Sse(sse::text("One.")),
        Reply::Sse(sse::tool_calls(&[("call_2", "write_file", write("b.txt"))])),
        Reply::Sse(sse::text("Two.")),
    ]);
    let cwd = sandbox.dir.display().to_string();
    let steps = json!([{"do": "initialize"}, {"do": "new", "cwd": cwd},
        {"do": "prompt", "text": "write a"}, {"do": "prompt", "text": "write b"}]);
    let Some(seen) = drive(&sandbox, &server, steps, "allow_always") else {
        return;
    };
    assert_eq!(seen.of("permission").len(), 1, "{:#?}", seen.0);
    assert!(sandbox.dir.join("a.txt").exists() && sandbox.dir.join("b.txt").exists());
    assert_eq!(seen.result(3)["stopReason"], "end_turn");
}

/// The danger gate comes before the question: a catastrophic command is refused, and the
/// client is never asked.
#[test]
fn a_catastrophic_command_is_refused_without_asking() {
    let sandbox = Sandbox::new("acp_danger");
    let rm = json!({"command": "rm -rf ~"});
    let server = Server::start(vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "bash", rm)])),
        Reply::Sse(sse::text("Refused.")),
    ]);
    let Some(seen) = drive(
        &sandbox,
        &server,
        session_steps(&sandbox, "clean up"),
        "allow_once",
    ) else {
        return;
    };
    assert!(seen.of("permission").is_empty(), "{:#?}", seen.0);
    let done = seen.updates("tool_call_update")[0];
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(seen.updates("tool_call")[0]["kind"], "execute");
    assert!(
        sandbox.home.join("work").exists(),
        "the home is still there"
    );
}

/// The client's stdio MCP server is started beside the configured ones, its tools offered and
/// (after consent) called; an `http` one is left out.
#[test]
fn the_clients_stdio_mcp_server_runs_and_an_http_one_is_left_out() {
    let sandbox = Sandbox::new("acp_mcp");
    if Command::new("python3").arg("-V").output().is_err() {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED acp: no python3 for the MCP fixture"
        );
        return;
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/mcp/misbehaving_server.py");
    let stdio = json!({"name": "mis", "command": "python3",
        "args": [fixture.display().to_string(), "good"], "env": []});
    let http = json!({"type": "http", "name": "web", "url": "http://127.0.0.1:9/", "headers": []});
    let echo = json!({"text": "back again"});
    let server = Server::start(vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "mcp__mis__echo", echo)])),
        Reply::Sse(sse::text("It echoed.")),
    ]);
    let cwd = sandbox.dir.display().to_string();
    let steps = json!([{"do": "initialize"}, {"do": "new", "cwd": cwd, "mcpServers": [stdio, http]},
        {"do": "prompt", "text": "echo it"}]);
    let Some(seen) = drive(&sandbox, &server, steps, "allow_once") else {
        return;
    };
    let requests = server.requests();
    let tools = requests[0].body["tools"].to_string();
    assert!(
        tools.contains("mcp__mis__echo") && !tools.contains("mcp__web"),
        "{tools}"
    );
    assert_eq!(seen.of("permission").len(), 1, "{:#?}", seen.0);
    let done = seen.updates("tool_call_update")[0];
    assert_eq!(done["status"], "completed", "{done}");
    assert!(requests[1].last_tool_result().contains("back again"));
}

/// Plan mode, chosen with `session/set_mode` from the modes `session/new` offers: only read-only
/// tools run, so a write is refused without a question; back in the default mode it is asked.
#[test]
fn plan_mode_refuses_a_write_without_asking_until_the_default_mode_is_back() {
    let sandbox = Sandbox::new("acp_plan_mode");
    let write = json!({"file_path": "plan.txt", "content": "x\n"});
    let server = Server::start(vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "write_file", write.clone())])),
        Reply::Sse(sse::text("Planned only.")),
        Reply::Sse(sse::tool_calls(&[("call_2", "write_file", write)])),
        Reply::Sse(sse::text("Written.")),
    ]);
    let cwd = sandbox.dir.display().to_string();
    let steps = json!([{"do": "initialize"}, {"do": "new", "cwd": cwd},
        {"do": "mode", "modeId": "plan"}, {"do": "prompt", "text": "plan it"},
        {"do": "mode", "modeId": "default"}, {"do": "prompt", "text": "now do it"}]);
    let Some(seen) = drive(&sandbox, &server, steps, "allow_once") else {
        return;
    };
    let modes = &seen.result(1)["modes"];
    assert_eq!(modes["currentModeId"], "default", "{modes}");
    assert_eq!(modes["availableModes"][1]["id"], "plan", "{modes}");
    let statuses: Vec<&Value> = (seen.updates("tool_call_update").iter())
        .map(|u| &u["status"])
        .collect();
    assert_eq!(
        statuses,
        [&json!("failed"), &json!("completed")],
        "{:#?}",
        seen.0
    );
    assert_eq!(
        seen.of("permission").len(),
        1,
        "only the second write is asked about"
    );
    assert!(sandbox.dir.join("plan.txt").exists());
}

/// An answer cut at the output limit ends the turn with `max_tokens`; the round cap
/// (`--max-rounds`) with `max_turn_requests`.
#[test]
fn a_cut_answer_is_max_tokens_and_the_round_cap_max_turn_requests() {
    let sandbox = Sandbox::new("acp_stop_reasons");
    sandbox.write("notes.txt", "x\n");
    let cut = sse::role() + &sse::content("The answer went on and") + &sse::finish("length");
    let read = json!({"file_path": "notes.txt"});
    let server = Server::start(vec![
        Reply::Sse(cut + &sse::done()),
        Reply::Sse(sse::tool_calls(&[("call_1", "read_file", read)])),
    ]);
    let cwd = sandbox.dir.display().to_string();
    let steps = json!([{"do": "initialize"}, {"do": "new", "cwd": cwd},
        {"do": "prompt", "text": "say a lot"}, {"do": "prompt", "text": "read and read"}]);
    let args = ["--max-rounds", "1"];
    let Some(seen) = drive_with(&args, &sandbox, &server, steps, "") else {
        return;
    };
    assert_eq!(seen.result(2)["stopReason"], "max_tokens", "{:#?}", seen.0);
    assert_eq!(
        seen.result(3)["stopReason"],
        "max_turn_requests",
        "{:#?}",
        seen.0
    );
}

#[test]
fn a_prompt_a_hook_refuses_is_a_refusal_and_nothing_is_sent() {
    let sandbox = Sandbox::new("acp_refusal");
    sandbox.write(
        "refuse.sh",
        "#!/bin/sh\necho 'not on a friday' >&2\nexit 2\n",
    );
    let refuse = format!("sh {}", sandbox.path("refuse.sh").display());
    let hooks = json!({"UserPromptSubmit": [{"command": refuse}]});
    std::fs::create_dir_all(sandbox.home.join(".corecoder")).expect("create ~/.corecoder");
    let hooks_file = sandbox.home.join(".corecoder/hooks.json");
    std::fs::write(hooks_file, hooks.to_string()).expect("write hooks.json");
    let server = Server::start(vec![Reply::Sse(sse::text("never"))]);
    let Some(seen) = drive(&sandbox, &server, session_steps(&sandbox, "hi"), "") else {
        return;
    };
    assert_eq!(seen.result(2)["stopReason"], "refusal", "{:#?}", seen.0);
    assert!(seen.answer().contains("not on a friday"), "{:#?}", seen.0);
    assert!(server.requests().is_empty(), "{:#?}", seen.0);
}

#[test]
fn a_read_outside_the_project_is_asked_and_a_no_sends_nothing_of_it() {
    let sandbox = Sandbox::new("acp_outside_read");
    let secret = sandbox.home.join("secret.txt");
    std::fs::write(&secret, "the outside secret\n").expect("write the outside file");
    let read = json!({"file_path": secret.display().to_string()});
    let server = Server::start(vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "read_file", read)])),
        Reply::Sse(sse::text("Could not read it.")),
    ]);
    let steps = session_steps(&sandbox, "read the file in my home");
    let Some(seen) = drive(&sandbox, &server, steps, "reject_once") else {
        return;
    };
    assert_eq!(seen.of("permission").len(), 1, "{:#?}", seen.0);
    assert_eq!(seen.updates("tool_call_update")[0]["status"], "failed");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{:#?}", seen.0);
    let sent = String::from_utf8_lossy(&requests[1].raw);
    assert!(!sent.contains("the outside secret"), "{sent}");
    assert_eq!(seen.result(2)["stopReason"], "end_turn");
}

#[test]
fn a_command_is_asked_and_a_no_runs_nothing() {
    let sandbox = Sandbox::new("acp_command_asked");
    let touch = json!({"command": "touch made.txt"});
    let server = Server::start(vec![
        Reply::Sse(sse::tool_calls(&[("call_1", "bash", touch)])),
        Reply::Sse(sse::text("Not run.")),
    ]);
    let steps = session_steps(&sandbox, "make a file");
    let Some(seen) = drive(&sandbox, &server, steps, "reject_once") else {
        return;
    };
    let asked = seen.of("permission");
    assert_eq!(asked.len(), 1, "{:#?}", seen.0);
    let call = seen.updates("tool_call")[0];
    assert_eq!(call["kind"], "execute", "{call}");
    assert_eq!(seen.updates("tool_call_update")[0]["status"], "failed");
    assert!(!sandbox.dir.join("made.txt").exists(), "{:#?}", seen.0);
    assert_eq!(seen.result(2)["stopReason"], "end_turn");
}
