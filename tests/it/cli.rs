//! The command line and configuration: flags, environment variables, `.env`, usage errors,
//! `--version`/`--help`, and the offline demo that runs when there is no key.

use crate::run::{Output, Sandbox, run, run_with};
use crate::server::{Recorded, Reply, Server};
use crate::sse;

/// Run `args` with exactly `env` plus the server's URL as `OPENAI_BASE_URL`.
fn check(name: &str, args: &[&str], env: &[(&str, &str)]) -> (Output, Vec<Recorded>) {
    let sandbox = Sandbox::new(name);
    check_in(&sandbox, args, env)
}

fn check_in(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> (Output, Vec<Recorded>) {
    let server = Server::start(vec![Reply::Sse(sse::text("ok"))]);
    let url = server.url();
    let mut full = vec![("OPENAI_BASE_URL", url.as_str())];
    full.extend_from_slice(env);
    let output = run_with(args, &full, sandbox);
    (output, server.requests())
}

const KEY: (&str, &str) = ("CORECODER_API_KEY", "sk-test");

/// A usage error: exit 2, one line on stderr naming `what`, no panic, nothing sent.
fn assert_usage_error(out: &Output, requests: &[Recorded], what: &str) {
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains(what),
        "stderr should name {what}: {out:?}"
    );
    assert_eq!(out.stderr.trim().lines().count(), 1, "one line: {out:?}");
    assert!(!out.stderr.contains("panicked"), "{out:?}");
    assert!(requests.is_empty(), "a usage error sends nothing");
}

#[test]
fn bad_env_number_is_a_usage_error() {
    let env = [KEY, ("CORECODER_MAX_TOKENS", "abc")];
    let (out, requests) = check("bad_env", &["-p", "hi"], &env);
    assert_usage_error(&out, &requests, "CORECODER_MAX_TOKENS");
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let (out, requests) = check("unknown_flag", &["-p", "hi", "--frobnicate"], &[KEY]);
    assert_usage_error(&out, &requests, "--frobnicate");
}

#[test]
fn flag_without_value_is_a_usage_error() {
    let (out, requests) = check("missing_value", &["-p", "hi", "--model"], &[KEY]);
    assert_usage_error(&out, &requests, "model");
}

#[test]
fn bad_flag_number_is_a_usage_error() {
    let (out, requests) = check("bad_rounds", &["-p", "hi", "--max-rounds", "many"], &[KEY]);
    assert_usage_error(&out, &requests, "max-rounds");
}

#[test]
fn version_prints_name_and_version() {
    let (out, requests) = check("version", &["--version"], &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.trim(), "corecoder 0.1.0");
    assert!(requests.is_empty());
    let (short, _) = check("version_short", &["-v"], &[]);
    assert_eq!(short.stdout.trim(), "corecoder 0.1.0", "{short:?}");
}

#[test]
fn help_lists_the_flags() {
    let (out, requests) = check("help", &["--help"], &[]);
    assert_eq!(out.code, 0, "{out:?}");
    let flags = [
        "-p",
        "--yes",
        "--model",
        "--base-url",
        "--api-key",
        "--max-rounds",
        "--demo",
    ];
    for flag in flags {
        assert!(out.stdout.contains(flag), "help lacks {flag}: {out:?}");
    }
    assert!(requests.is_empty());
}

#[test]
fn env_settings_shape_the_request() {
    let env = [
        KEY,
        ("CORECODER_MODEL", "env-model"),
        ("CORECODER_MAX_TOKENS", "100"),
        ("CORECODER_TEMPERATURE", "0.5"),
    ];
    let (out, requests) = check("env_settings", &["-p", "hi"], &env);
    assert_eq!(out.code, 0, "{out:?}");
    let body = &requests[0].body;
    assert_eq!(body["model"], "env-model");
    assert_eq!(body["max_tokens"], 100);
    assert_eq!(body["temperature"].as_f64(), Some(0.5));
}

#[test]
fn flags_override_env() {
    let sandbox = Sandbox::new("flags_override");
    let server = Server::start(vec![Reply::Sse(sse::text("ok"))]);
    let url = server.url();
    let env = [
        KEY,
        ("CORECODER_MODEL", "env-model"),
        // Nothing listens on port 9: only the --base-url flag can reach the server.
        ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
    ];
    let args = [
        "-p",
        "hi",
        "-m",
        "flag-model",
        "--api-key",
        "sk-flag",
        "--base-url",
        &url,
    ];
    let out = run_with(&args, &env, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let requests = server.requests();
    assert_eq!(requests[0].body["model"], "flag-model");
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-flag"));
}

/// Run with `env` as the only key source; the request must carry `key`.
fn assert_key_sent(name: &str, env: &[(&str, &str)], key: &str) {
    let (out, requests) = check(name, &["-p", "hi"], env);
    assert_eq!(out.code, 0, "{name}: {out:?}");
    let expected = format!("Bearer {key}");
    assert_eq!(
        requests[0].header("authorization"),
        Some(expected.as_str()),
        "{name}"
    );
}

#[test]
fn api_key_variables_in_order_of_precedence() {
    assert_key_sent(
        "key_openai",
        &[("OPENAI_API_KEY", "sk-openai")],
        "sk-openai",
    );
    assert_key_sent(
        "key_deepseek",
        &[("DEEPSEEK_API_KEY", "sk-deep")],
        "sk-deep",
    );
    let openai_over_deepseek = [
        ("DEEPSEEK_API_KEY", "sk-deep"),
        ("OPENAI_API_KEY", "sk-openai"),
    ];
    assert_key_sent("key_two", &openai_over_deepseek, "sk-openai");
    let all = [
        ("DEEPSEEK_API_KEY", "sk-deep"),
        ("OPENAI_API_KEY", "sk-openai"),
        KEY,
    ];
    assert_key_sent("key_all", &all, "sk-test");
}

#[test]
fn corecoder_base_url_is_used_without_openai_base_url() {
    let sandbox = Sandbox::new("corecoder_base_url");
    let server = Server::start(vec![Reply::Sse(sse::text("ok"))]);
    let url = server.url();
    let out = run_with(
        &["-p", "hi"],
        &[KEY, ("CORECODER_BASE_URL", &url)],
        &sandbox,
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(server.requests().len(), 1);
}

/// A key and the host it goes to come from the same place: the project's `.env` supplies a key
/// once the project is trusted (an untrusted one is ignored: `reads::`, `trust::`).
#[test]
fn dotenv_in_working_dir_supplies_the_key() {
    let sandbox = Sandbox::new("dotenv");
    sandbox.write(".env", "# comment\nCORECODER_API_KEY=sk-dotenv\n");
    let (out, requests) = check_in(&sandbox, &["-p", "hi", "--trust-project"], &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-dotenv")
    );
}

#[test]
fn dotenv_does_not_override_the_environment() {
    let sandbox = Sandbox::new("dotenv_env_wins");
    sandbox.write(
        ".env",
        "CORECODER_API_KEY=sk-dotenv\nCORECODER_MODEL=dotenv-model\n",
    );
    let (out, requests) = check_in(&sandbox, &["-p", "hi", "--trust-project"], &[KEY]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(
        requests[0].body["model"], "dotenv-model",
        ".env still fills the gaps"
    );
}

/// The demo brings its own server and key, and works in its own temp dir, not in ours.
#[test]
fn demo_runs_offline() {
    let sandbox = Sandbox::new("demo");
    let out = run_with(&["--demo"], &[], &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    // The tools' own results, not only the scripted answer: the test failed, the edit landed,
    // and the test run after it passed.
    let shown = format!("{}{}", out.stdout, out.stderr);
    let results = [
        "> bash(sh test_calc.sh)\n  FAIL: add 2 3 = -1, expected 5\n",
        "\n  +    echo $(( $1 + $2 ))\n",
        "> bash(sh test_calc.sh)\n  ok: add 2 3 = 5\n",
    ];
    for result in results {
        assert!(shown.contains(result), "{result:?} not shown: {out:?}");
    }
    let left = std::fs::read_dir(&sandbox.dir).map_or(0, |entries| entries.count());
    assert_eq!(left, 0, "the demo wrote into the working directory");
}

#[test]
fn no_key_at_all_runs_the_demo() {
    let sandbox = Sandbox::new("no_key");
    let out = run_with(&[], &[], &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    let note = out.stderr.to_lowercase();
    assert!(
        note.contains("api key") || note.contains("api_key"),
        "{out:?}"
    );
}

/// `run` (key + URL from the server) also covers the short model flag on the common path.
#[test]
fn short_model_flag_is_sent() {
    let sandbox = Sandbox::new("model_flag");
    let server = Server::start(vec![Reply::Sse(sse::text("ok"))]);
    let out = run(&["-p", "hi", "-m", "other-model"], &server, &sandbox);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(server.requests()[0].body["model"], "other-model");
}
