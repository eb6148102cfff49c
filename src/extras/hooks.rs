//! Hooks: the user's own shell commands, run at fixed points of a session, with the same
//! contract as Claude Code's hooks so existing hook scripts keep working.
//!
//! The agent loop asks `Hooks` before a tool call (`pre_tool_use`, which may block it), after
//! it (`post_tool_use`, whose output is appended to the result), when the user submits a
//! prompt (`user_prompt_submit`, which may refuse it), at the start of a session and when the
//! model stops (`notify`). Each hook gets one JSON object on stdin and answers with its exit
//! code (2 = block, stderr says why) or a JSON object on stdout. A hook that fails, hangs or
//! cannot start becomes a warning, never an error. Hooks cannot skip our consent questions.
//!
//! The config files are read in `hooks_config.rs`; each command runs through the one process
//! runner (`tools/support/process.rs`), so a hook's stragglers cannot hold the turn.

use crate::core::event::Event;
use crate::core::message::{Outcome, ToolCall};
/// When a hook runs; defined with the config it is read from.
pub(crate) use crate::extras::hooks_config::HookEvent;
use crate::extras::hooks_config::{Hook, matches_tool, parse};
use crate::tools::support::files::read_settings_text;
use crate::tools::support::process::{self, Ending, Finished, Keep, Limits};
use crate::tools::support::text::first_chars;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Per stream we keep the first this much of what a hook prints; the rest is read and dropped.
const KEEP_BYTES: usize = 64 * 1024;

/// Who is running the hooks, and where.
pub(crate) struct HookContext<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) cwd: &'a Path,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PreToolDecision {
    Allow,
    /// The call does not run; the reason is what the model sees instead of a result.
    Block(String),
}

/// Every configured hook, in the order of the files read.
#[derive(Debug, Default)]
pub struct Hooks {
    hooks: Vec<Hook>,
}

/// What one hook answered, read the way Claude Code reads it.
enum HookResponse {
    /// Exit 0: plain stdout (trimmed, maybe empty), or the context its JSON added.
    Proceed(String),
    /// Exit 2 (stderr), or JSON saying block/deny (its reason).
    Block(String),
    /// Any other ending; a warning was recorded.
    Failed,
}

impl Hooks {
    /// Read the files in order (the user's, then the project's where `setup.rs` found it
    /// trusted, then settings files with a `hooks` key); a broken one is a warning and brings
    /// no hooks.
    pub fn load(files: &[PathBuf]) -> (Hooks, Vec<String>) {
        let mut hooks = Hooks::default();
        let mut warnings = Vec::new();
        // A missing file is simply no hooks; only files that exist can be broken.
        for file in files.iter().filter(|f| f.exists()) {
            let mut found = Vec::new();
            let parsed = read_settings_text(file)
                .map_err(|e| e.to_string())
                .and_then(|text| parse(&text, &mut found, &mut warnings));
            match parsed {
                Ok(()) => hooks.hooks.extend(found),
                Err(e) => warnings.push(format!("hooks: {} ignored: {e}", file.display())),
            }
        }
        (hooks, warnings)
    }

    pub(crate) fn count(&self) -> usize {
        self.hooks.len()
    }

    /// One call is about to be settled: `Some` is the refusal the model reads when a
    /// PreToolUse hook vetoes it. What goes wrong running a hook is told as a notice.
    pub(crate) fn before_call(
        &self,
        context: &HookContext,
        call: &ToolCall,
        on_event: &mut dyn FnMut(Event),
    ) -> Option<Outcome> {
        if self.count() == 0 {
            return None;
        }
        let mut warnings = Vec::new();
        let decision = self.pre_tool_use(context, &call.name, &input(call), &mut warnings);
        warnings.iter().for_each(|w| on_event(Event::Notice(w)));
        match decision {
            PreToolDecision::Allow => None,
            PreToolDecision::Block(reason) => {
                Some(Outcome::text(format!("Blocked by a hook: {reason}")))
            }
        }
    }

    /// One call has its result: the PostToolUse hooks see it, and what they print is added
    /// to the result for the model.
    pub(crate) fn after_call(
        &self,
        context: &HookContext,
        call: &ToolCall,
        mut outcome: Outcome,
        on_event: &mut dyn FnMut(Event),
    ) -> Outcome {
        if self.count() == 0 {
            return outcome;
        }
        let mut warnings = Vec::new();
        let (name, text) = (&call.name, &outcome.text);
        let said = self.post_tool_use(context, name, &input(call), text, &mut warnings);
        warnings.iter().for_each(|w| on_event(Event::Notice(w)));
        if let Some(said) = said {
            outcome.text.push_str(&format!("\n\n[hook] {said}"));
        }
        outcome
    }

    pub(crate) fn pre_tool_use(
        &self,
        ctx: &HookContext,
        tool: &str,
        input: &Value,
        warnings: &mut Vec<String>,
    ) -> PreToolDecision {
        let extra = json!({"tool_name": tool, "tool_input": input});
        for hook in self.matching(HookEvent::PreToolUse, tool) {
            if let HookResponse::Block(reason) = run_hook(hook, ctx, &extra, warnings) {
                return PreToolDecision::Block(reason);
            }
        }
        PreToolDecision::Allow
    }

    /// Text for the model to read after the tool result, from every hook that had something to say.
    pub(crate) fn post_tool_use(
        &self,
        ctx: &HookContext,
        tool: &str,
        input: &Value,
        response: &str,
        warnings: &mut Vec<String>,
    ) -> Option<String> {
        let extra = json!({"tool_name": tool, "tool_input": input, "tool_response": response});
        let said: Vec<String> = self
            .matching(HookEvent::PostToolUse, tool)
            .filter_map(|hook| match run_hook(hook, ctx, &extra, warnings) {
                HookResponse::Proceed(text) | HookResponse::Block(text) => Some(text),
                HookResponse::Failed => None,
            })
            .filter(|text| !text.is_empty())
            .collect();
        (!said.is_empty()).then(|| said.join("\n"))
    }

    pub(crate) fn user_prompt_submit(
        &self,
        ctx: &HookContext,
        prompt: &str,
        warnings: &mut Vec<String>,
    ) -> Result<(), String> {
        let extra = json!({"prompt": prompt});
        for hook in self.matching(HookEvent::UserPromptSubmit, "") {
            if let HookResponse::Block(reason) = run_hook(hook, ctx, &extra, warnings) {
                return Err(reason);
            }
        }
        Ok(())
    }

    /// `Stop` and `SessionStart`: run for their side effects; what they answer is not used.
    pub(crate) fn notify(&self, ctx: &HookContext, event: HookEvent, warnings: &mut Vec<String>) {
        for hook in self.matching(event, "") {
            run_hook(hook, ctx, &json!({}), warnings);
        }
    }

    fn matching(&self, event: HookEvent, tool: &str) -> impl Iterator<Item = &Hook> {
        let tool_event = matches!(event, HookEvent::PreToolUse | HookEvent::PostToolUse);
        self.hooks
            .iter()
            .filter(move |h| h.event == event && (!tool_event || matches_tool(&h.matcher, tool)))
    }
}

/// Run one hook with the event's JSON on stdin and read its answer. Problems become warnings.
fn run_hook(
    hook: &Hook,
    ctx: &HookContext,
    extra: &Value,
    warnings: &mut Vec<String>,
) -> HookResponse {
    let mut input = extra.clone();
    // The variant names are Claude Code's event names, so `Debug` spells them right.
    input["hook_event_name"] = format!("{:?}", hook.event).into();
    input["session_id"] = ctx.session_id.into();
    input["cwd"] = ctx.cwd.display().to_string().into();
    let stdin = input.to_string();
    let short = first_chars(&hook.command, 60);
    let mut warn = |problem: String| {
        warnings.push(format!("hook '{short}' ({:?}) {problem}", hook.event));
        HookResponse::Failed
    };
    let finished = match run_command(&hook.command, ctx.cwd, stdin.as_bytes(), hook.timeout) {
        Ok(finished) => finished,
        Err(e) => return warn(e),
    };
    let stderr = finished.stderr.text();
    let stderr = stderr.trim();
    let first_line = stderr.lines().next().unwrap_or("");
    match finished.ending {
        Ending::TimedOut | Ending::Interrupted => {
            warn(format!("timed out after {}s", hook.timeout.as_secs_f64()))
        }
        Ending::Exited(0) => read_answer(finished.stdout.text().trim()),
        Ending::Exited(2) if stderr.is_empty() => {
            HookResponse::Block(format!("blocked by hook '{short}'"))
        }
        Ending::Exited(2) => HookResponse::Block(stderr.to_string()),
        Ending::Exited(code) => warn(format!("exited {code}: {first_line}")),
    }
}

/// Exit 0: plain text is passed on; a JSON object may block (`"decision": "block"`, or
/// Claude Code's `permissionDecision: "deny"`) or add context. "allow" and "ask" change
/// nothing: a hook may refuse a call, never wave one past our consent.
fn read_answer(stdout: &str) -> HookResponse {
    let Ok(Value::Object(answer)) = serde_json::from_str::<Value>(stdout) else {
        return HookResponse::Proceed(stdout.to_string());
    };
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
    let specific = answer.get("hookSpecificOutput");
    let field = |name: &str| specific.and_then(|s| s.get(name));
    let reason = text(answer.get("reason")).unwrap_or_else(|| "blocked by a hook".into());
    if text(answer.get("decision")).as_deref() == Some("block") {
        HookResponse::Block(reason)
    } else if text(field("permissionDecision")).as_deref() == Some("deny") {
        let why = text(field("permissionDecisionReason"));
        HookResponse::Block(why.unwrap_or(reason))
    } else {
        HookResponse::Proceed(text(field("additionalContext")).unwrap_or_default())
    }
}

/// Run `command` under `sh -c` in its own process group, with `input` on its stdin, through
/// the one process runner (`process.rs`): a hook that never reads its stdin cannot stall us,
/// and when the hook ends (or is killed at its timeout) whatever it left holding a pipe, even
/// in a session of its own (`setsid`), holds us only for a short grace.
fn run_command(
    command: &str,
    cwd: &Path,
    input: &[u8],
    timeout: Duration,
) -> Result<Finished, String> {
    let mut shell = process::shell("sh", command, cwd);
    // The secret proxy variables kept for our own requests stay ours (`secrets.rs`).
    crate::extras::secrets::keep_from_child(&mut shell);
    // Claude Code's hook scripts find the project through this variable.
    shell.env("CLAUDE_PROJECT_DIR", cwd).stdin(Stdio::piped());
    let child = shell.spawn().map_err(|e| format!("could not start: {e}"))?;
    let keep = Keep {
        head: KEEP_BYTES,
        tail: 0,
    };
    // Only a hook's own timeout ends it; Ctrl+C waits for it, as it always has.
    let never = AtomicBool::new(false);
    process::run(child, input, Limits { timeout, keep }, &never)
}

/// The call's arguments as hooks and checkpoints see them (`{}` when they are not JSON).
pub(crate) fn input(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::Object(Default::default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extras::hooks_config::DEFAULT_TIMEOUT;
    use crate::tools::test_support::TempDir;
    use std::time::Instant;

    fn hooks(json: &str) -> Hooks {
        let mut hooks = Hooks::default();
        parse(json, &mut hooks.hooks, &mut Vec::new()).expect("valid hooks");
        hooks
    }

    fn ctx(dir: &TempDir) -> HookContext<'_> {
        HookContext {
            session_id: "s-1",
            cwd: &dir.0,
        }
    }

    fn pre(hooks: &Hooks, dir: &TempDir, tool: &str) -> (PreToolDecision, Vec<String>) {
        let mut warnings = Vec::new();
        let input = json!({"command": "ls"});
        let decision = hooks.pre_tool_use(&ctx(dir), tool, &input, &mut warnings);
        (decision, warnings)
    }

    #[test]
    fn load_merges_both_forms_and_survives_broken_files() {
        let dir = TempDir::new("hooks-load");
        let user = dir.write(
            "user.json",
            r#"{"PreToolUse": [{"matcher": "bash", "command": "a.sh", "timeout": 5}]}"#,
        );
        let project = dir.write(
            "project.json",
            r#"{"permissions": {}, "hooks": {
                "PostToolUse": [{"matcher": "Bash|Edit", "hooks": [
                    {"type": "command", "command": "b.sh", "timeout": 2.5},
                    {"type": "command", "command": "c.sh"}]}],
                "Notification": [{"hooks": [{"type": "command", "command": "d.sh"}]}]}}"#,
        );
        let (loaded, warnings) = Hooks::load(&[user.clone(), project]);
        assert_eq!(loaded.count(), 3);
        let commands: Vec<_> = loaded.hooks.iter().map(|h| h.command.as_str()).collect();
        assert_eq!(commands, ["a.sh", "b.sh", "c.sh"]);
        assert_eq!(loaded.hooks[0].timeout, Duration::from_secs(5));
        assert_eq!(loaded.hooks[1].timeout, Duration::from_millis(2500));
        assert_eq!(loaded.hooks[2].timeout, DEFAULT_TIMEOUT);
        assert_eq!(loaded.hooks[1].event, HookEvent::PostToolUse);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("Notification"));

        let broken = dir.write("broken.json", "{not json");
        let (loaded, warnings) = Hooks::load(&[broken, dir.0.join("missing.json")]);
        assert_eq!(loaded.count(), 0);
        assert_eq!(
            warnings.len(),
            1,
            "a missing file is no warning: {warnings:?}"
        );
        let no_command = dir.write("no-command.json", r#"{"Stop": [{"timeout": 1}]}"#);
        let (loaded, warnings) = Hooks::load(&[user, no_command]);
        assert_eq!((loaded.count(), warnings.len()), (1, 1));
        assert_eq!(Hooks::default().count(), 0);
    }

    #[test]
    fn matchers_take_our_names_claude_names_and_alternatives() {
        let table = [
            ("bash", "bash", true),
            ("bash", "grep", false),
            ("Bash", "bash", true),
            ("bash", "Bash", false),
            ("", "glob", true),
            ("*", "edit_file", true),
            ("Edit|Write", "write_file", true),
            ("Edit | Write", "edit_file", true),
            ("MultiEdit", "edit_file", true),
            ("Edit|Write", "bash", false),
            ("Read|Glob|Grep", "grep", true),
            ("Task", "agent", true),
            ("TodoWrite", "todo_write", true),
            ("read", "read_file", false),
        ];
        for (matcher, tool, expected) in table {
            assert_eq!(
                matches_tool(matcher, tool),
                expected,
                "{matcher:?} vs {tool}"
            );
        }
    }

    #[test]
    fn hooks_get_the_event_as_json_on_stdin_in_cwd() {
        let dir = TempDir::new("hooks-stdin");
        let hooks = hooks(
            r#"{"PreToolUse": [{"matcher": "Bash", "command": "cat > pre.json"}],
                "PostToolUse": [{"command": "cat > post.json"}],
                "UserPromptSubmit": [{"command": "cat > prompt.json; echo \"$CLAUDE_PROJECT_DIR\" > env"}],
                "Stop": [{"command": "cat > stop.json"}]}"#,
        );
        let read = |name: &str| -> Value {
            let text = std::fs::read_to_string(dir.0.join(name)).expect("hook wrote its stdin");
            serde_json::from_str(&text).expect("stdin was JSON")
        };
        let mut warnings = Vec::new();
        assert_eq!(pre(&hooks, &dir, "bash").0, PreToolDecision::Allow);
        let input = read("pre.json");
        assert_eq!(input["hook_event_name"], "PreToolUse");
        assert_eq!(input["session_id"], "s-1");
        assert_eq!(input["cwd"], dir.0.display().to_string());
        assert_eq!(input["tool_name"], "bash");
        assert_eq!(input["tool_input"], json!({"command": "ls"}));

        let said = hooks.post_tool_use(&ctx(&dir), "grep", &json!({}), "3 hits", &mut warnings);
        assert_eq!(said, None);
        let input = read("post.json");
        assert_eq!(input["hook_event_name"], "PostToolUse");
        assert_eq!(
            (&input["tool_name"], &input["tool_response"]),
            (&json!("grep"), &json!("3 hits"))
        );

        assert_eq!(
            hooks.user_prompt_submit(&ctx(&dir), "hi", &mut warnings),
            Ok(())
        );
        assert_eq!(read("prompt.json")["prompt"], "hi");
        let env = std::fs::read_to_string(dir.0.join("env")).expect("env");
        assert_eq!(env.trim(), dir.0.display().to_string());

        hooks.notify(&ctx(&dir), HookEvent::Stop, &mut warnings);
        assert_eq!(read("stop.json")["hook_event_name"], "Stop");
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn pre_tool_use_blocks_on_exit_2_and_json_answers() {
        let dir = TempDir::new("hooks-block");
        dir.write(
            "gate.sh",
            "cat > /dev/null\necho 'no rm here' >&2\nexit 2\n",
        );
        let cases = [
            (
                r#"{"PreToolUse": [{"command": "sh gate.sh"}]}"#,
                "no rm here",
            ),
            (
                r#"{"PreToolUse": [{"command": "exit 2"}]}"#,
                "blocked by hook 'exit 2'",
            ),
            (
                r#"{"PreToolUse": [{"command": "echo '{\"decision\": \"block\", \"reason\": \"json says no\"}'"}]}"#,
                "json says no",
            ),
            (
                r#"{"PreToolUse": [{"command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"denied\"}}'"}]}"#,
                "denied",
            ),
        ];
        for (config, reason) in cases {
            let (decision, warnings) = pre(&hooks(config), &dir, "bash");
            assert_eq!(decision, PreToolDecision::Block(reason.into()), "{config}");
            assert!(warnings.is_empty(), "{warnings:?}");
        }
        let allow = r#"{"PreToolUse": [
            {"command": "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"allow\"}}'"},
            {"matcher": "grep", "command": "exit 2"}]}"#;
        assert_eq!(
            pre(&hooks(allow), &dir, "bash"),
            (PreToolDecision::Allow, vec![])
        );
    }

    #[test]
    fn a_failing_hook_allows_with_a_warning() {
        let dir = TempDir::new("hooks-fail");
        let failing =
            hooks(r#"{"PreToolUse": [{"command": "echo oops >&2; echo more >&2; exit 1"}]}"#);
        let (decision, warnings) = pre(&failing, &dir, "bash");
        assert_eq!(decision, PreToolDecision::Allow);
        let expected = "hook 'echo oops >&2; echo more >&2; exit 1' (PreToolUse) exited 1: oops";
        assert_eq!(warnings, [expected]);

        let gone = HookContext {
            session_id: "s",
            cwd: &dir.0.join("no-such-dir"),
        };
        let mut warnings = Vec::new();
        failing.notify(&gone, HookEvent::SessionStart, &mut warnings);
        assert!(warnings.is_empty(), "no SessionStart hooks configured");
        let decision = failing.pre_tool_use(&gone, "bash", &json!({}), &mut warnings);
        assert_eq!(decision, PreToolDecision::Allow);
        assert!(warnings[0].contains("could not start"), "{warnings:?}");
    }

    #[test]
    fn a_hung_hook_is_killed_at_its_timeout() {
        let dir = TempDir::new("hooks-timeout");
        let hung = hooks(
            r#"{"PreToolUse": [{"command": "sleep 30 & echo $! > sleep.pid; wait", "timeout": 1}]}"#,
        );
        let started = Instant::now();
        let (decision, warnings) = pre(&hung, &dir, "bash");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(decision, PreToolDecision::Allow);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].ends_with("(PreToolUse) timed out after 1s"),
            "{warnings:?}"
        );
        let pid = std::fs::read_to_string(dir.0.join("sleep.pid")).expect("pid");
        let stat = format!("/proc/{}/stat", pid.trim());
        // Killed means gone, or a zombie waiting for init to reap it.
        let dead = || std::fs::read_to_string(&stat).map_or(true, |s| s.contains(") Z "));
        let until = Instant::now() + Duration::from_secs(2);
        while !dead() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(dead(), "the sleep survived its hook");
    }

    #[test]
    fn post_tool_use_collects_what_hooks_say() {
        let dir = TempDir::new("hooks-post");
        let hooks = hooks(
            r#"{"PostToolUse": [
                {"matcher": "edit_file", "command": "echo '  formatted  '"},
                {"command": "true"},
                {"command": "echo '{\"decision\": \"block\", \"reason\": \"tests fail\"}'"},
                {"command": "echo '{\"hookSpecificOutput\": {\"additionalContext\": \"lint ok\"}}'"},
                {"command": "echo broken >&2; exit 3"},
                {"matcher": "bash", "command": "echo not me"}]}"#,
        );
        let mut warnings = Vec::new();
        let said = hooks.post_tool_use(&ctx(&dir), "edit_file", &json!({}), "ok", &mut warnings);
        assert_eq!(said.as_deref(), Some("formatted\ntests fail\nlint ok"));
        assert_eq!(warnings.len(), 1, "{warnings:?}");

        let loud = hooks_with_big_output();
        let said = loud.post_tool_use(&ctx(&dir), "glob", &json!({}), "", &mut warnings);
        assert_eq!(said.map(|s| s.len()), Some(KEEP_BYTES));
    }

    /// A hook that floods stdout and never exits: cut at its timeout, its output capped.
    #[test]
    fn an_endless_flood_is_capped_and_cut_at_the_timeout() {
        let dir = TempDir::new("hooks-flood");
        let flood = hooks(r#"{"PostToolUse": [{"command": "yes flood", "timeout": 1}]}"#);
        let (mut warnings, started) = (Vec::new(), Instant::now());
        let said = flood.post_tool_use(&ctx(&dir), "glob", &json!({}), "", &mut warnings);
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
        assert!(said.is_none_or(|s| s.len() <= KEEP_BYTES));
        assert!(
            warnings.iter().any(|w| w.contains("timed out")),
            "{warnings:?}"
        );
    }

    fn hooks_with_big_output() -> Hooks {
        hooks(r#"{"PostToolUse": [{"command": "head -c 300000 /dev/zero | tr '\\0' x"}]}"#)
    }

    #[test]
    fn user_prompt_submit_can_refuse_the_prompt() {
        let dir = TempDir::new("hooks-prompt");
        let hooks = hooks(
            r#"{"UserPromptSubmit": [{"command": "grep -q secret && { echo 'no secrets' >&2; exit 2; }; exit 0"}]}"#,
        );
        let mut warnings = Vec::new();
        let refused = hooks.user_prompt_submit(&ctx(&dir), "my secret", &mut warnings);
        assert_eq!(refused, Err("no secrets".into()));
        assert_eq!(
            hooks.user_prompt_submit(&ctx(&dir), "hello", &mut warnings),
            Ok(())
        );
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn hooks_that_ignore_a_large_stdin_do_not_deadlock() {
        let dir = TempDir::new("hooks-big-stdin");
        let hooks = hooks(
            r#"{"PreToolUse": [{"command": "true"}, {"command": "sleep 0.2"},
                               {"command": "head -c 10 > /dev/null; echo read"},
                               {"command": "wc -c > size", "timeout": 5}]}"#,
        );
        let input = json!({"content": "y".repeat(4 << 20)});
        let mut warnings = Vec::new();
        let started = Instant::now();
        let decision = hooks.pre_tool_use(&ctx(&dir), "write_file", &input, &mut warnings);
        assert_eq!(decision, PreToolDecision::Allow);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let size = std::fs::read_to_string(dir.0.join("size")).expect("size");
        let size: usize = size.trim().parse().expect("a number");
        assert!(size > 4 << 20, "the whole input arrived: {size}");
    }
}
