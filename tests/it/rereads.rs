//! A file read again unchanged costs a short note, not its lines again (issue 32), through the
//! binary against a scripted model: the note while the earlier result is in the history and
//! the file is as it was; the lines again once the file changed, or once compaction took the
//! earlier result out of the history.

use crate::run::{Sandbox, run, run_with};
use crate::server::{Recorded, Reply, Server};
use crate::sse;
use serde_json::json;

const NOTE: &str = "(unchanged since you read it";

/// One read of `path` per reply, answered without usage (so the estimate counts every
/// message), then "done".
fn reads_of(paths: &[&str]) -> Vec<Reply> {
    let read = |(n, path): (usize, &&str)| {
        let args = json!({"file_path": path}).to_string();
        let deltas = sse::call_deltas(&[(format!("r{n}").as_str(), "read_file", args.as_str())]);
        Reply::Sse(sse::role() + &deltas + &sse::finish("tool_calls") + &sse::done())
    };
    let mut script: Vec<Reply> = paths.iter().enumerate().map(read).collect();
    script.push(Reply::Sse(sse::text("done")));
    script
}

/// The tool results the last request carries, by call id.
fn results(requests: &[Recorded]) -> Vec<(String, String)> {
    requests.last().expect("a request").tool_results()
}

#[test]
fn a_second_read_of_an_unchanged_file_is_a_note_and_a_changed_one_is_read_again() {
    let sandbox = Sandbox::new("rereads_note");
    sandbox.write("a.txt", "alpha\nbeta\n");
    let mut script = reads_of(&["a.txt", "a.txt"]);
    script.pop();
    let append = json!({"command": "echo gamma >> a.txt"});
    script.push(Reply::Sse(sse::tool_calls(&[("b", "bash", append)])));
    script.extend(reads_of(&["a.txt"]).into_iter().map(|reply| match reply {
        Reply::Sse(body) => Reply::Sse(body.replace("\"r0\"", "\"r3\"")),
        other => other,
    }));
    let server = Server::start(script);
    let out = run(&["-p", "read it twice", "--yes"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let results = results(&server.requests());
    let text = |id: &str| (results.iter().find(|(i, _)| i == id)).map(|(_, t)| t.clone());
    let first = text("r0").expect("r0");
    assert!(first.contains("alpha") && first.contains("beta"), "{first}");
    let second = text("r1").expect("r1");
    assert!(second.starts_with(NOTE), "{second}");
    let changed = text("r3").expect("r3");
    assert!(
        changed.contains("alpha") && changed.contains("gamma"),
        "{changed}"
    );
}

#[test]
fn after_compaction_took_the_earlier_result_out_a_read_shows_the_file_again() {
    let sandbox = Sandbox::new("rereads_compacted");
    let filler = |name: &str| format!("{name}: 0123456789 filler line for the window\n");
    for name in ["big", "b1", "b2", "b3", "b4"] {
        sandbox.write(&format!("{name}.txt"), &filler(name).repeat(420));
    }
    let paths = ["big.txt", "b1.txt", "b2.txt", "b3.txt", "b4.txt", "big.txt"];
    let server = Server::answering_summaries(reads_of(&paths), "Summary: the files were read.");
    let url = server.url();
    let env = [
        ("CORECODER_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", url.as_str()),
        ("CORECODER_MAX_CONTEXT", "20000"),
    ];
    let out = run_with(&["-p", "go", "--yes"], &env, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let turns: Vec<Recorded> = (server.requests().into_iter())
        .filter(|r| r.body.get("tools").is_some())
        .collect();
    let results = results(&turns);
    let text = |id: &str| (results.iter().find(|(i, _)| i == id)).map(|(_, t)| t.clone());
    let whole = filler("big").repeat(420);
    let first = text("r0").unwrap_or_default();
    assert!(
        first.len() < whole.len() / 2,
        "r0 was compacted away: {first:.300}"
    );
    let again = text("r5").expect("r5");
    assert!(!again.starts_with(NOTE), "{again:.300}");
    assert!(
        again.matches("big: 0123456789").count() == 420,
        "{again:.300}"
    );
}
