//! The null seam: what a fork keeps in place of `extras/` (the fork is one change in `lib.rs`,
//! `#[path = "extras/null.rs"]` above `pub mod extras;`, and the `pub mod app;` line dropped;
//! `docs::a_fork_without_extras_builds_the_minimal_example` performs it). The same methods the
//! core, the client and the tools call on `Extras`, each doing what a plain agent does with the
//! feature absent: consent by the tool's name after the danger table, the estimate, chat
//! completions' stream reader (the loop guard, the body, URL and key are the core's and the
//! client's). No hooks, MCP, sandbox, log, checkpoints, trace, prices, early start or other
//! dialects, and no opting in to a destructive command by name; bash still loses the variables
//! that name a key, token, secret or password. Not compiled in the full crate: it is a file a
//! fork points `mod extras` at. Over 300 lines (rustfmt puts each no-op on three) so that the
//! whole seam a fork keeps is one file.

use crate::client::quirks::Quirks;
use crate::client::{http::Limits, sse};
use crate::core::config::Config;
use crate::core::consent::{Consent, LoopGuard, Mode, Verdict};
use crate::core::event::{Error, Event};
use crate::core::message::{Message, Outcome, Reply, ToolCall};
use crate::core::prompt::estimate_messages;
use crate::tools::support::danger::{self, Danger};
use crate::tools::support::seen::Seen;
use crate::tools::{SubAgent, ToolContext};
use crossbeam_channel::Receiver;
use serde_json::Value;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Where a call started early would send its result; none is ever started here.
type Pending = Receiver<(usize, Outcome)>;

/// A plain agent's seam: nothing is kept but the no-op parts the core reaches through.
#[derive(Default)]
pub struct Extras {
    account: account::Account,
    dialect: dialect::Dialects,
    gate: gate::Gate,
    /// What read_file has shown the model: a re-read of an unchanged file is a short note.
    reads: Seen,
}

impl Extras {
    pub(crate) fn task_submitted(
        &self,
        _: &Path,
        _: &str,
        _: &mut dyn FnMut(Event),
    ) -> Result<(), String> {
        Ok(())
    }
    pub(crate) fn added(&mut self, message: &Message) {
        self.reads.joined(message.content.as_deref().unwrap_or_default());
    }
    pub(crate) fn rewritten(&mut self, _: &[Message]) {
        self.reads.forget();
    }
    pub(crate) fn resumed(&mut self) {
        self.reads.forget();
    }
    pub(crate) fn model_switched(&mut self, _: &str) {}
    pub(crate) fn round_started(&mut self, _: &mut dyn FnMut(Event)) {}
    pub(crate) fn repaired(&mut self, _: &[Message], _: usize, _: &mut dyn FnMut(Event)) {}
    pub(crate) fn instructions(&mut self, _: &Path) -> String {
        String::new()
    }
    pub(crate) fn prompt_tokens(&self, history: &[Message]) -> usize {
        estimate_messages(history)
    }
    pub(crate) fn history_compacted(&mut self) {}
    pub(crate) fn overflowed(
        &mut self,
        _: &str,
        history: &[Message],
        _: (usize, usize),
        _: &mut dyn FnMut(Event),
    ) -> usize {
        estimate_messages(history)
    }
    pub(crate) fn replied(&mut self, _: usize, reply: &Reply, on_event: &mut dyn FnMut(Event)) {
        let usage = reply.usage.clone().unwrap_or_default();
        on_event(Event::Replied { usage: &usage });
    }
    pub(crate) fn reply_starting(&mut self, _: &LoopGuard, _: &Path) -> early::Early {
        early::Early
    }
    pub(crate) fn reply_done(&mut self, _: early::Early) {}
    /// Consent by the tool's name, but for bash the danger table first (`tools/support/danger.rs`):
    /// catastrophic is refused; destructive or unreadable is asked about, or refused where no
    /// one can be asked (a fork has no `--allow-destructive`).
    pub(crate) fn verdict_for_call(&self, consent: &Consent, call: &ToolCall, _: &Path) -> Verdict {
        let verdict = consent.verdict(&call.name);
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let command = args.get("command").and_then(Value::as_str);
        let found = command
            .filter(|_| call.name == "bash")
            .and_then(danger::check);
        match (found, consent.mode) {
            (None, _) => verdict,
            _ if matches!(verdict, Verdict::Refuse(_)) => verdict,
            (Some(Danger::Catastrophic(reason)), _) => Verdict::Refuse(danger::blocked(reason)),
            (Some(_), Mode::Ask) => Verdict::AskEachTime("destructive, or unreadable".to_string()),
            (Some(_), _) => Verdict::Refuse(
                "Refused: this command is destructive, or cannot be read before it runs; \
                 it does not run without the user's say. Do it another way, or say what you \
                 would run so the user can decide."
                    .to_string(),
            ),
        }
    }
    pub(crate) fn always_offer(&self, call: &ToolCall) -> String {
        format!("always allow {}", call.name)
    }
    pub(crate) fn tool_schemas(&self) -> Vec<Value> {
        Vec::new()
    }
    pub(crate) fn may_start_early(&self) -> bool {
        false
    }
    pub(crate) fn before_call(
        &self,
        _: &ToolCall,
        _: &Path,
        _: &mut dyn FnMut(Event),
    ) -> Option<Outcome> {
        None
    }
    pub(crate) fn allowed_always(
        &mut self,
        to: &mut Consent,
        call: &ToolCall,
        _: &mut dyn FnMut(Event),
    ) {
        to.always.insert(call.name.clone());
    }
    pub(crate) fn before_calls(&mut self, _: &[&ToolCall], _: &Path, _: &mut dyn FnMut(Event)) {}
    pub(crate) fn started_early(&mut self, allowed: &[&ToolCall]) -> Vec<Option<Pending>> {
        allowed.iter().map(|_| None).collect()
    }
    pub(crate) fn calls_ran(&mut self) {}
    pub(crate) fn after_call(
        &self,
        _: &ToolCall,
        ran: Outcome,
        _: &Path,
        _: &mut dyn FnMut(Event),
    ) -> Outcome {
        ran
    }
    pub(crate) fn batch_done(&self, _: &[ToolCall], _: &[Outcome]) {}
    pub(crate) fn task_ended(&self, _: &Path, _: &mut dyn FnMut(Event)) {}
    pub(crate) fn for_sub_agent(&self) -> Extras {
        Extras::default()
    }
    pub fn account(&self) -> &account::Account {
        &self.account
    }
    pub(crate) fn dialect(&self) -> &dialect::Dialects {
        &self.dialect
    }
    pub(crate) fn gate(&self) -> &gate::Gate {
        &self.gate
    }
    pub fn tool_context(
        &self,
        cwd: &Path,
        cancel: &Arc<AtomicBool>,
        sub: (&Arc<Llm>, &Consent),
    ) -> ToolContext {
        let (llm, consent, extras) = (sub.0.clone(), sub.1.clone(), self.for_sub_agent());
        ToolContext {
            cwd: cwd.to_path_buf(),
            cancel: cancel.clone(),
            shell: Default::default(),
            rules: Default::default(),
            reads_running: Default::default(),
            reads: self.reads.clone(),
            mcp: Default::default(),
            sub_agent: Arc::new(SubAgent {
                llm,
                consent,
                extras,
            }),
        }
    }
}

use crate::client::llm::Llm;

/// No prices, no ledger, no fallback models, no trace.
pub mod account {
    use super::*;
    #[derive(Default)]
    pub struct Account;
    impl Account {
        pub(crate) fn check_budget(&self, _: &Config) -> Result<(), Error> {
            Ok(())
        }
        pub(crate) fn model(&self, config: &Config) -> String {
            config.model.clone()
        }
        pub(crate) fn count(&self, _: &str, _: &Reply, _: &[Message]) {}
        pub(crate) fn saw(&self, _: &mut String, event: Event, on_event: &mut dyn FnMut(Event)) {
            on_event(event);
        }
        pub(crate) fn cut_off(&self, _: &Config, _: &[Message], _: &str) {}
        pub(crate) fn fall_back(
            &self,
            _: &Config,
            why: String,
            _: &mut dyn FnMut(Event),
        ) -> Result<(), Error> {
            Err(Error::Api(why))
        }
        pub(crate) fn trace_request(&self, _: &str, _: &[Arc<str>]) {}
        pub(crate) fn trace_failure(&self, _: u16, _: &str) {}
        pub(crate) fn trace_not_a_stream(&self, _: &str, _: &str) {}
        pub(crate) fn tee<'a>(&'a self, body: &'a mut dyn BufRead) -> &'a mut dyn BufRead {
            body
        }
    }
}

/// Chat completions only: the client's own body, URL and bearer key, and SSE reader.
pub(crate) mod dialect {
    use super::*;
    #[derive(Default)]
    pub(crate) struct Dialects;
    impl Dialects {
        pub(crate) fn body(
            &self,
            _: &Config,
            _: &str,
            _: &[Message],
            _: &[Value],
            _: &Quirks,
        ) -> Option<Vec<Arc<str>>> {
            None
        }
        pub(crate) fn endpoint(&self, _: &Config) -> Option<(String, Vec<(&'static str, String)>)> {
            None
        }
        pub fn read_stream(
            &self,
            _: &Config,
            reader: &mut dyn BufRead,
            cancel: &AtomicBool,
            limits: &Limits,
            on_delta: &mut dyn FnMut(Event),
        ) -> Result<Reply, Error> {
            sse::read_stream(reader, cancel, limits, on_delta)
        }
    }
}

/// Nothing starts while a reply streams: the batch runs every call.
pub(crate) mod early {
    use super::*;
    pub(crate) struct Early;
    impl Early {
        pub(crate) fn streamed(
            &mut self,
            _: &Event,
            _: &Consent,
            _: &super::mcp::Servers,
            _: &dyn Fn(&ToolCall) -> Option<Pending>,
        ) {
        }
    }
}

/// No danger table and no cut-call check (a fork adds `extras/gate.rs` back for them).
pub(crate) mod gate {
    use super::*;
    #[derive(Default)]
    pub(crate) struct Gate;
    impl Gate {
        pub(crate) fn cut_off(
            &self,
            _: &ToolCall,
            _: bool,
            _: &mut dyn FnMut(Event),
        ) -> Option<Outcome> {
            None
        }
        pub(crate) fn not_offered(&self, _: &ToolCall, _: &[Value]) -> Option<Outcome> {
            None
        }
    }
}

/// No permission rules: nothing is hidden from glob and grep.
pub(crate) mod consent_rules {
    use std::path::Path;
    #[derive(Debug, Clone, Default)]
    pub(crate) struct Rules;
    pub(crate) fn hides(_: &Rules, _: &str, _: &Path) -> bool {
        false
    }
}

/// No MCP servers.
pub(crate) mod mcp {
    use std::sync::atomic::AtomicBool;
    #[derive(Default)]
    pub(crate) struct Servers;
    impl Servers {
        pub(crate) fn call(&self, name: &str, _: &str, _: &AtomicBool) -> Result<String, String> {
            Err(format!("no MCP server serves {name}"))
        }
    }
}

/// No sandbox: bash runs as the user does, less the variables that name a secret.
pub(crate) mod sandbox {
    use std::path::{Path, PathBuf};
    use std::process::Command;
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub(crate) enum Sandbox {
        #[default]
        Off,
        WorkspaceWrite,
    }
    #[derive(Debug, Clone, Default)]
    pub(crate) struct ShellSafety {
        pub(crate) sandbox: Sandbox,
        pub(crate) roots: Vec<PathBuf>,
        pub(crate) git: super::git_files::GitTrust,
    }
    pub(crate) struct Confinement;
    impl Confinement {
        pub(crate) fn enter_before_exec(&self, _: &mut Command) -> std::io::Result<()> {
            Ok(())
        }
    }
    impl ShellSafety {
        pub(crate) fn confinement(&self) -> Result<Option<Confinement>, String> {
            Ok(None)
        }
        /// The key the agent was started with is in its environment: a fork's bash must not
        /// see it (the full crate's filter is `secrets::looks_secret`, broader).
        pub(crate) fn hides_from_shell(&self, name: &str, _: &str) -> bool {
            let name = name.to_ascii_uppercase();
            ["KEY", "TOKEN", "SECRET", "PASSWORD"]
                .iter()
                .any(|w| name.contains(w))
        }
        pub(crate) fn check_write(&self, _: &Path) -> Result<(), String> {
            Ok(())
        }
        pub(crate) fn write_confined(
            &self,
            write: &(dyn Fn() -> Result<(), String> + Sync),
        ) -> Result<(), String> {
            write()
        }
    }
}

/// The project's git is always trusted: nothing watches it.
pub(crate) mod git_files {
    use std::path::Path;
    use std::process::Command;
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub(crate) enum GitTrust {
        #[default]
        Trusted,
        Untrusted,
    }
    pub(crate) struct Watch;
    impl Watch {
        pub fn start(_: &Path) -> Watch {
            Watch
        }
        pub(crate) fn changed(&self) -> Option<String> {
            None
        }
    }
    pub(crate) fn mentions_git(_: &str) -> bool {
        false
    }
    pub(crate) fn refusal() -> String {
        String::new()
    }
    pub(crate) fn switch_off(_: &mut Command) {}
}
