//! Session logs through the binary: what a run writes, resuming it with `-r` and `-c`, a file
//! cut by a crash, ids that try to leave the sessions directory, and `/save` and `/sessions`.

use super::{Repl, answer, check, only_session_id, read_call, sent, session_files, sessions_dir};
use crate::run::{Sandbox, run};
use crate::server::{Recorded, Server};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("session file");
    let parse = |line: &str| serde_json::from_str(line).expect("a JSON line");
    text.lines().map(parse).collect()
}

/// A request's messages after the system prompt (checked to be there), for comparing.
fn conversation(request: &Recorded) -> Vec<Value> {
    let messages = request.messages();
    assert_eq!(messages[0]["role"], "system", "{messages:#?}");
    messages[1..].to_vec()
}

#[test]
fn p_run_logs_header_then_each_message() {
    let sandbox = Sandbox::new("long_log");
    sandbox.write("notes.txt", "remember the milk\n");
    let script = vec![read_call("call_1", "notes.txt"), answer("all read")];
    let (out, _) = check(&sandbox, &["-p", "read notes", "-m", "logged"], script);
    assert_eq!(out.code, 0, "{out:?}");
    let id = only_session_id(&sandbox);
    let lines = lines(&sessions_dir(&sandbox).join(format!("{id}.jsonl")));
    let header = &lines[0];
    assert_eq!(header["type"], "header", "{lines:#?}");
    assert_eq!(header["model"], "logged");
    let cwd = std::fs::canonicalize(&sandbox.dir).expect("cwd");
    assert_eq!(header["cwd"], cwd.to_string_lossy().as_ref());
    assert!(
        header["started"].as_u64().is_some_and(|s| s > 0),
        "{header}"
    );
    let roles: Vec<&str> = lines[1..]
        .iter()
        .filter_map(|l| l["role"].as_str())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool", "assistant"],
        "{lines:#?}"
    );
    assert_eq!(lines[1]["content"], "read notes");
    assert_eq!(lines[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(lines[3]["tool_call_id"], "call_1");
    assert!(
        lines[3]["content"]
            .to_string()
            .contains("remember the milk")
    );
    assert_eq!(lines[4]["content"], "all read");
}

#[test]
fn resume_by_id_sends_the_conversation_in_its_model() {
    let sandbox = Sandbox::new("long_resume");
    sandbox.write("notes.txt", "remember the milk\n");
    let script = vec![read_call("call_1", "notes.txt"), answer("all read")];
    let (first, _) = check(&sandbox, &["-p", "read notes", "-m", "kept-model"], script);
    assert_eq!(first.code, 0, "{first:?}");
    let id = only_session_id(&sandbox);
    let stored = &lines(&sessions_dir(&sandbox).join(format!("{id}.jsonl")))[1..];

    let (out, requests) = check(&sandbox, &["-r", &id, "-p", "and now?"], vec![answer("ok")]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(requests[0].body["model"], "kept-model");
    let mut expected = stored.to_vec();
    expected.push(json!({"role": "user", "content": "and now?"}));
    assert_eq!(conversation(&requests[0]), expected);

    let args = ["-r", &id, "-m", "chosen", "-p", "again"];
    let (out, requests) = check(&sandbox, &args, vec![answer("ok")]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(requests[0].body["model"], "chosen");
    assert!(
        sent(&requests).contains("and now?"),
        "the resumed turn was logged too"
    );
}

/// A crash between a tool call and its result: the resume repairs the history and says so,
/// on stderr and in the trace, and a clean resume says nothing.
#[test]
fn a_call_left_unanswered_is_repaired_on_resume_and_reported() {
    let sandbox = Sandbox::new("long_repair");
    sandbox.write("notes.txt", "remember the milk\n");
    let script = vec![read_call("call_1", "notes.txt"), answer("all read")];
    let (first, _) = check(&sandbox, &["-p", "read notes"], script);
    assert_eq!(first.code, 0, "{first:?}");
    assert!(!first.stderr.contains("history repaired"), "{first:?}");
    let id = only_session_id(&sandbox);
    let path = sessions_dir(&sandbox).join(format!("{id}.jsonl"));
    let text = std::fs::read_to_string(&path).expect("session");
    // Header, task, the assistant's call: the result and the answer are lost.
    let kept: String = text.split_inclusive('\n').take(3).collect();
    std::fs::write(&path, kept).expect("cut");

    let trace = sandbox.path("trace.jsonl").to_string_lossy().to_string();
    let args = ["-r", &id, "-p", "go on", "--trace", &trace];
    let server = Server::start(vec![answer("ok")]);
    // The cut session log is the crash that explains the repair.
    server.expect_repairs();
    let (out, requests) = (run(&args, &server, &sandbox), server.requests());
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("history repaired on resume: 1 tool messages"),
        "{out:?}"
    );
    let result = &conversation(&requests[0])[2];
    assert_eq!(
        (&result["tool_call_id"], &result["content"]),
        (&json!("call_1"), &json!("[interrupted]"))
    );
    let traced = std::fs::read_to_string(&trace).expect("trace");
    let repairs: Vec<Value> = (traced.lines())
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line"))
        .filter(|l| l["kind"] == "repair")
        .collect();
    assert_eq!(repairs.len(), 1, "{traced}");
    assert_eq!(
        (&repairs[0]["changed"], &repairs[0]["at"]),
        (&json!(1), &json!("resume"))
    );
}

#[test]
fn continue_takes_the_latest_session_started_here() {
    let sandbox = Sandbox::new("long_continue");
    for task in ["task one", "task two"] {
        let (out, _) = check(&sandbox, &["-p", task], vec![answer("done")]);
        assert_eq!(out.code, 0, "{out:?}");
    }
    // Newer than both, but started somewhere else.
    let elsewhere = json!({"type": "header", "model": "m", "cwd": "/elsewhere", "started": 1});
    let user = json!({"role": "user", "content": "ELSEWHERE"});
    let planted = format!("{elsewhere}\n{user}\n");
    std::fs::write(sessions_dir(&sandbox).join("zz-other.jsonl"), planted).expect("plant");

    let (out, requests) = check(&sandbox, &["-c", "-p", "go on"], vec![answer("ok")]);
    assert_eq!(out.code, 0, "{out:?}");
    let body = sent(&requests);
    assert!(body.contains("task two"), "{body}");
    assert!(
        !body.contains("task one") && !body.contains("ELSEWHERE"),
        "{body}"
    );
}

#[test]
fn continue_or_resume_of_nothing_is_a_usage_error() {
    let sandbox = Sandbox::new("long_no_session");
    for args in [
        &["-c", "-p", "hi"][..],
        &["-r", "no-such-id", "-p", "hi"][..],
    ] {
        let (out, requests) = check(&sandbox, args, vec![answer("should not be asked")]);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(!out.stderr.trim().is_empty(), "{out:?}");
        assert!(!out.stderr.contains("panicked"), "{out:?}");
        assert!(requests.is_empty(), "{args:?} sent a request");
    }
}

/// The file is cut inside its last line, as a crash while writing would leave it.
#[test]
fn cut_session_file_loads_what_is_valid() {
    let sandbox = Sandbox::new("long_cut");
    sandbox.write("notes.txt", "remember the milk\n");
    let script = vec![read_call("call_1", "notes.txt"), answer("FINAL WORDS here")];
    let (first, requests) = check(&sandbox, &["-p", "read notes"], script);
    assert_eq!(first.code, 0, "{first:?}");
    let id = only_session_id(&sandbox);
    let path = sessions_dir(&sandbox).join(format!("{id}.jsonl"));
    let text = std::fs::read_to_string(&path).expect("session");
    let last_line = text.trim_end().rsplit('\n').next().expect("a last line");
    let cut = text.len() - 1 - last_line.len() / 2;
    std::fs::write(&path, &text.as_bytes()[..cut]).expect("cut");

    let (out, resumed) = check(&sandbox, &["-r", &id, "-p", "go on"], vec![answer("ok")]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("unreadable lines"), "{out:?}");
    assert!(out.stderr.contains("skipped"), "{out:?}");
    let mut expected = conversation(&requests[1]);
    expected.push(json!({"role": "user", "content": "go on"}));
    assert_eq!(conversation(&resumed[0]), expected);
    assert!(!sent(&resumed).contains("FINAL WORDS"));
}

/// After resuming a cut file, the messages of the resumed run must survive the next resume
/// (appending straight after the cut line would glue the first of them onto it).
#[test]
fn messages_after_a_cut_line_survive_the_next_resume() {
    let sandbox = Sandbox::new("long_cut_then_more");
    let (first, _) = check(
        &sandbox,
        &["-p", "first task"],
        vec![answer("first answer")],
    );
    assert_eq!(first.code, 0, "{first:?}");
    let id = only_session_id(&sandbox);
    let path = sessions_dir(&sandbox).join(format!("{id}.jsonl"));
    let text = std::fs::read(&path).expect("session");
    std::fs::write(&path, &text[..text.len() - 10]).expect("cut");
    let (out, _) = check(
        &sandbox,
        &["-r", &id, "-p", "SECOND task"],
        vec![answer("ok")],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let (out, requests) = check(&sandbox, &["-r", &id, "-p", "third"], vec![answer("ok")]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(sent(&requests).contains("SECOND task"), "{out:?}");
}

#[test]
fn resume_ids_never_reach_outside_the_sessions_directory() {
    let sandbox = Sandbox::new("long_traversal");
    let header = json!({"type": "header", "model": "m", "cwd": "/", "started": 1});
    let secret = json!({"role": "user", "content": "SECRET"});
    let decoy = format!("{header}\n{secret}\n");
    let corecoder = sandbox.home.join(".corecoder");
    std::fs::create_dir_all(corecoder.join("sessions")).expect("sessions dir");
    for name in ["secret", "x", "passwd"] {
        for dir in [&corecoder, &sandbox.home, &sandbox.dir] {
            std::fs::write(dir.join(format!("{name}.jsonl")), &decoy).expect("decoy");
        }
    }
    let absolute = sandbox.home.join("secret.jsonl");
    let ids = [
        "../../etc/passwd",
        "/etc/passwd",
        "..\\..\\x",
        "../x",
        "../secret",
        "../../secret",
        "..\\..\\secret.jsonl",
        "../work/secret",
        "..",
        absolute.to_str().expect("utf-8 path"),
    ];
    let script = ids.iter().map(|_| answer("should not be asked")).collect();
    let server = Server::start(script);
    for id in ids {
        let out = run(&["-r", id, "-p", "hi"], &server, &sandbox);
        assert_eq!(out.code, 2, "-r {id}: {out:?}");
        assert!(!out.stderr.contains("panicked"), "{out:?}");
    }
    let requests = server.requests();
    assert!(!sent(&requests).contains("SECRET"), "{}", sent(&requests));
    assert!(requests.is_empty(), "{} requests were sent", requests.len());
}

/// `/save NAME` names the session without moving it: its file keeps its id, `/sessions`
/// lists the name beside it, newest first.
#[test]
fn save_names_the_session_and_sessions_lists_newest_first() {
    let sandbox = Sandbox::new("long_save");
    let (out, _) = check(&sandbox, &["-p", "older task one"], vec![answer("done")]);
    assert_eq!(out.code, 0, "{out:?}");
    let older = only_session_id(&sandbox);
    let mut repl = Repl::start(&sandbox, &[], vec![answer("first answer")]);
    repl.turn("newer task two", "first answer");
    repl.turn(
        "/save alpha-work",
        "Saved as alpha-work: resume with corecoder -r alpha-work",
    );
    let names: Vec<PathBuf> = session_files(&sandbox);
    let names: Vec<String> = (names.iter().filter_map(|p| p.file_name()))
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names.contains(&format!("{older}.jsonl")), "{names:?}");
    assert!(names.contains(&"alpha-work.name".to_string()), "{names:?}");
    repl.turn("/sessions", "Resume one with corecoder -r ID.");
    let screen = repl.pty.screen();
    let listed = screen.rsplit_once("> /sessions").expect("the command").1;
    let newer_at = listed.find("(alpha-work)").expect("alpha-work listed");
    let older_at = listed
        .find(&older)
        .unwrap_or_else(|| panic!("{older}: {listed}"));
    assert!(newer_at < older_at, "newest first:\n{listed}");
    assert!(
        listed[newer_at..older_at].contains("newer task two"),
        "{listed}"
    );
    assert!(listed[older_at..].contains("older task one"), "{listed}");
}

/// A name is an alias: the `session_id` a `--output-format json` run printed still resumes
/// the session after `/save NAME`, and so does the name. A name another session holds, or
/// another session's id, is refused.
#[test]
fn a_saved_name_is_an_alias_and_the_printed_id_still_resumes() {
    let sandbox = Sandbox::new("long_save_alias");
    let args = ["-p", "first task", "--output-format", "json"];
    let (out, _) = check(&sandbox, &args, vec![answer("first answer")]);
    assert_eq!(out.code, 0, "{out:?}");
    let printed: Value = serde_json::from_str(out.stdout.trim()).expect("one JSON object");
    let id = printed["session_id"]
        .as_str()
        .expect("session_id")
        .to_string();
    let args = ["-p", "other task", "--output-format", "json"];
    let (out, _) = check(&sandbox, &args, vec![answer("other")]);
    assert_eq!(out.code, 0, "{out:?}");
    let printed: Value = serde_json::from_str(out.stdout.trim()).expect("one JSON object");
    let other_id = printed["session_id"]
        .as_str()
        .expect("session_id")
        .to_string();
    let mut repl = Repl::start(&sandbox, &["-r", &id], vec![answer("second answer")]);
    repl.turn("second task", "second answer");
    repl.turn("/save work", "Saved as work: resume with corecoder -r work");
    repl.turn("/save work", "Saved as work");
    repl.turn("/save", &format!("Session: {id} (work)"));
    repl.quit();
    let mut other = Repl::start(&sandbox, &["-r", &other_id], vec![]);
    other.turn(
        "/save work",
        "Not saved: a session named work already exists",
    );
    other.turn(&format!("/save {id}"), "Not saved: a session named");
    other.quit();
    for (resume, reply) in [(id.as_str(), "by id"), ("work", "by name")] {
        let args = ["-r", resume, "-p", "and now?"];
        let (out, requests) = check(&sandbox, &args, vec![answer(reply)]);
        assert_eq!(out.code, 0, "-r {resume}: {out:?}");
        assert!(
            out.stderr.contains(&format!("Resumed session {resume}")),
            "{out:?}"
        );
        let body = sent(&requests);
        assert!(
            body.contains("first task") && body.contains("second task"),
            "{body}"
        );
        assert!(!body.contains("other task"), "{body}");
    }
}

/// A session CoreCoder (the Python original) saved in `~/.corecoder/sessions/` is listed by
/// `/sessions` and resumed by `-r ID` on its model, its history sent as it was; CoreCoder's
/// file is left as it is and the session goes on in an `ID.jsonl` of ours.
#[test]
fn a_corecoder_session_is_listed_and_resumed() {
    let sandbox = Sandbox::new("long_from_corecoder");
    let id = "session_20261201_101500_ab12cd34";
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("fixtures/corecoder/{id}.json"));
    let saved = std::fs::read_to_string(&fixture).expect("the fixture");
    std::fs::create_dir_all(sessions_dir(&sandbox)).expect("sessions dir");
    let planted = sessions_dir(&sandbox).join(format!("{id}.json"));
    std::fs::write(&planted, &saved).expect("plant");
    let mut repl = Repl::start(&sandbox, &[], vec![]);
    repl.turn("/sessions", "Resume one with corecoder -r ID.");
    let screen = repl.pty.screen();
    let listed = screen.rsplit_once("> /sessions").expect("the command").1;
    assert!(
        listed.contains(id) && listed.contains("(saved by CoreCoder)"),
        "{listed}"
    );
    assert!(
        listed.contains("why does add() give the wrong answer?"),
        "{listed}"
    );
    repl.quit();

    let (out, requests) = check(
        &sandbox,
        &["-r", id, "-p", "and now?"],
        vec![answer("fixed")],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains(&format!("Resumed session {id}: 4 messages, model gpt-4o.")),
        "{out:?}"
    );
    assert_eq!(requests[0].body["model"], "gpt-4o");
    let stored: Value = serde_json::from_str(&saved).expect("JSON");
    let mut expected = stored["messages"].as_array().expect("messages").clone();
    expected.push(json!({"role": "user", "content": "and now?"}));
    assert_eq!(conversation(&requests[0]), expected);
    assert_eq!(std::fs::read_to_string(&planted).expect("kept"), saved);

    let (out, requests) = check(&sandbox, &["-r", id, "-p", "again"], vec![answer("ok")]);
    assert_eq!(out.code, 0, "{out:?}");
    let body = sent(&requests);
    assert!(
        body.contains("and now?") && body.contains("fixed"),
        "{body}"
    );
}

/// A `/model` switch survives a resume, the resume shows where the conversation left off,
/// leaving prints what the session spent, and `/sessions` lists date and directory.
#[test]
fn resume_keeps_the_model_and_shows_the_last_exchange() {
    let sandbox = Sandbox::new("long_resume_model");
    let mut repl = Repl::start(&sandbox, &[], vec![answer("hi there, friend")]);
    repl.turn("hello from before", "hi there, friend");
    repl.turn("/model other-model", "Model: other-model");
    repl.turn("/sessions", "UTC");
    let screen = repl.pty.screen();
    assert!(
        screen.contains(&sandbox.dir.display().to_string()),
        "{screen}"
    );
    repl.turn("/compact", "Nothing to compact yet");
    repl.pty.send("\x04");
    // The cost line on leaving; waited for, since the process may end before the terminal's
    // last bytes are read.
    repl.expect("tokens: ");
    assert_eq!(
        repl.pty.wait_exit(crate::driver::WAIT),
        Some(0),
        "{}",
        repl.pty.screen()
    );
    let screen = repl.pty.screen();
    assert_eq!(
        screen.matches("Nothing to compact yet").count(),
        1,
        "{screen}"
    );

    let server = crate::server::Server::start(vec![answer("resumed")]);
    let out = crate::run::run(&["-c", "-p", "go on"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(server.requests()[0].body["model"], "other-model");
    assert!(
        out.stderr.contains("messages, model other-model."),
        "{out:?}"
    );
    assert!(out.stderr.contains("  you: hello from before"), "{out:?}");
    assert!(out.stderr.contains("  answer: hi there, friend"), "{out:?}");
}

/// A `*.json` in the sessions folder is read as CoreCoder's, so a hostile one is tried: a link
/// to a file elsewhere is not followed, a file past 64 MiB is not read, and JSON nested past
/// serde_json's limit or of another shape is refused. Each says why, and nothing is sent.
#[test]
fn a_hostile_corecoder_file_is_refused_saying_why() {
    let sandbox = Sandbox::new("long_hostile_corecoder");
    let dir = sessions_dir(&sandbox);
    std::fs::create_dir_all(&dir).expect("sessions dir");
    let elsewhere = sandbox.dir.join("elsewhere.json");
    let secret = r#"{"id":"x","model":"m","messages":[{"role":"user","content":"TOPSECRET"}]}"#;
    std::fs::write(&elsewhere, secret).expect("a file elsewhere");
    std::os::unix::fs::symlink(&elsewhere, dir.join("linked.json")).expect("link");
    let big = std::fs::File::create(dir.join("big.json")).expect("big");
    big.set_len((64 << 20) + 1).expect("sized");
    std::fs::write(dir.join("deep.json"), "[".repeat(100_000)).expect("deep");
    std::fs::write(dir.join("other.json"), r#"{"not": "a session"}"#).expect("other");
    let cases = [
        ("linked", "it is a symbolic link, which is not followed"),
        ("big", "larger than 64 MiB"),
        ("deep", "not a CoreCoder session"),
        ("other", "no \"messages\" list"),
    ];
    for (id, said) in cases {
        let (out, requests) = check(&sandbox, &["-r", id, "-p", "go on"], vec![answer("no")]);
        assert_ne!(out.code, 0, "{id}: {out:?}");
        assert!(out.stderr.contains(said), "{id}: {out:?}");
        assert!(requests.is_empty(), "{id}: nothing is sent");
        assert!(!format!("{out:?}").contains("TOPSECRET"), "{id}: {out:?}");
    }
}
