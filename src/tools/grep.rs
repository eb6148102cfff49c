//! The `grep` tool: search file contents with a regex, as `path:line: text`.
//!
//! Runs when the model calls it (read-only). It lists the files with `walk::files_with` (a
//! parallel walk with the same skips as `glob`), then searches them in batches, each batch on a
//! few scoped threads. Each file is read once into a reused buffer, skipped if binary, and scanned
//! as one buffer with `regex::bytes`, so only matching lines cost per-line work. Batches are
//! merged in path order and the search stops after the batch that passes the cap, so the output
//! is the same on every run.
//! Special files (FIFOs, devices, sockets) and files over 64 MiB are skipped, so a search never
//! blocks or fills the memory; patterns are capped in length and compiled size. The search runs
//! on a helper thread (`bounded`): Ctrl+C or `SEARCH_LIMIT` ends it with what it found so far,
//! and a read on a hung mount costs the call, not the session.
//! A file a deny permission rule keeps from reading is not searched (`consent_rules::hides`).
//! It does not do multi-line matches, context lines or replacements.

use crate::core::message::Outcome;
use crate::extras::consent_rules::{Rules, hides};
use crate::tools::ToolContext;
use crate::tools::support::files::resolve;
use crate::tools::support::text::{echo, pattern_too_long};
use crate::tools::support::{bounded, glob_regex, walk};
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;
use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// What the model is told about this tool (plain data, with the other tools' schemas).
pub(crate) use crate::tools::schemas::grep as schema;

const MAX_MATCHES: usize = 200;
/// Files in the first batch (each next one is twice as big): enough to keep the threads busy,
/// few enough to stop soon after the cap.
const BATCH: usize = 512;
/// Files of a batch per searching thread, at least: fewer are searched on the caller's own.
const FILES_PER_THREAD: usize = 16;
const BINARY_PROBE: u64 = 8192;
/// A matching line in a minified file can be megabytes; the model needs only the start.
const MAX_LINE_CHARS: usize = 300;
/// Each file is read whole into memory; bigger ones are skipped (bash with `grep` reads them).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The most memory a compiled pattern may take (the regex crate's default, made explicit).
const MAX_COMPILED_BYTES: usize = 10 * 1024 * 1024;
/// A search of a big tree takes seconds; past this it stops and shows what it has found.
const SEARCH_LIMIT: Duration = Duration::from_secs(60);

#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    pub(crate) pattern: String,
    #[serde(default)]
    pub(crate) path: Option<String>,
    #[serde(default)]
    pub(crate) include: Option<String>,
}

pub fn run(args: Args, ctx: &ToolContext) -> Result<Outcome, String> {
    let regex = compile(&args.pattern)?;
    let pattern = echo(&args.pattern);
    let (cwd, rules) = (ctx.cwd.clone(), ctx.rules.clone());
    let job = move |stop: &AtomicBool| search(&args, &cwd, &regex, stop, &rules);
    let (lines, stopped) = bounded::off_thread(&ctx.cancel, &ctx.reads_running, SEARCH_LIMIT, job)
        .map_err(|why| format!("gave up searching: {why}"))??;
    let note = if lines.len() > MAX_MATCHES {
        "(stopped at 200 matches; more exist: narrow the pattern, path or include)".to_string()
    } else if stopped && ctx.cancel.load(Ordering::Relaxed) {
        "(cancelled: results are incomplete)".to_string()
    } else if stopped {
        let secs = SEARCH_LIMIT.as_secs();
        format!("(stopped after {secs} s: results are incomplete)")
    } else if lines.is_empty() {
        return Ok(Outcome::text(format!("No matches for {pattern:?}")));
    } else {
        String::new()
    };
    let mut shown: Vec<String> = lines.into_iter().take(MAX_MATCHES).collect();
    shown.extend(Some(note).filter(|note| !note.is_empty()));
    Ok(Outcome::text(shown.join("\n")))
}

/// Compile the pattern, refusing one too long to be a search: a 10 MB pattern took 1 GB of
/// memory to parse before any size limit applied.
fn compile(pattern: &str) -> Result<Regex, String> {
    if let Some(too_long) = pattern_too_long("grep", pattern) {
        return Err(too_long);
    }
    // Multi-line mode so `^` and `$` mean line starts and ends, as in every grep.
    let built = (RegexBuilder::new(pattern).multi_line(true).crlf(true))
        .size_limit(MAX_COMPILED_BYTES)
        .build();
    let shown = echo(pattern);
    built.map_err(|e| format!("invalid regex {shown:?}: {}", echo(&e.to_string())))
}

/// The search, on the helper thread: the matching lines (at most `MAX_MATCHES + 1`) and
/// whether `stop` cut it short.
fn search(
    args: &Args,
    cwd: &Path,
    regex: &Regex,
    stop: &AtomicBool,
    rules: &Rules,
) -> Result<(Vec<String>, bool), String> {
    let root = match &args.path {
        Some(path) => resolve(cwd, path),
        None => cwd.to_path_buf(),
    };
    let shown = echo(&root.display().to_string());
    let meta = root
        .metadata()
        .map_err(|e| format!("cannot search {shown}: {e}"))?;
    if meta.is_file() && meta.len() > MAX_FILE_BYTES {
        let size = meta.len();
        return Err(format!(
            "{shown} is {size} bytes; grep reads files up to {MAX_FILE_BYTES} (use bash with grep)"
        ));
    }
    if !meta.is_file() && !meta.is_dir() {
        return Err(format!("{shown} is not a regular file or directory"));
    }
    let lines = if meta.is_file() {
        let batch = [(root, args.path.clone().unwrap_or_default())];
        let mut lines = Vec::new();
        append_hits(&mut lines, &batch, search_batch(&batch, regex));
        lines
    } else {
        let included = include_filter(args.include.as_deref())?;
        let wanted = |path: &Path, rel: &str| included(rel) && !hides(rules, "grep", path);
        search_tree(&root, wanted, regex, stop)
    };
    Ok((lines, stop.load(Ordering::Relaxed)))
}

/// A file to search and the name to print for it.
type Target = (PathBuf, String);

/// The `include` filter over relative paths: `*.rs` matches file names anywhere, as in
/// `grep --include`; a glob with a `/` matches the whole path.
fn include_filter(include: Option<&str>) -> Result<impl Fn(&str) -> bool + Sync, String> {
    let glob = include.map(glob_regex::compile_glob).transpose()?;
    let by_name = include.is_some_and(|glob| !glob.contains('/'));
    Ok(move |rel: &str| {
        let subject = if by_name {
            rel.rsplit('/').next().unwrap_or(rel)
        } else {
            rel
        };
        glob.as_ref().is_none_or(|glob| glob.is_match(subject))
    })
}

/// Walk the tree (in parallel, see `walk`), then search its files in batches, in path order,
/// until the cap is passed or the user cancels. Returns at most `MAX_MATCHES + 1` formatted
/// lines (the extra one says "more exist").
fn search_tree(
    root: &Path,
    wanted: impl Fn(&Path, &str) -> bool + Sync,
    regex: &Regex,
    cancel: &AtomicBool,
) -> Vec<String> {
    let targets: Vec<Target> = walk::files_with(root, |path| {
        let rel = walk::relative(root, path);
        wanted(path, &rel).then(|| (path.to_path_buf(), rel))
    });
    let mut lines = Vec::new();
    let (mut start, mut size) = (0, BATCH);
    while start < targets.len() && lines.len() <= MAX_MATCHES && !cancel.load(Ordering::Relaxed) {
        let batch = &targets[start..targets.len().min(start + size)];
        append_hits(&mut lines, batch, search_batch(batch, regex));
        // Each batch ends with threads waiting for the slowest; a search that has not hit the cap
        // yet is likely to go on, so it gets fewer, bigger batches.
        (start, size) = (start + size, size * 2);
    }
    lines
}

/// One matching line: the index into its batch, the 1-based line number and the text.
struct Hit {
    file: usize,
    line: usize,
    text: String,
}

/// Append a batch's hits as `path:line: text` in path order, up to `MAX_MATCHES + 1` in all.
fn append_hits(lines: &mut Vec<String>, batch: &[Target], mut hits: Vec<Hit>) {
    hits.sort_by_key(|hit| (hit.file, hit.line));
    let room = (MAX_MATCHES + 1).saturating_sub(lines.len());
    for hit in hits.into_iter().take(room) {
        lines.push(format!("{}:{}: {}", batch[hit.file].1, hit.line, hit.text));
    }
}

/// Search one batch on the calling thread and, for a big batch, helper threads
/// (`walk::share_work`); all take files off a shared counter.
fn search_batch(batch: &[Target], regex: &Regex) -> Vec<Hit> {
    let next = AtomicUsize::new(0);
    let work = || {
        let (mut buffer, mut hits) = (Vec::new(), Vec::new());
        loop {
            let file = next.fetch_add(1, Ordering::Relaxed);
            let Some((path, _)) = batch.get(file) else {
                break;
            };
            search_file(path, regex, &mut buffer, |line, text| {
                hits.push(Hit { file, line, text })
            });
        }
        hits
    };
    let shares = walk::share_work(batch.len(), FILES_PER_THREAD, work);
    shares.into_iter().flatten().collect()
}

/// Report up to `MAX_MATCHES + 1` matching lines of one file. Unreadable and binary files are
/// skipped silently: a search over a tree should not fail on one odd file.
fn search_file(
    path: &Path,
    regex: &Regex,
    buffer: &mut Vec<u8>,
    mut report: impl FnMut(usize, String),
) {
    // Checked before opening: opening a device can do things (the walk lists only regular
    // files, but a path can change in between).
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() <= MAX_FILE_BYTES);
    // O_NONBLOCK too: should the path have become a FIFO since, opening it does not wait.
    let open = || {
        let mut options = OpenOptions::new();
        options
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        options.open(path).ok()
    };
    let Some(mut file) = regular.then(open).flatten() else {
        return;
    };
    buffer.clear();
    // Read the start first, so a large binary file is rejected without reading all of it.
    if (&mut file).take(BINARY_PROBE).read_to_end(buffer).is_err() || buffer.contains(&0) {
        return;
    }
    if file.read_to_end(buffer).is_err() {
        return;
    }
    let mut line = 1;
    let mut counted_to = 0;
    let mut from = 0;
    let mut reported = 0;
    while from < buffer.len() && reported <= MAX_MATCHES {
        let Some(found) = regex.find_at(buffer, from) else {
            break;
        };
        let start = buffer[..found.start()]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let end = buffer[found.start()..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(buffer.len(), |i| found.start() + i);
        // Count newlines only between matches, so line numbers cost nothing on silent stretches.
        line += buffer[counted_to..start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        counted_to = start;
        report(line, shorten(&buffer[start..end]));
        reported += 1;
        // One hit per line: continue on the next line.
        from = end + 1;
    }
}

fn shorten(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = String::from_utf8_lossy(line);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        None => text.into_owned(),
        Some((cut, _)) => format!("{} …", &text[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::support::text::MAX_PATTERN_BYTES;
    use crate::tools::test_support::{TempDir, test_context};

    fn grep(
        dir: &TempDir,
        pattern: &str,
        path: Option<&str>,
        include: Option<&str>,
    ) -> Result<String, String> {
        let args = Args {
            pattern: pattern.into(),
            path: path.map(String::from),
            include: include.map(String::from),
        };
        run(args, &test_context(&dir.0)).map(|o| o.text)
    }

    #[test]
    fn format_is_path_line_text_in_path_order() {
        let dir = TempDir::new("grep-format");
        dir.write("b.rs", "fn b() {}\nlet x = 1;\r\nfn c() {}\n");
        dir.write("a/z.rs", "// nothing\nfn a() {}");
        let text = grep(&dir, r"^fn \w+", None, None).unwrap();
        assert_eq!(
            text,
            "a/z.rs:2: fn a() {}\nb.rs:1: fn b() {}\nb.rs:3: fn c() {}"
        );
        let text = grep(&dir, r"1;$", Some("b.rs"), None).unwrap();
        assert_eq!(text, "b.rs:2: let x = 1;");
    }

    #[test]
    fn include_skips_and_binary() {
        let dir = TempDir::new("grep-include");
        dir.write("src/main.rs", "needle\n");
        dir.write("notes.md", "needle\n");
        dir.write("target/out.rs", "needle\n");
        dir.write(".gitignore", "ignored.rs\n");
        dir.write("ignored.rs", "needle\n");
        dir.write("blob.bin", b"needle\0\n");
        assert_eq!(
            grep(&dir, "needle", None, Some("*.rs")).unwrap(),
            "src/main.rs:1: needle"
        );
        assert_eq!(
            grep(&dir, "needle", None, None).unwrap(),
            "notes.md:1: needle\nsrc/main.rs:1: needle"
        );
        assert_eq!(
            grep(&dir, "needle", None, Some("src/**")).unwrap(),
            "src/main.rs:1: needle"
        );
        assert_eq!(
            grep(&dir, "nothing", None, None).unwrap(),
            "No matches for \"nothing\""
        );
    }

    #[test]
    fn invalid_regex_and_missing_path_are_errors() {
        let dir = TempDir::new("grep-errors");
        assert!(
            grep(&dir, "fn (", None, None)
                .unwrap_err()
                .starts_with("invalid regex")
        );
        assert!(
            grep(&dir, "x", Some("nope"), None)
                .unwrap_err()
                .starts_with("cannot search")
        );
    }

    #[test]
    fn caps_matches_across_files_deterministically() {
        let dir = TempDir::new("grep-cap");
        let body: String = (0..50).map(|i| format!("hit {i}\n")).collect();
        for f in 0..1200 {
            dir.write(&format!("f{f:04}.txt"), &body);
        }
        let text = grep(&dir, "hit", None, None).unwrap();
        assert_eq!(text.lines().count(), 201);
        assert!(text.starts_with("f0000.txt:1: hit 0\n"));
        assert!(text.contains("\nf0003.txt:50: hit 49\n"));
        assert!(text.ends_with("more exist: narrow the pattern, path or include)"));
    }

    #[test]
    fn ctrl_c_stops_the_search_and_says_so() {
        let dir = TempDir::new("grep-cancel");
        dir.write("a.txt", "needle\n");
        let ctx = test_context(&dir.0);
        ctx.cancel.store(true, Ordering::Relaxed);
        let args = Args {
            pattern: "needle".into(),
            path: None,
            include: None,
        };
        let text = run(args, &ctx).unwrap().text;
        assert_eq!(text, "(cancelled: results are incomplete)");
    }

    #[test]
    fn huge_patterns_are_refused_before_compiling() {
        let dir = TempDir::new("grep-huge-pattern");
        let err = grep(&dir, &"a".repeat(MAX_PATTERN_BYTES + 1), None, None).unwrap_err();
        assert_eq!(err, "the pattern is 8193 bytes; grep takes up to 8192");
        let err = grep(&dir, "x", None, Some(&"*".repeat(MAX_PATTERN_BYTES + 1))).unwrap_err();
        assert!(err.contains("glob takes up to 8192"), "{err}");
        assert!(
            grep(&dir, "(?:a{1000}){1000}", None, None)
                .unwrap_err()
                .contains("size limit")
        );
    }

    #[test]
    fn empty_matches_report_each_line_once() {
        let dir = TempDir::new("grep-empty");
        dir.write("f.txt", "a\n\nb\n");
        assert_eq!(
            grep(&dir, "x*", None, None).unwrap(),
            "f.txt:1: a\nf.txt:2: \nf.txt:3: b"
        );
    }

    #[test]
    fn special_and_huge_files_are_skipped_or_refused() {
        let dir = TempDir::new("grep-special");
        dir.write("a.txt", "needle\n");
        let fifo = dir.0.join("pipe");
        let name = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let huge = dir.write("huge.txt", "needle\n");
        std::fs::File::options()
            .write(true)
            .open(&huge)
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        let text = grep(&dir, "needle", None, None).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("a.txt"), "{text}");
        let err = grep(&dir, "needle", Some("pipe"), None).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        let err = grep(&dir, "needle", Some("huge.txt"), None).unwrap_err();
        assert!(err.contains("bytes; grep reads files up to"), "{err}");
    }

    #[test]
    fn every_property_of_its_schema_is_a_field_of_its_args() {
        crate::tools::test_support::check_schema_fits::<Args>(&schema());
    }
}
