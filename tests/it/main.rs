//! Integration tests: the real `corecoder` binary against a scripted loopback chat server.
//!
//! `server` plays an OpenAI-compatible provider (scripted replies, recorded requests) over the
//! bare HTTP/1.1 in `http`, `sse` builds its streams, `run` starts the binary in a sealed
//! sandbox, `pty` on a pseudo-terminal for the interactive REPL. The feature modules
//! (`acp`, `engine`, `retry`, `cli`, `tools`, `replay`, `repl`, `long`, `extend`, `hooks`, `mcp`,
//! `scripting`, `safety`, `escape`, `walls`, `walls_calls`, `secrets`, `cost`, `cache_usage`, `bounds`, `danger`,
//! `permissions_rules`, `markdown`, `careless` (settings and terminals given carelessly), the
//! dialects' `anthropic` and `responses`, and `guards`,
//! the tests written to catch what a redesign could break unseen) assert on what
//! the binary printed, how it exited, what it sent and what it did to the files; `fuse` mounts
//! the hung file system `bounds` reads from.
//! Nothing of corecoder's own code is called or mocked here: only the binary is exercised
//! (and, in `docs`, `readme` and `figures`, the README, the docs and the built examples).

mod acp;
mod anthropic;
mod bounds;
mod cache_usage;
mod careless;
mod cli;
mod closed_output;
mod connections;
mod consent_view;
mod cost;
mod crash;
mod danger;
mod docs;
mod driver;
mod early;
mod engine;
mod escape;
mod extend;
mod faults;
mod figures;
mod fuse;
mod guards;
mod heredoc;
mod hooks;
mod hostile;
mod hostile_peers;
mod hostile_terminal;
mod hostile_wire;
mod http;
mod interrupts;
mod long;
mod markdown;
mod mcp;
mod newcomer;
mod permissions_rules;
mod planted;
mod prompt_cache;
mod pty;
mod readme;
mod reads;
mod repl;
mod replay;
mod rereads;
mod responses;
mod retry;
mod run;
mod safety;
mod scripting;
mod secrets;
mod server;
mod servers;
mod soak;
mod sse;
mod tools;
mod trust;
mod walls;
mod walls_calls;
