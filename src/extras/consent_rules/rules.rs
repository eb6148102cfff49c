//! One permission rule in Claude Code's syntax, and whether it covers one tool call: `Bash`,
//! `Bash(git status)` (exact), `Bash(cargo test:*)` (the older prefix form, on a word
//! boundary), `Bash(npm run *)` (the wildcard form), `Edit(src/**)`, `Read(./.env)`,
//! `Read(~/.ssh/**)`, `mcp__server__tool`, and our own tool names.
//!
//! `settings.rs` parses each string of a settings file's `permissions` lists with `parse`;
//! `consent_rules.rs` asks `covers_tool`, `covers_command` and `covers_path` about a call and
//! decides. Pure: nothing here reads a file (paths are resolved against the `Bases` the caller
//! hands in), and nothing here decides what a match means.

use crate::tools::support::glob_regex::{Syntax, translate};
use regex::Regex;
use std::path::{Path, PathBuf};

/// Which list of a settings file a rule is in. Deny beats ask beats allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum List {
    Deny,
    Ask,
    Allow,
}

impl List {
    pub(crate) fn key(self) -> &'static str {
        match self {
            List::Deny => "deny",
            List::Ask => "ask",
            List::Allow => "allow",
        }
    }
}

/// One rule as written, where it came from, and what it matches.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub(crate) list: List,
    /// As written in the file: `Bash(cargo test:*)`.
    pub(crate) text: String,
    pub(crate) source: PathBuf,
    tool: String,
    what: Specifier,
}

/// What the parentheses say, read by the kind of tool the rule names.
#[derive(Debug, Clone)]
enum Specifier {
    /// No parentheses, `()` or `(*)`: every use of the tool.
    Any,
    /// A command's words, exactly.
    Exact(Vec<String>),
    /// A command whose words start with these (`git commit:*` is not `git commitx`).
    Prefix(Vec<String>),
    /// `*` anywhere matches any text, spaces too; matched against the words joined by spaces.
    Wildcard(Regex),
    /// An absolute path pattern, gitignore-style (a match also covers what is inside it), and
    /// the one file it names at its base when it has no wildcard (`Read(./.env)`: `CWD/.env`).
    Path(Regex, Option<PathBuf>),
    /// A specifier this tool has no meaning for (`Task(Explore)`): it matches nothing.
    Unsupported,
}

/// What relative path patterns are relative to: `~/` the home directory, `/` the directory
/// the settings file belongs to (the folder holding its `.claude` or `.corecoder`), and a
/// plain or `./` path the directory corecoder started in.
#[derive(Debug, Clone)]
pub(crate) struct Bases {
    pub(crate) home: PathBuf,
    pub(crate) settings_root: PathBuf,
    pub(crate) cwd: PathBuf,
}

/// Parse one rule string. `Err` says why it is skipped.
pub(crate) fn parse(text: &str, list: List, source: &Path, bases: &Bases) -> Result<Rule, String> {
    let trimmed = text.trim();
    let (tool, inner) = match trimmed.split_once('(') {
        Some((tool, rest)) => match rest.strip_suffix(')') {
            Some(inner) => (tool.trim(), Some(inner.trim())),
            None => return Err(format!("{text:?}: no closing parenthesis")),
        },
        None => (trimmed, None),
    };
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '*';
    if tool.is_empty() || !tool.chars().all(valid) {
        return Err(format!("{text:?}: not a tool name"));
    }
    let what = match inner {
        None | Some("") | Some("*") => Specifier::Any,
        Some(inner) if is_bash(tool) => command_pattern(inner)?,
        Some(inner) if is_path_tool(tool) => path_pattern(inner, bases)?,
        Some(_) => Specifier::Unsupported,
    };
    Ok(Rule {
        list,
        text: trimmed.to_string(),
        source: source.to_path_buf(),
        tool: tool.to_string(),
        what,
    })
}

fn is_bash(tool: &str) -> bool {
    matches!(tool, "Bash" | "bash")
}

fn is_path_tool(tool: &str) -> bool {
    let ours = ["read_file", "edit_file", "write_file", "grep", "glob"];
    let claude = [
        "Read",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "Write",
        "Glob",
        "Grep",
    ];
    ours.contains(&tool) || claude.contains(&tool)
}

impl Rule {
    /// Whether the rule names this tool (ours: `bash`, `edit_file`, `mcp__s__t`, …). As in
    /// Claude Code, `Edit` covers every tool that changes a file and `Read` every one that
    /// reads one; `mcp__server` covers all of that server's tools.
    pub(crate) fn covers_tool(&self, tool: &str) -> bool {
        let named = self.tool.as_str();
        match named {
            "Bash" => tool == "bash",
            "Edit" | "MultiEdit" | "NotebookEdit" => matches!(tool, "edit_file" | "write_file"),
            "Write" => tool == "write_file",
            "Read" => matches!(tool, "read_file" | "grep" | "glob"),
            "Glob" => tool == "glob",
            "Grep" => tool == "grep",
            "Task" | "Agent" => tool == "agent",
            "TodoWrite" => tool == "todo_write",
            _ if named.starts_with("mcp__") => {
                let server = named.strip_suffix("__*").unwrap_or(named);
                tool == named || tool.starts_with(&format!("{server}__"))
            }
            _ => named == tool,
        }
    }

    /// Whether the rule covers every use of its tool (no specifier, or `*`).
    pub(crate) fn is_any(&self) -> bool {
        matches!(self.what, Specifier::Any)
    }

    /// A simple command's words (quotes removed, as `shell_words` reads them).
    pub(crate) fn covers_command(&self, words: &[String]) -> bool {
        match &self.what {
            Specifier::Any => true,
            Specifier::Exact(exact) => words == exact.as_slice(),
            Specifier::Prefix(prefix) => words.starts_with(prefix),
            Specifier::Wildcard(regex) => regex.is_match(&words.join(" ")),
            Specifier::Path(..) | Specifier::Unsupported => false,
        }
    }

    /// An absolute, normalised path (`/`-separated).
    pub(crate) fn covers_path(&self, path: &str) -> bool {
        match &self.what {
            Specifier::Any => true,
            Specifier::Path(regex, _) => regex.is_match(path),
            _ => false,
        }
    }

    /// The file a path rule without a wildcard names, for comparing files by identity (a hard
    /// link to it has another name); `None` for every other rule.
    pub(crate) fn names_file(&self) -> Option<&Path> {
        match &self.what {
            Specifier::Path(_, file) => file.as_deref(),
            _ => None,
        }
    }
}

/// `git status` exact, `cargo test:*` prefix, `npm run *` wildcard. Exact and prefix rules
/// are read into words the way a command is, so quoting means the same on both sides.
fn command_pattern(spec: &str) -> Result<Specifier, String> {
    let words = |text: &str| -> Result<Vec<String>, String> {
        let commands = crate::tools::support::shell_words::split(text);
        match commands.as_slice() {
            [one] if !one.words.is_empty() && one.depth == 0 => Ok(one.words.clone()),
            _ => Err(format!("{spec:?}: a rule names one simple command")),
        }
    };
    if let Some(prefix) = spec.strip_suffix(":*") {
        return Ok(Specifier::Prefix(words(prefix)?));
    }
    if !spec.contains('*') {
        return Ok(Specifier::Exact(words(spec)?));
    }
    // `ls *` matches `ls` too: one trailing ` *` is optional, as in Claude Code.
    let stars = spec.matches('*').count();
    let (body, optional_tail) = match spec.strip_suffix(" *") {
        Some(body) if stars == 1 => (body, true),
        _ => (spec, false),
    };
    let parts: Vec<String> = body.split('*').map(regex::escape).collect();
    let tail = if optional_tail { "(?: .*)?" } else { "" };
    let regex = format!("^{}{tail}$", parts.join(".*"));
    Regex::new(&regex)
        .map(Specifier::Wildcard)
        .map_err(|e| e.to_string())
}

/// Claude Code's four kinds of path, gitignore-style: `//p` from the root, `~/p` from the
/// home directory, `/p` from the settings file's folder, `p` or `./p` from the start
/// directory. A pattern without a `/` (past a leading `./`) matches at any depth below its
/// base, as in `.gitignore`; a match covers everything inside it.
fn path_pattern(spec: &str, bases: &Bases) -> Result<Specifier, String> {
    let (base, rest, anchored) = if let Some(rest) = spec.strip_prefix("//") {
        (PathBuf::from("/"), rest, true)
    } else if let Some(rest) = spec.strip_prefix("~/") {
        (bases.home.clone(), rest, true)
    } else if let Some(rest) = spec.strip_prefix('/') {
        (bases.settings_root.clone(), rest, true)
    } else {
        let rest = spec.strip_prefix("./").unwrap_or(spec);
        let anchored = rest.trim_end_matches('/').contains('/');
        (bases.cwd.clone(), rest, anchored)
    };
    let rest = rest.trim_end_matches('/');
    let base = normalize(&base.to_string_lossy());
    let base = base.trim_end_matches('/');
    let depth = if anchored { "" } else { "(?:.*/)?" };
    let body = translate(rest, Syntax::Gitignore)?;
    let regex = format!("^{}/{depth}{body}(?:/.*)?$", regex::escape(base));
    let regex = Regex::new(&regex).map_err(|e| format!("{spec:?}: {e}"))?;
    let literal = !rest.is_empty() && !rest.contains(['*', '?', '[', '\\']);
    let file = literal.then(|| PathBuf::from(normalize(&format!("{base}/{rest}"))));
    Ok(Specifier::Path(regex, file))
}

/// `a/./b/../c` as `a/c`, without touching the file system (`..` at the root stays there).
pub(crate) fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bases() -> Bases {
        Bases {
            home: "/home/u".into(),
            settings_root: "/proj".into(),
            cwd: "/proj/sub".into(),
        }
    }

    fn rule(text: &str) -> Rule {
        parse(text, List::Allow, Path::new("/s.json"), &bases()).unwrap()
    }

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(String::from).collect()
    }

    #[test]
    fn tool_names_and_aliases() {
        assert!(rule("Bash").covers_tool("bash") && !rule("Bash").covers_tool("grep"));
        let edit = rule("Edit");
        assert!(edit.covers_tool("edit_file") && edit.covers_tool("write_file"));
        assert!(!rule("Write").covers_tool("edit_file"));
        let read = rule("Read");
        assert!(
            ["read_file", "grep", "glob"]
                .iter()
                .all(|t| read.covers_tool(t))
        );
        assert!(!read.covers_tool("edit_file"));
        assert!(rule("Task").covers_tool("agent") && rule("TodoWrite").covers_tool("todo_write"));
        assert!(rule("mcp__db").covers_tool("mcp__db__query"));
        assert!(!rule("mcp__db").covers_tool("mcp__dbx__query"));
        assert!(rule("mcp__db__*").covers_tool("mcp__db__query"));
        assert!(rule("mcp__db__query").covers_tool("mcp__db__query"));
        assert!(!rule("mcp__db__query").covers_tool("mcp__db__drop"));
        assert!(rule("edit_file").covers_tool("edit_file") && rule("Bash(*)").is_any());
        assert!(parse("Bash(ls", List::Deny, Path::new("/s"), &bases()).is_err());
        assert!(parse("Ba sh", List::Deny, Path::new("/s"), &bases()).is_err());
        assert!(!rule("Task(Explore)").covers_command(&words("Explore")));
    }

    #[test]
    fn exact_prefix_and_wildcard_commands() {
        let exact = rule("Bash(git status)");
        assert!(exact.covers_command(&words("git status")));
        assert!(!exact.covers_command(&words("git status --short")));
        let prefix = rule("Bash(cargo test:*)");
        assert!(prefix.covers_command(&words("cargo test")));
        assert!(prefix.covers_command(&words("cargo test --lib")));
        assert!(
            !prefix.covers_command(&words("cargo testx")),
            "word boundary"
        );
        assert!(!prefix.covers_command(&words("cargo")));
        let quoted = rule(r#"Bash(git commit -m "a b":*)"#);
        let said = ["git", "commit", "-m", "a b", "-q"];
        assert!(quoted.covers_command(&said.iter().map(|w| w.to_string()).collect::<Vec<_>>()));
        let wild = rule("Bash(npm run *)");
        assert!(wild.covers_command(&words("npm run build")));
        assert!(
            wild.covers_command(&words("npm run")),
            "a trailing ` *` is optional"
        );
        assert!(!wild.covers_command(&words("npm runx")));
        let ls = rule("Bash(ls *)");
        assert!(ls.covers_command(&words("ls -la")) && !ls.covers_command(&words("lsof")));
        assert!(rule("Bash(ls*)").covers_command(&words("lsof")));
        let middle = rule("Bash(git * main)");
        assert!(middle.covers_command(&words("git push origin main")));
        assert!(!middle.covers_command(&words("git push origin dev")));
        assert!(parse("Bash(a; b)", List::Allow, Path::new("/s"), &bases()).is_err());
    }

    #[test]
    fn the_four_kinds_of_path() {
        let root = rule("Read(//etc/secrets/**)");
        assert!(root.covers_path("/etc/secrets/a/b") && !root.covers_path("/etc/other"));
        let home = rule("Read(~/.ssh/**)");
        assert!(home.covers_path("/home/u/.ssh/id_rsa"));
        assert!(!home.covers_path("/proj/.ssh/id_rsa"));
        let settings = rule("Edit(/src/**/*.ts)");
        assert!(settings.covers_path("/proj/src/a/b.ts") && settings.covers_path("/proj/src/b.ts"));
        assert!(!settings.covers_path("/proj/sub/src/b.ts"));
        let env = rule("Read(./.env)");
        assert!(env.covers_path("/proj/sub/.env") && env.covers_path("/proj/sub/deep/.env"));
        assert!(!env.covers_path("/proj/.env") && !env.covers_path("/proj/sub/.envrc"));
        let anchored = rule("Read(secrets/*.key)");
        assert!(anchored.covers_path("/proj/sub/secrets/a.key"));
        assert!(!anchored.covers_path("/proj/sub/x/secrets/a.key"));
        let dir = rule("Read(./secrets)");
        assert!(dir.covers_path("/proj/sub/secrets") && dir.covers_path("/proj/sub/secrets/x"));
        assert!(rule("Read(*.env)").covers_path("/proj/sub/a/prod.env"));
        assert!(rule("Read").covers_path("/anything"));
    }

    #[test]
    fn normalize_removes_dots() {
        assert_eq!(normalize("/a/./b/../c"), "/a/c");
        assert_eq!(normalize("/../x"), "/x");
        assert_eq!(normalize("/a//b/"), "/a/b");
    }
}
