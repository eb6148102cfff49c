//! The project's `.env` file: found, read, and laid *under* the real environment.
//!
//! `resolve.rs` reads it once at start-up, before the flags. The real environment wins one
//! *setting* at a time: the key and the base URL each have several names, and a setting the
//! environment gives under any of its names is never taken from `.env` under another. A `.env`
//! belongs to the repository, which may be hostile, so until the project is trusted it may only
//! set what `PROJECT_MAY_SET` lists, and `key_for_host` refuses a `.env` that points the
//! user's own key at a host of its choosing. What is trusted is decided in `trust.rs`; this file
//! only reads and merges, and never prints a key.

use crate::core::config::Config;
use crate::extras::trust::{EnvFile, Trust};
use crate::tools::support::files;
use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The names of the API key, in the order they are looked up.
/// (Each dialect reads only some of them: `variables::names_for`.)
pub(crate) const KEY_NAMES: [&str; 4] = [
    "CORECODER_API_KEY",
    "OPENAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "ANTHROPIC_API_KEY",
];
/// The names of the base URL, in the order they are looked up.
pub(crate) const BASE_URL_NAMES: [&str; 3] = [
    "OPENAI_BASE_URL",
    "CORECODER_BASE_URL",
    "ANTHROPIC_BASE_URL",
];

/// What an untrusted project's `.env` may set: how to ask the model, nothing that chooses where
/// requests go (key, base URL, provider, model: the repository's own server would receive the
/// session, files read included) and nothing that widens what tools may do. A setting added
/// later is ignored from an untrusted `.env` until it is listed here, so forgetting the list
/// fails safe. (`CORECODER_SANDBOX=off` is refused apart.)
const PROJECT_MAY_SET: [&str; 8] = [
    "CORECODER_MAX_TOKENS",
    "CORECODER_TEMPERATURE",
    "CORECODER_MAX_CONTEXT",
    "CORECODER_IDLE_TIMEOUT",
    "CORECODER_REQUEST_TIMEOUT",
    "CORECODER_MAX_COST",
    "CORECODER_TOOL_CHOICE",
    "CORECODER_SANDBOX",
];

/// One `.env` file: where it is and its `NAME=value` pairs, in file order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DotEnv {
    pub(crate) path: PathBuf,
    pub(crate) pairs: Vec<(String, String)>,
    /// What could not be read in it (not UTF-8, lines that are not `NAME=value`), by line.
    pub(crate) warnings: Vec<String>,
}

impl DotEnv {
    /// The nearest `.env` at or above `start`, stopping before `home` (a `.env` in the home
    /// directory is usually some other tool's).
    pub(crate) fn find(start: &Path, home: &Path) -> Option<DotEnv> {
        for dir in start.ancestors() {
            if !home.as_os_str().is_empty() && dir == home {
                return None;
            }
            let path = dir.join(".env");
            // Only a missing file sends the search up: a `.env` that is there but too big, not
            // a file or not UTF-8 is this project's, and is ignored with a warning.
            let text = match files::read_settings_text(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(why) => {
                    let warnings = vec![format!("{}: {why}; ignored", path.display())];
                    let pairs = Vec::new();
                    return Some(DotEnv {
                        path,
                        pairs,
                        warnings,
                    });
                }
            };
            let (pairs, bad) = parse_dotenv(&text);
            let warnings = (bad.iter())
                .map(|line| format!("{}:{line}: not NAME=value; ignored", path.display()))
                .collect();
            return Some(DotEnv {
                path,
                pairs,
                warnings,
            });
        }
        None
    }

    /// The first non-empty value under any of `names` (in their order of precedence).
    pub(crate) fn value(&self, names: &[&str]) -> Option<&str> {
        names.iter().find_map(|name| {
            (self.pairs.iter())
                .find(|(key, value)| key == name && !value.trim().is_empty())
                .map(|(_, value)| value.as_str())
        })
    }

    /// Settings here that an untrusted project may not set, in file order (a blank value sets
    /// nothing).
    pub(crate) fn withheld(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for (name, value) in &self.pairs {
            let withheld = is_setting(name) && !may_set(name, value) && !value.trim().is_empty();
            if withheld && !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
        names
    }

    /// Whether trusting the project changes what this file may do.
    pub(crate) fn needs_trust(&self) -> bool {
        !self.withheld().is_empty()
    }

    /// What the trust question shows of it, if it needs trust at all.
    pub(crate) fn for_trust(&self) -> Option<EnvFile<'_>> {
        (self.needs_trust()).then(|| EnvFile {
            path: &self.path,
            summary: self.summary(),
        })
    }

    /// What trusting it would allow, for the trust question: never a key's value.
    pub(crate) fn summary(&self) -> String {
        let mut lines = Vec::new();
        if let Some(url) = self.value(&BASE_URL_NAMES) {
            lines.push(format!("sends requests to {}", host(url)));
        }
        let chooses = |name: &&str| KEY_NAMES.contains(name) || BASE_URL_NAMES.contains(name);
        if self.withheld().iter().any(|name| KEY_NAMES.contains(name)) {
            lines.push("sends its own API key".to_string());
        }
        for name in self.withheld().into_iter().filter(|name| !chooses(name)) {
            lines.push(format!("sets {name}"));
        }
        lines.join("\n")
    }

    /// The note for settings ignored because the project is not trusted (none when `real`
    /// sets them itself, under any of their names, so the file's value would not count anyway).
    pub(crate) fn ignored_note(&self, real: &HashMap<String, String>) -> Option<String> {
        let ignored: Vec<&str> = (self.withheld().into_iter())
            .filter(|name| !is_set(real, &names_of(name)))
            .collect();
        (!ignored.is_empty()).then(|| {
            format!(
                "{}: {} ignored, because this project is not trusted (to trust it: corecoder \
                 --trust-project, or /trust in a session and start again)",
                self.path.display(),
                ignored.join(", ")
            )
        })
    }
}

/// `real` completed (never overridden) by `dotenv`, one setting at a time; an untrusted
/// `.env` contributes only what `PROJECT_MAY_SET` allows.
pub(crate) fn merge(
    real: &HashMap<String, String>,
    dotenv: Option<&DotEnv>,
    trust: Trust,
) -> HashMap<String, String> {
    let mut vars = real.clone();
    for (name, value) in dotenv.map_or(&[][..], |d| &d.pairs) {
        if trust == Trust::Untrusted && !may_set(name, value) {
            continue;
        }
        // Each name of a setting counts as that setting: OPENAI_BASE_URL in `.env` must not
        // beat the CORECODER_BASE_URL the user exported.
        if is_set(real, &names_of(name)) {
            continue;
        }
        vars.entry(name.clone()).or_insert_with(|| value.clone());
    }
    vars
}

/// A key and the host it is sent to come from the same place. Called for a trusted project
/// only (an untrusted `.env` chooses no host: `merge`). `own` is what the user alone
/// configured (environment and flags, no `.env`). When `config` goes to another host, the
/// `.env` chose it, and its own key goes with it, even over a key the user exported (which
/// stays home); a key given with `--api-key` is never swapped for the file's.
pub(crate) fn key_for_host(
    dotenv: &DotEnv,
    real: &HashMap<String, String>,
    own: &Config,
    config: &mut Config,
) {
    if config.base_url == own.base_url {
        return;
    }
    let users = own.api_key.as_deref();
    let from_flag = users.is_some() && users != first(real, &KEY_NAMES);
    if let (Some(theirs), false) = (dotenv.value(&KEY_NAMES), from_flag) {
        config.api_key = Some(theirs.to_string());
    }
}

/// `NAME=value` lines as python-dotenv (which CoreCoder uses) reads them: `export ` prefixes,
/// `#` comment lines, a value in single or double quotes, and an unquoted value ending where
/// ` #` starts a comment. Also the numbers of the lines that are none of these. Never `${VAR}`
/// from the environment, as `dotenvy` does: the file is the repository's, and could copy the
/// user's key into a setting (DESIGN.md, "Hand-written or a crate").
pub(crate) fn parse_dotenv(text: &str) -> (Vec<(String, String)>, Vec<usize>) {
    let mut pairs = Vec::new();
    let mut bad = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        let line = line.strip_prefix("export ").unwrap_or(line);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            bad.push(number + 1);
            continue;
        };
        let name = name.trim();
        let is_name = !name.is_empty() && !name.contains(char::is_whitespace);
        match (is_name, dotenv_value(value.trim())) {
            (true, Some(value)) => pairs.push((name.to_string(), value)),
            _ => bad.push(number + 1),
        }
    }
    (pairs, bad)
}

/// A value: quoted (anything after the closing quote must be a comment), or unquoted up to
/// ` #`. `None` for an opening quote that never closes.
fn dotenv_value(value: &str) -> Option<String> {
    for quote in ['"', '\''] {
        if let Some(rest) = value.strip_prefix(quote) {
            let (inside, after) = rest.split_once(quote)?;
            let after = after.trim_start();
            return (after.is_empty() || after.starts_with('#')).then(|| inside.to_string());
        }
    }
    let value = match value.find(" #").or(value.find("\t#")) {
        Some(comment) => &value[..comment],
        None => value,
    };
    Some(value.trim_end().to_string())
}

/// A name corecoder reads as a setting: its own, and the keys and base URLs of every dialect.
fn is_setting(name: &str) -> bool {
    name.starts_with("CORECODER_") || KEY_NAMES.contains(&name) || BASE_URL_NAMES.contains(&name)
}

fn may_set(name: &str, value: &str) -> bool {
    let sandbox_off = name == "CORECODER_SANDBOX" && value.trim() == "off";
    PROJECT_MAY_SET.contains(&name) && !sandbox_off
}

/// All the names one setting goes by (a single name for most).
fn names_of(name: &str) -> Vec<&str> {
    match name {
        _ if KEY_NAMES.contains(&name) => KEY_NAMES.to_vec(),
        _ if BASE_URL_NAMES.contains(&name) => BASE_URL_NAMES.to_vec(),
        _ => vec![name],
    }
}

/// The first non-empty value `vars` gives under any of `names` (empty counts as unset, as in
/// `config.rs`).
fn first<'a>(vars: &'a HashMap<String, String>, names: &[&str]) -> Option<&'a str> {
    (names.iter())
        .find_map(|name| vars.get(*name).filter(|v| !v.trim().is_empty()))
        .map(String::as_str)
}

fn is_set(vars: &HashMap<String, String>, names: &[&str]) -> bool {
    first(vars, names).is_some()
}

/// `host[:port]` of a URL, for messages (no scheme, path or `user:password@`).
fn host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        (pairs.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn dotenv(text: &str) -> DotEnv {
        let path = PathBuf::from("/repo/.env");
        let (pairs, _) = parse_dotenv(text);
        let warnings = Vec::new();
        DotEnv {
            path,
            pairs,
            warnings,
        }
    }

    #[test]
    fn dotenv_lines() {
        let text = "# c\nexport A=1\nB = \"two words\"\nC='3'\n\nnot a pair\n";
        let want = vars(&[("A", "1"), ("B", "two words"), ("C", "3")]);
        let (pairs, bad) = parse_dotenv(text);
        let pairs: HashMap<String, String> = pairs.into_iter().collect();
        assert_eq!(pairs, want);
        assert_eq!(bad, [6]);
    }

    /// As python-dotenv reads them: a comment after an unquoted value is not part of it; a `#`
    /// inside a value or inside quotes is.
    #[test]
    fn comments_after_values_are_not_values() {
        let text =
            "A=gpt-4o # my default\nB=a#b\nC=\"x # y\" # note\nD='q'\tjunk\nE=\"open\nF G=1\n";
        let (pairs, bad) = parse_dotenv(text);
        let pairs: HashMap<String, String> = pairs.into_iter().collect();
        assert_eq!(
            pairs,
            vars(&[("A", "gpt-4o"), ("B", "a#b"), ("C", "x # y")])
        );
        assert_eq!(bad, [4, 5, 6]);
    }

    /// A hostile `.env` must not read the user's environment: `${OPENAI_API_KEY}` stays text.
    #[test]
    fn values_are_never_substituted_from_the_environment() {
        let text = "A=${HOME}\nB=\"$HOME\"\nC=$PATH\n";
        let (pairs, bad) = parse_dotenv(text);
        let pairs: HashMap<String, String> = pairs.into_iter().collect();
        assert_eq!(
            pairs,
            vars(&[("A", "${HOME}"), ("B", "$HOME"), ("C", "$PATH")])
        );
        assert!(bad.is_empty());
    }

    #[test]
    fn the_environment_wins_per_setting_not_per_name() {
        let real = vars(&[
            ("CORECODER_BASE_URL", "http://mine"),
            ("OPENAI_API_KEY", "k"),
        ]);
        let file = dotenv("OPENAI_BASE_URL=http://theirs\nCORECODER_API_KEY=theirs\nX=1");
        let merged = merge(&real, Some(&file), Trust::Trusted);
        assert_eq!(merged.get("OPENAI_BASE_URL"), None);
        assert_eq!(merged.get("CORECODER_API_KEY"), None);
        assert_eq!(merged["X"], "1");
    }

    #[test]
    fn an_untrusted_file_may_not_widen() {
        let file = dotenv(
            "CORECODER_ENV_ALLOW=AWS_SECRET\nCORECODER_SANDBOX=off\nCORECODER_MAX_TOKENS=9\n\
             CORECODER_SOMETHING_NEW=1",
        );
        let merged = merge(&HashMap::new(), Some(&file), Trust::Untrusted);
        assert_eq!(merged.len(), 1, "{merged:?}");
        assert_eq!(merged["CORECODER_MAX_TOKENS"], "9");
        let want = [
            "CORECODER_ENV_ALLOW",
            "CORECODER_SANDBOX",
            "CORECODER_SOMETHING_NEW",
        ];
        assert_eq!(file.withheld(), want);
        let note = file.ignored_note(&vars(&[("CORECODER_SANDBOX", "off")]));
        let note = note.expect("a note");
        assert!(
            note.contains("CORECODER_ENV_ALLOW, CORECODER_SOMETHING_NEW ignored"),
            "{note}"
        );
        assert!(note.starts_with("/repo/.env: "), "{note}");
        assert!(note.contains("--trust-project") && note.contains("/trust"));
        let narrowing = dotenv("CORECODER_SANDBOX=read-only");
        assert!(narrowing.withheld().is_empty() && !narrowing.needs_trust());
    }

    /// Where requests go is the user's choice until the project is trusted: every name of the
    /// key and the base URL, the provider and the model, with or without a key of its own.
    #[test]
    fn an_untrusted_file_chooses_no_host_key_provider_or_model() {
        let text = "OPENAI_API_KEY=sk-project\nDEEPSEEK_API_KEY=k\nANTHROPIC_API_KEY=k\n\
                    CORECODER_API_KEY=k\nOPENAI_BASE_URL=http://evil.test\n\
                    CORECODER_BASE_URL=http://evil.test\nANTHROPIC_BASE_URL=http://evil.test\n\
                    CORECODER_PROVIDER=anthropic\nCORECODER_MODEL=m\n\
                    CORECODER_FALLBACK_MODELS=m2\nOPENAI_ORG=x\nEMPTY_KEY=\nOPENAI_API_KEY=\n";
        let file = dotenv(text);
        let merged = merge(&HashMap::new(), Some(&file), Trust::Untrusted);
        assert!(merged.is_empty(), "{merged:?}");
        assert_eq!(file.withheld().len(), 10, "{:?}", file.withheld());
        let summary = file.summary();
        assert!(summary.contains("sends requests to evil.test"), "{summary}");
        assert!(summary.contains("sends its own API key"), "{summary}");
        assert!(!summary.contains("sk-project"), "{summary}");
        // The user's own host: the file's names of it are not worth a note.
        let real = vars(&[
            ("CORECODER_BASE_URL", "http://mine"),
            ("OPENAI_API_KEY", "k"),
        ]);
        let note = file.ignored_note(&real).expect("a note");
        assert!(
            note.contains("CORECODER_PROVIDER, CORECODER_MODEL,"),
            "{note}"
        );
        assert!(
            !note.contains("BASE_URL") && !note.contains("API_KEY"),
            "{note}"
        );
        // A blank key sets nothing, so it needs no trust.
        assert!(!dotenv("OPENAI_API_KEY=\n").needs_trust());
        assert!(dotenv("OPENAI_API_KEY=sk-project\n").needs_trust());
        let trusted = merge(&HashMap::new(), Some(&file), Trust::Trusted);
        assert_eq!(trusted["CORECODER_MODEL"], "m");
    }

    #[test]
    fn a_trusted_files_key_goes_only_where_its_own_file_says() {
        let config = |key: &str, url: &str| Config {
            api_key: Some(key.to_string()).filter(|k| !k.is_empty()),
            base_url: url.to_string(),
            ..Config::default()
        };
        // `own`: the user's key and host; `with`: the host once `.env` is read.
        let check = |file: &str, env: &[(&str, &str)], own: Config, url: &str| {
            let mut with = Config {
                base_url: url.to_string(),
                ..own.clone()
            };
            key_for_host(&dotenv(file), &vars(env), &own, &mut with);
            with.api_key
        };
        let (there, home) = ("http://there.test:81/v1", "https://api.openai.com/v1");
        let mine = [("CORECODER_API_KEY", "mine")];
        // No key of its own: the user's key goes where the trusted file says.
        let redirect = format!("OPENAI_BASE_URL={there}\n");
        let sent = check(&redirect, &mine, config("mine", home), there);
        assert_eq!(sent.as_deref(), Some("mine"));
        // --base-url (or the environment) chose the host: the user's key, never the file's.
        let pair = format!("DEEPSEEK_API_KEY=theirs\nCORECODER_BASE_URL={there}\n");
        let chosen = check(&pair, &[], config("flag", there), there);
        assert_eq!(chosen.as_deref(), Some("flag"));
        // Its own key goes with its own host, even over the user's exported key.
        let sent = check(&pair, &mine, config("mine", home), there);
        assert_eq!(sent.as_deref(), Some("theirs"));
        let flag = check(&pair, &[], config("flag", home), there);
        assert_eq!(flag.as_deref(), Some("flag"), "--api-key is not swapped");
    }
}
