//! Early start: a read-only call whose arguments are whole starts on the pool while the model
//! is still talking, and the batch collects its result instead of running it again.
//!
//! The loop hands each event of the stream to `Early::streamed` (a `CallReady` may start a
//! call; a retry throws the stream away), and the batch asks `claim` for each allowed call
//! (through `Extras::started_early`): an observer that hands the batch a result it already has.
//! It decides which calls may start early and keeps their results' receivers; the loop queues
//! them on the pool (`core/dispatch.rs`), and the batch runs the rest and collects. It never settles
//! consent and never runs a call a PreToolUse hook, the loop guard or a deny or ask permission
//! rule must see first, nor a read outside the session's roots (`reads.rs`).

use crate::client::wire::MAX_CALLS;
use crate::core::consent::LoopGuard;
use crate::core::consent::{Consent, Verdict};
use crate::core::event::Event;
use crate::core::message::{Outcome, ToolCall};
use crate::extras::consent_rules::{self, Rules};
use crate::extras::mcp::{ServerHint, Servers};
use crate::extras::reads;
use crate::extras::sandbox::ShellSafety;
use crossbeam_channel::Receiver;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a started call's outcome arrives (`Pool::start`'s receiver).
type Pending = Receiver<(usize, Outcome)>;

/// The calls started while the last reply streamed.
#[derive(Default)]
pub(crate) struct Early {
    started: Vec<Started>,
    /// How many of `started` came from streams a retry threw away.
    from_lost_streams: usize,
    /// A copy of the loop guard, judging calls in the order they become whole.
    guard_ahead: LoopGuard,
    /// The loop guard as the reply started: a retry judges ahead from it again.
    guard_at_start: LoopGuard,
    /// The permission rules as the reply started.
    rules: Arc<Rules>,
    /// The read boundary and the directory reads start from (`reads.rs`).
    shell: ShellSafety,
    cwd: PathBuf,
}

struct Started {
    call: ToolCall,
    result: Pending,
}

impl Early {
    /// A reply is about to stream: what the last one started is forgotten (its batch is done).
    pub(crate) fn reply_starting(
        &mut self,
        guard: &LoopGuard,
        rules: &Arc<Rules>,
        (shell, cwd): (&ShellSafety, &Path),
    ) {
        self.rules = rules.clone();
        (self.shell, self.cwd) = (shell.clone(), cwd.to_path_buf());
        self.started.clear();
        self.from_lost_streams = 0;
        self.guard_ahead = guard.clone();
        self.guard_at_start = guard.clone();
    }

    /// One event of the stream, where calls may start early (not in a sub-agent, nor when a
    /// PreToolUse hook must see every call first). `start` queues a call on the pool (`None`:
    /// there is none to start it on).
    pub(crate) fn streamed(
        &mut self,
        event: &Event,
        consent: &Consent,
        mcp: &Servers,
        start: &dyn Fn(&ToolCall) -> Option<Pending>,
    ) {
        match event {
            // A retried request starts over, but what the lost stream started has run: it
            // stays, to answer the same call of the new stream, not run it twice.
            Event::Retry { .. } | Event::Fallback { .. } => {
                self.from_lost_streams = self.started.len();
                self.guard_ahead = self.guard_at_start.clone();
            }
            // A tool that a deny or ask rule names waits for the batch, whatever its arguments.
            Event::CallReady(call) if consent_rules::names_tool(&self.rules, &call.name) => {}
            Event::CallReady(call) => self.call_ready(call, consent, mcp.hint(&call.name), start),
            _ => {}
        }
    }

    /// A call's arguments just became whole: start it now if it may start early (see
    /// `may_start_early`) and was not already started by a lost stream. A call the loop guard
    /// will refuse is left for the batch to refuse.
    fn call_ready(
        &mut self,
        call: &ToolCall,
        consent: &Consent,
        hint: ServerHint,
        start: &dyn Fn(&ToolCall) -> Option<Pending>,
    ) {
        let ran = |s: &Started| s.call.name == call.name && s.call.arguments == call.arguments;
        if self.started[..self.from_lost_streams].iter().any(ran) {
            return;
        }
        // Past the most calls a reply may hold, it will be refused whole: start no more.
        let too_many = self.started.len() >= MAX_CALLS;
        let repeat = !matches!(self.guard_ahead.judge(call), Ok(None));
        // A read outside the roots waits for the batch, which asks about it or refuses it.
        let outside = reads::outside(&self.shell, &call.name, &call.arguments, &self.cwd);
        if too_many || repeat || outside.is_some() || !may_start_early(&call.name, hint, consent) {
            return;
        }
        if let Some(result) = start(call) {
            let call = call.clone();
            self.started.push(Started { call, result });
        }
    }

    /// The batch is about to run `call`: where the result of the same call started early will
    /// arrive, if one was (the batch runs the rest and collects these: `core/batch.rs`).
    pub(crate) fn claim(&mut self, call: &ToolCall) -> Option<Pending> {
        let same = |s: &Started| s.call.name == call.name && s.call.arguments == call.arguments;
        let at = self.started.iter().position(same)?;
        Some(self.started.remove(at).result)
    }
}

/// Tools that only look: they may start before the reply has finished streaming.
pub(crate) fn is_read_only(name: &str) -> bool {
    matches!(name, "read_file" | "glob" | "grep")
}

/// May this call start while the reply still streams, before the batch settles consent? Our
/// read-only tools may: they need no consent. An MCP tool may only when its server marks it
/// read-only *and* consent would run it without asking anyway (`--yes`, or "always" for this
/// tool), never in plan mode or where it would be asked about or refused. The MCP spec says
/// annotations are untrusted hints, so a hint alone must never let a call skip consent: it
/// only lets a call the user already allowed start sooner. (PreToolUse hooks, which must see
/// every call before it runs, turn early start off altogether: `Extras::may_start_early`;
/// a call the loop guard will refuse is not started either: `Early::call_ready`.)
pub(crate) fn may_start_early(name: &str, hint: ServerHint, consent: &Consent) -> bool {
    if is_read_only(name) {
        return true;
    }
    let allowed = consent.verdict(name) == Verdict::Run;
    name.starts_with("mcp__") && hint == ServerHint::ReadOnly && allowed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read outside the session's roots is not started while the reply streams: the batch
    /// must ask about it (or refuse it) first. One inside is.
    #[test]
    fn a_read_outside_the_roots_waits_for_the_batch() {
        use crate::core::consent::Mode;
        use crate::extras::sandbox::Reads;
        let shell = ShellSafety {
            roots: vec![PathBuf::from("/proj")],
            reads: Reads::BeneathRoots,
            ..ShellSafety::default()
        };
        let mut early = Early::default();
        let rules = Arc::new(Rules::default());
        early.reply_starting(&LoopGuard::default(), &rules, (&shell, Path::new("/proj")));
        let started = std::cell::RefCell::new(Vec::new());
        let start = |call: &ToolCall| {
            started.borrow_mut().push(call.arguments.clone());
            None
        };
        let consent = Consent::new(Mode::Ask);
        for path in ["src/main.rs", "/etc/shadow", "../../home/u/.ssh/id_rsa"] {
            let call = ToolCall {
                id: path.into(),
                name: "read_file".into(),
                arguments: serde_json::json!({ "file_path": path }).to_string(),
            };
            let event = Event::CallReady(&call);
            early.streamed(&event, &consent, &Servers::default(), &start);
        }
        assert_eq!(*started.borrow(), [r#"{"file_path":"src/main.rs"}"#]);
    }

    #[test]
    fn an_mcp_hint_starts_a_call_early_only_where_consent_would_run_it() {
        use crate::core::consent::{Mode, Plan};
        use ServerHint::{ReadOnly, Unmarked};
        let tool = "mcp__web__search";
        let yes = Consent::new(Mode::AllowAll);
        assert!(may_start_early(tool, ReadOnly, &yes));
        assert!(!may_start_early(tool, Unmarked, &yes));
        let mut ask = Consent::new(Mode::Ask);
        assert!(!may_start_early(tool, ReadOnly, &ask));
        ask.always.insert(tool.to_string());
        assert!(may_start_early(tool, ReadOnly, &ask));
        assert!(!may_start_early("mcp__web__fetch", ReadOnly, &ask));
        // Plan mode and `-p` without `--yes` refuse MCP tools: no hint changes that.
        let mut plan = Consent::new(Mode::AllowAll);
        plan.plan = Plan::On;
        assert!(!may_start_early(tool, ReadOnly, &plan));
        assert!(!may_start_early(
            tool,
            ReadOnly,
            &Consent::new(Mode::ReadOnly)
        ));
        // A hint counts only for MCP tools; our own read-only tools need none.
        assert!(!may_start_early("bash", ReadOnly, &yes));
        assert!(may_start_early(
            "grep",
            Unmarked,
            &Consent::new(Mode::ReadOnly)
        ));
    }
}
