//! Where the configuration comes from: the real environment first, then the project's `.env`
//! (as much of it as the project's trust allows), then the flags, which `flags::parse` applies.
//!
//! Runs once at start-up (and again after the interactive session's trust question, from the
//! `Launch` kept in `RunOptions`). It reads the trust record and writes it only for
//! `--trust-project`; the rules for `.env` are in `dotenv.rs`, the record in `trust.rs`.

use crate::app::dotenv::{self, DotEnv};
use crate::app::flags::{Invocation, Launch, RunOptions, parse};
use crate::app::setup;
use crate::core::config::Config;
use crate::core::event::Error;
use crate::extras::trust::{self, Project, Trust};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;

/// The binary's entry point: the real environment, then `.env`, then the flags.
pub fn from_command_line() -> Result<Invocation, Error> {
    resolve(Launch::capture(), Trust::Untrusted)
}

/// The same again from what the process was started with, once the user has answered the
/// interactive session's trust question (`Trusted`: as if `--trust-project` had been given).
pub(crate) fn read_again(launch: &Launch, granted: Trust) -> Result<Invocation, Error> {
    resolve(launch.clone(), granted)
}

/// Read the flags against the real environment completed by `.env`. The flags are read first
/// with only what an untrusted `.env` may set; once the project turns out trusted (remembered,
/// or `--trust-project`, or `granted`), again with all of it.
fn resolve(launch: Launch, granted: Trust) -> Result<Invocation, Error> {
    let (args, real) = (launch.args.clone(), launch.env.clone());
    let home = real.get("HOME").cloned().unwrap_or_default();
    let cwd = std::env::current_dir().unwrap_or_default();
    let file = DotEnv::find(&cwd, Path::new(&home));
    let guarded = dotenv::merge(&real, file.as_ref(), Trust::Untrusted);
    let mut run = match parse(args.clone(), &guarded)? {
        Invocation::Run(run) => run,
        other => return Ok(other),
    };
    // Before anything is read from or written to `~/.corecoder`.
    let store = trust::store_path(&setup::check_home(real.get("HOME").map(Into::into))?);
    let mut project = Project::look(&cwd, file.as_ref().and_then(DotEnv::for_trust), &store);
    project
        .notes
        .extend(file.iter().flat_map(|file| file.warnings.clone()));
    if run.trust_project || granted == Trust::Trusted {
        // A record that cannot be written still trusts the project for this run.
        let failed = project.remember(&store).err();
        project.notes.extend(failed);
    }
    if project.trust() == Trust::Trusted {
        let everything = dotenv::merge(&real, file.as_ref(), Trust::Trusted);
        run = run_options(args.clone(), &everything)?;
    } else if let Some(file) = &file {
        project.notes.extend(file.ignored_note(&real));
    }
    if let Some(file) = &file
        && !run.demo
        && project.trust() == Trust::Trusted
    {
        // What the user alone configured, to tell the `.env`'s choice of host from theirs.
        let own = run_options(args, &real)?;
        dotenv::key_for_host(file, &real, &own.config, &mut run.config);
    }
    run.config.api_key_from = key_source(&run.config, &real, file.as_ref());
    run.project = project;
    run.launch = launch;
    Ok(Invocation::Run(run))
}

/// The name the key in use was found under: a variable, the flag, or a variable of `.env`.
fn key_source(config: &Config, real: &HashMap<String, String>, file: Option<&DotEnv>) -> String {
    let Some(key) = config.api_key.as_deref() else {
        return String::new();
    };
    let named = |name: &&&str| real.get(**name).is_some_and(|value| value == key);
    if let Some(name) = dotenv::KEY_NAMES.iter().find(named) {
        return name.to_string();
    }
    let in_file = file.and_then(|file| {
        let found = file
            .pairs
            .iter()
            .find(|(name, value)| dotenv::KEY_NAMES.contains(&name.as_str()) && value == key)?;
        Some(format!("{} in {}", found.0, file.path.display()))
    });
    in_file.unwrap_or_else(|| "--api-key".to_string())
}

/// `parse` when it is known to be a run (the first reading was one).
fn run_options(
    args: Vec<OsString>,
    env: &HashMap<String, String>,
) -> Result<Box<RunOptions>, Error> {
    match parse(args, env)? {
        Invocation::Run(run) => Ok(run),
        _ => Err(Error::Usage(
            "--help and --version take no other flags".to_string(),
        )),
    }
}
