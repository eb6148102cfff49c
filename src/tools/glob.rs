//! The `glob` tool: find files by name pattern, newest first.
//!
//! Runs when the model calls it (read-only). It walks the directory once with `walk::files_with`
//! (which skips `.git`, `node_modules`, ... and `.gitignore`d paths), matches each relative path
//! against the pattern, and lists at most 100 hits, most recently modified first: the files
//! someone is working on are the likeliest to matter. The walk runs on a helper thread
//! (`bounded`), so a hung mount costs at most `WALK_LIMIT`, or one Ctrl+C.
//! It does not list directories or read files.

use crate::core::message::Outcome;
use crate::extras::consent_rules::{self, Rules};
use crate::tools::ToolContext;
use crate::tools::support::files::resolve;
use crate::tools::support::text::echo;
use crate::tools::support::{bounded, glob_regex, walk};
use serde::Deserialize;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// What the model is told about this tool (plain data, with the other tools' schemas).
pub(crate) use crate::tools::schemas::glob as schema;

const MAX_SHOWN: usize = 100;
/// A walk of a big tree takes seconds; one still running after this is on a hung mount.
const WALK_LIMIT: Duration = Duration::from_secs(60);

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    pub(crate) pattern: String,
    #[serde(default)]
    pub(crate) path: Option<String>,
}

pub fn run(args: Args, ctx: &ToolContext) -> Result<Outcome, String> {
    let root = match &args.path {
        Some(path) => resolve(&ctx.cwd, path),
        None => ctx.cwd.clone(),
    };
    let rules = ctx.rules.clone();
    bounded::off_thread(&ctx.cancel, &ctx.reads_running, WALK_LIMIT, move |_: &_| {
        find(&args, &root, &rules)
    })
    .map_err(|why| format!("gave up listing files: {why}"))?
}

/// The walk and the listing, on the helper thread.
/// A file a deny rule keeps from reading is not listed (`consent_rules::hides`).
fn find(args: &Args, root: &Path, rules: &Rules) -> Result<Outcome, String> {
    if !root.is_dir() {
        return Err(format!(
            "{} is not a directory",
            echo(&root.display().to_string())
        ));
    }
    let pattern = relative_pattern(&args.pattern, root);
    let matcher = glob_regex::compile_glob(pattern)?;
    // The match and the `stat` run on the walking threads.
    let mut found: Vec<(SystemTime, String)> = walk::files_with(root, |path| {
        let rel = walk::relative(root, path);
        let shown = matcher.is_match(&rel) && !consent_rules::hides(rules, "glob", path);
        shown.then(|| (modified(path), rel))
    });
    if found.is_empty() {
        return Ok(Outcome::text(no_match(&args.pattern, pattern)));
    }
    // Newest first; ties (same second, or unknown times) fall back to path order.
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let shown: Vec<&str> = found
        .iter()
        .take(MAX_SHOWN)
        .map(|(_, rel)| rel.as_str())
        .collect();
    let mut text = shown.join("\n");
    if found.len() > MAX_SHOWN {
        text.push_str(&format!("\n... and {} more", found.len() - MAX_SHOWN));
    }
    Ok(Outcome::text(text))
}

/// Models often write `./src/*.rs` or repeat the absolute directory; match relative paths anyway.
fn relative_pattern<'a>(pattern: &'a str, root: &Path) -> &'a str {
    let root = root.to_string_lossy();
    let root = root.trim_end_matches('/');
    let pattern = match pattern.strip_prefix(root) {
        Some(rest) if rest.starts_with('/') => &rest[1..],
        _ => pattern,
    };
    pattern.strip_prefix("./").unwrap_or(pattern)
}

fn modified(path: &Path) -> SystemTime {
    path.metadata()
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

fn no_match(original: &str, pattern: &str) -> String {
    let mut text = format!("No files match {}", echo(original));
    // The most common miss: `*.rs` meaning "anywhere" while `*` stays in the top directory.
    if !pattern.contains('/') && !pattern.contains("**") {
        text.push_str(&format!(
            " (`*` does not cross directories; try **/{})",
            echo(pattern)
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::{TempDir, test_context};
    use std::fs::{File, FileTimes};
    use std::time::Duration;

    fn glob(dir: &TempDir, pattern: &str, path: Option<&str>) -> String {
        let args = Args {
            pattern: pattern.into(),
            path: path.map(String::from),
        };
        run(args, &test_context(&dir.0)).unwrap().text
    }

    /// Write a file with a modification time `age` seconds in the past.
    fn write_aged(dir: &TempDir, rel: &str, age: u64) {
        let path = dir.write(rel, "x");
        let time = SystemTime::now() - Duration::from_secs(age);
        let file = File::options().write(true).open(path).unwrap();
        file.set_times(FileTimes::new().set_modified(time)).unwrap();
    }

    #[test]
    fn newest_first_relative_paths() {
        let dir = TempDir::new("glob-order");
        write_aged(&dir, "old.rs", 300);
        write_aged(&dir, "src/new.rs", 10);
        write_aged(&dir, "src/mid.rs", 100);
        write_aged(&dir, "notes.txt", 1);
        assert_eq!(
            glob(&dir, "**/*.rs", None),
            "src/new.rs\nsrc/mid.rs\nold.rs"
        );
        assert_eq!(glob(&dir, "src/*.rs", None), "src/new.rs\nsrc/mid.rs");
        assert_eq!(glob(&dir, "*.rs", Some("src")), "new.rs\nmid.rs");
        assert_eq!(glob(&dir, "./*.{txt,rs}", None), "notes.txt\nold.rs");
    }

    #[test]
    fn skips_dirs_and_gitignored_paths() {
        let dir = TempDir::new("glob-skip");
        dir.write(".gitignore", "*.gen.rs\nbuild/\n");
        dir.write("a.rs", "");
        dir.write("b.gen.rs", "");
        dir.write("build/c.rs", "");
        dir.write("target/d.rs", "");
        dir.write(".git/e.rs", "");
        dir.write("node_modules/f.rs", "");
        dir.write("lib/.gitignore", "*.rs\n!keep.rs\n");
        dir.write("lib/drop.rs", "");
        dir.write("lib/keep.rs", "");
        let mut found: Vec<String> = glob(&dir, "**/*.rs", None)
            .lines()
            .map(String::from)
            .collect();
        found.sort();
        assert_eq!(found, ["a.rs", "lib/keep.rs"]);
    }

    #[test]
    fn caps_at_one_hundred() {
        let dir = TempDir::new("glob-cap");
        for i in 0..130 {
            dir.write(&format!("f{i:03}.txt"), "");
        }
        let text = glob(&dir, "*.txt", None);
        assert_eq!(text.lines().count(), 101);
        assert!(text.ends_with("\n... and 30 more"));
    }

    #[test]
    fn no_match_and_absolute_pattern() {
        let dir = TempDir::new("glob-none");
        dir.write("src/a.rs", "");
        let text = glob(&dir, "*.rs", None);
        assert_eq!(
            text,
            "No files match *.rs (`*` does not cross directories; try **/*.rs)"
        );
        let absolute = format!("{}/src/*.rs", dir.0.display());
        assert_eq!(glob(&dir, &absolute, None), "src/a.rs");
    }

    #[test]
    fn every_property_of_its_schema_is_a_field_of_its_args() {
        crate::tools::test_support::check_schema_fits::<Args>(&schema());
    }
}
