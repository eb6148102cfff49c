//! The directory walker shared by `glob` and `grep`, with the `.gitignore` rules it obeys (their
//! patterns are translated in `glob_regex.rs`).
//!
//! A tool calls `files_with(root, keep)` once per call. It reads the tree one level at a time,
//! each level's directories spread over a few scoped threads, never descending into the fixed
//! skip list (`.git`, `node_modules`, ...) or into anything a `.gitignore` ignores: the ones
//! inside the tree, at every level, and the ones above `root` up to its repository root. `keep`
//! runs on the walking threads, so per-file work (a `stat`, a glob match) is parallel too.
//! Results are sorted into path order at the end, so they are the same on every run.
//!
//! It does not read file contents, follow symlinks, or know about `.git/info/exclude`, global
//! excludes or escaped trailing spaces in `.gitignore`. Why this and not `walkdir`: DESIGN.md,
//! "The walk".

use super::files;
use super::glob_regex::{Syntax, translate};
use regex::bytes::{Regex as BytesRegex, RegexSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Directories no search wants: version control internals, dependencies, build output, caches.
const SKIP_DIRS: [&str; 5] = [".git", "node_modules", "target", "__pycache__", ".venv"];
const MAX_THREADS: usize = 8;
/// Directories of one level per walking thread, at least: fewer are listed on the caller's own.
const DIRS_PER_THREAD: usize = 4;

/// What `keep` makes of every file under `root` that is neither skipped nor ignored, in path
/// order; files it returns `None` for are left out.
pub(crate) fn files_with<T: Send>(root: &Path, keep: impl Fn(&Path) -> Option<T> + Sync) -> Vec<T> {
    let mut ignores = ignores_above(root);
    ignores.extend(IgnoreFile::load(root).map(Arc::new));
    // The root itself is never filtered: asking for `target/` explicitly means it.
    let mut level = vec![Pending {
        path: root.to_path_buf(),
        ignores,
    }];
    let mut found = Vec::new();
    while !level.is_empty() {
        let (subdirs, files) = read_level(&level, &keep);
        found.extend(files);
        level = subdirs;
    }
    // `Path` compares by components, which is the order of a sorted depth-first walk.
    found.sort_unstable_by(|a: &(PathBuf, T), b| a.0.cmp(&b.0));
    found.into_iter().map(|(_, kept)| kept).collect()
}

/// A directory still to read, with the `.gitignore` files in force inside it, outermost first.
struct Pending {
    path: PathBuf,
    ignores: Vec<Arc<IgnoreFile>>,
}

/// The `.gitignore` files above `root`: searching `repo/src` should still honour
/// `repo/.gitignore`, but nothing outside the repository. Outermost first.
fn ignores_above(root: &Path) -> Vec<Arc<IgnoreFile>> {
    let mut outer = Vec::new();
    let mut in_repo = root.join(".git").exists();
    for dir in root.ancestors().skip(1) {
        if in_repo {
            break;
        }
        outer.extend(IgnoreFile::load(dir).map(Arc::new));
        in_repo = dir.join(".git").exists();
    }
    if !in_repo {
        outer.clear();
    }
    outer.reverse();
    outer
}

/// Read every directory of one level on the calling thread and, for a big level, scoped helper
/// threads; all take directories off a shared counter. Returns the next level and the files
/// kept, in no particular order.
fn read_level<T: Send>(
    level: &[Pending],
    keep: &(impl Fn(&Path) -> Option<T> + Sync),
) -> (Vec<Pending>, Vec<(PathBuf, T)>) {
    let next = AtomicUsize::new(0);
    let work = || {
        let (mut subdirs, mut files) = (Vec::new(), Vec::new());
        while let Some(dir) = level.get(next.fetch_add(1, Ordering::Relaxed)) {
            read_dir(dir, keep, &mut subdirs, &mut files);
        }
        (subdirs, files)
    };
    let (mut subdirs, mut files) = (Vec::new(), Vec::new());
    for (dirs, kept) in share_work(level.len(), DIRS_PER_THREAD, work) {
        subdirs.extend(dirs);
        files.extend(kept);
    }
    (subdirs, files)
}

/// Run `work` on the calling thread and, when there is enough of it, on scoped helper threads
/// too (`helper_threads`); `work` hands out the `items` itself, off a shared counter. Returns
/// every thread's result. Used by the walk and by grep's search.
pub(crate) fn share_work<R: Send>(
    items: usize,
    per_thread: usize,
    work: impl Fn() -> R + Sync,
) -> Vec<R> {
    let helpers = helper_threads(items, per_thread);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..helpers).map(|_| scope.spawn(&work)).collect();
        let mut results = vec![work()];
        // Nothing in a worker panics on input; if one somehow did, its share is lost.
        results.extend(workers.into_iter().filter_map(|worker| worker.join().ok()));
        results
    })
}

/// How many threads should help the calling one with `items` pieces of work: none unless each
/// of at least two would get `per_thread`. A thread costs more than listing a few directories or
/// searching a few files. Only then is the core count read: on Linux that is a dozen system
/// calls (DESIGN.md, "The walk").
fn helper_threads(items: usize, per_thread: usize) -> usize {
    let wanted = items / per_thread;
    if wanted < 2 {
        return 0;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    wanted.min(cores).min(MAX_THREADS) - 1
}

/// List one directory: admitted subdirectories go to `subdirs` (with their own `.gitignore`
/// added), admitted files through `keep` to `files`. An unreadable directory lists nothing.
fn read_dir<T>(
    dir: &Pending,
    keep: &impl Fn(&Path) -> Option<T>,
    subdirs: &mut Vec<Pending>,
    files: &mut Vec<(PathBuf, T)>,
) {
    let Ok(entries) = fs::read_dir(&dir.path) else {
        return;
    };
    for entry in entries.flatten() {
        // Symlinks are neither followed nor listed, so a link cannot lead the walk in circles.
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if file_type.is_dir() {
            let skipped = SKIP_DIRS.iter().any(|s| entry.file_name() == *s);
            if skipped || is_ignored(&dir.ignores, &path, Kind::Dir) {
                continue;
            }
            let mut ignores = dir.ignores.clone();
            ignores.extend(IgnoreFile::load(&path).map(Arc::new));
            subdirs.push(Pending { path, ignores });
        } else if file_type.is_file() && !is_ignored(&dir.ignores, &path, Kind::File) {
            files.extend(keep(&path).map(|kept| (path, kept)));
        }
    }
}

/// Is `path` ignored by the `.gitignore` files in force (outermost first)?
fn is_ignored(ignores: &[Arc<IgnoreFile>], path: &Path, kind: Kind) -> bool {
    // As in git, the deepest `.gitignore` with an opinion about the path decides.
    let verdict = ignores
        .iter()
        .rev()
        .find_map(|file| file.verdict(path, kind));
    verdict.unwrap_or(false)
}

/// `path` relative to `root`: the form globs match against and tools print.
pub(crate) fn relative(root: &Path, path: &Path) -> String {
    match below(path, root) {
        Some(rel) => String::from_utf8_lossy(rel).into_owned(),
        None => path.to_string_lossy().into_owned(),
    }
}

/// `path` below `base`, as bytes. Every path the walk yields is `base` joined with more, so a
/// byte prefix settles it, without `Path::strip_prefix`'s comparing component by component
/// (DESIGN.md, "The walk"). Falls back to it for any other spelling.
fn below<'a>(path: &'a Path, base: &Path) -> Option<&'a [u8]> {
    let bytes = path.as_os_str().as_encoded_bytes();
    let base_bytes = base.as_os_str().as_encoded_bytes();
    let rest = bytes.strip_prefix(base_bytes).and_then(|rest| match rest {
        [b'/', rel @ ..] => Some(rel),
        rel if base_bytes.ends_with(b"/") && !rel.is_empty() => Some(rel),
        _ => None,
    });
    rest.or_else(|| Some(path.strip_prefix(base).ok()?.as_os_str().as_encoded_bytes()))
}

/// Is this entry a directory or something else? Dir-only ignore rules need to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    File,
}

/// One `.gitignore`: its patterns as one regex set over path bytes, and what each one means.
struct IgnoreFile {
    base: PathBuf,
    patterns: RegexSet,
    rules: Vec<Rule>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Rule {
    /// `!pattern`: re-include what an earlier pattern ignored.
    negated: bool,
    /// `pattern/`: only directories.
    dir_only: bool,
}

impl IgnoreFile {
    /// A `.gitignore` that is not a regular file of at most 1 MiB (the repository may make it a
    /// link to `/dev/zero`) counts as none, as one that is not UTF-8 does.
    fn load(dir: &Path) -> Option<IgnoreFile> {
        let bytes = files::read_capped(&dir.join(".gitignore"), files::MAX_SETTINGS_BYTES).ok()?;
        IgnoreFile::parse(dir, &String::from_utf8(bytes).ok()?)
    }

    fn parse(base: &Path, text: &str) -> Option<IgnoreFile> {
        let mut lines: Vec<(String, Rule)> = text.lines().filter_map(parse_line).collect();
        if lines.is_empty() {
            return None;
        }
        let patterns = match RegexSet::new(lines.iter().map(|(regex, _)| regex)) {
            Ok(set) => set,
            Err(_) => {
                // One bad line should cost that line only, not the whole file.
                lines.retain(|(regex, _)| BytesRegex::new(regex).is_ok());
                RegexSet::new(lines.iter().map(|(regex, _)| regex)).ok()?
            }
        };
        Some(IgnoreFile {
            base: base.to_path_buf(),
            patterns,
            rules: lines.into_iter().map(|(_, rule)| rule).collect(),
        })
    }

    /// `Some(true)` ignored, `Some(false)` re-included by a `!` rule, `None` no rule matches.
    fn verdict(&self, path: &Path, kind: Kind) -> Option<bool> {
        let rel = below(path, &self.base)?;
        // Most paths match nothing; `is_match` answers that much faster than listing matches.
        if !self.patterns.is_match(rel) {
            return None;
        }
        let matched = self.patterns.matches(rel);
        // Within one file the last matching rule wins.
        let mut last_first = matched.iter().rev().map(|i| self.rules[i]);
        let rule = last_first.find(|rule| kind == Kind::Dir || !rule.dir_only)?;
        Some(!rule.negated)
    }
}

/// One `.gitignore` line as an anchored regex (relative to the file's directory) and its rule.
fn parse_line(line: &str) -> Option<(String, Rule)> {
    let line = line.trim_end();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let (negated, line) = match line.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    // `\#` and `\!` start a pattern with a literal `#` or `!`.
    let line = match line.strip_prefix('\\') {
        Some(rest) if rest.starts_with(['#', '!']) => rest,
        _ => line,
    };
    let (dir_only, line) = match line.strip_suffix('/') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    // A slash at the start or in the middle anchors the pattern to this directory; without one
    // it matches a name at any depth.
    let prefix = if line.contains('/') { "" } else { "(?:.*/)?" };
    let body = translate(line.strip_prefix('/').unwrap_or(line), Syntax::Gitignore).ok()?;
    if body.is_empty() {
        return None;
    }
    // Byte-oriented (`-u`) regexes compile several times faster, and a tree can hold hundreds
    // of `.gitignore` files; the cost is that `?` matches one byte, not one character.
    let regex = format!("(?s-u)^{prefix}{body}$");
    Some((regex, Rule { negated, dir_only }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::support::glob_regex::compile_glob;
    use crate::tools::test_support::TempDir;

    fn glob(pattern: &str, path: &str) -> bool {
        compile_glob(pattern).expect("valid glob").is_match(path)
    }

    #[test]
    fn small_work_gets_no_helper_threads() {
        assert_eq!(helper_threads(0, DIRS_PER_THREAD), 0);
        assert_eq!(helper_threads(2 * DIRS_PER_THREAD - 1, DIRS_PER_THREAD), 0);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let most = cores.min(MAX_THREADS) - 1;
        assert_eq!(helper_threads(1_000_000, 1), most);
    }

    #[test]
    fn below_strips_the_base_by_bytes_and_by_components() {
        fn rel<'a>(path: &'a str, base: &str) -> Option<&'a [u8]> {
            below(Path::new(path), Path::new(base))
        }
        assert_eq!(rel("/a/b/c.rs", "/a/b"), Some(&b"c.rs"[..]));
        assert_eq!(rel("/a/b/c.rs", "/a/b/"), Some(&b"c.rs"[..]));
        assert_eq!(rel("./d/e", "."), Some(&b"d/e"[..]));
        assert_eq!(rel("/a/bc/d", "/a/b"), None);
        assert_eq!(rel("/a//b/c", "/a/b"), Some(&b"c"[..]));
        assert_eq!(relative(Path::new("/x"), Path::new("/y/z")), "/y/z");
    }

    #[test]
    fn glob_table() {
        let table = [
            ("*.rs", "main.rs", true),
            ("*.rs", "src/main.rs", false),
            ("**/*.rs", "main.rs", true),
            ("**/*.rs", "src/a/b.rs", true),
            ("src/*.rs", "src/lib.rs", true),
            ("src/*.rs", "src/a/lib.rs", false),
            ("src/**", "src/a/b.c", true),
            ("src/**/x.rs", "src/x.rs", true),
            ("*.{rs,toml}", "Cargo.toml", true),
            ("*.{rs,toml}", "Cargo.lock", false),
            ("?.txt", "a.txt", true),
            ("?.txt", "ab.txt", false),
            ("[abc].md", "b.md", true),
            ("[!abc].md", "b.md", false),
            ("a+b(1).txt", "a+b(1).txt", true),
        ];
        for (pattern, path, expected) in table {
            assert_eq!(glob(pattern, path), expected, "{pattern} vs {path}");
        }
        assert!(compile_glob("*.{rs").is_err());
    }

    #[test]
    fn gitignore_table() {
        let text = "# comment\n\n*.log\n!keep.log\n/build\ndocs/*.html\ntmp/\n**/gen/**\nx?[0-9]\ncafé.*\n";
        let file = IgnoreFile::parse(Path::new("/r"), text).expect("rules");
        let table = [
            ("/r/a.log", Kind::File, Some(true)),
            ("/r/deep/a.log", Kind::File, Some(true)),
            ("/r/keep.log", Kind::File, Some(false)),
            ("/r/build", Kind::Dir, Some(true)),
            ("/r/src/build", Kind::Dir, None),
            ("/r/docs/a.html", Kind::File, Some(true)),
            ("/r/docs/sub/a.html", Kind::File, None),
            ("/r/tmp", Kind::Dir, Some(true)),
            ("/r/tmp", Kind::File, None),
            ("/r/a/gen/b.rs", Kind::File, Some(true)),
            ("/r/xa7", Kind::File, Some(true)),
            ("/r/main.rs", Kind::File, None),
            ("/r/café.txt", Kind::File, Some(true)),
        ];
        for (path, kind, expected) in table {
            assert_eq!(file.verdict(Path::new(path), kind), expected, "{path}");
        }
    }

    #[test]
    fn walk_skips_and_honours_nested_gitignore() {
        let dir = TempDir::new("walk");
        dir.write(".gitignore", "*.log\nout/\n");
        dir.write("a.rs", "");
        dir.write("a.log", "");
        dir.write("out/x.rs", "");
        dir.write("target/t.rs", "");
        dir.write("node_modules/m.js", "");
        dir.write("sub/.gitignore", "!keep.log\nlocal.rs\n");
        dir.write("sub/keep.log", "");
        dir.write("sub/local.rs", "");
        dir.write("sub/b.rs", "");
        let found = files_with(&dir.0, |path| Some(relative(&dir.0, path)));
        assert_eq!(
            found,
            [
                ".gitignore",
                "a.rs",
                "sub/.gitignore",
                "sub/b.rs",
                "sub/keep.log"
            ]
        );
    }

    #[test]
    fn walk_from_subdir_honours_repo_gitignore() {
        let dir = TempDir::new("walk-repo");
        std::fs::create_dir_all(dir.0.join(".git")).expect("mkdir");
        dir.write(".gitignore", "*.tmp\n");
        dir.write("src/a.rs", "");
        dir.write("src/b.tmp", "");
        let root = dir.0.join("src");
        let found = files_with(&root, |path| Some(relative(&root, path)));
        assert_eq!(found, ["a.rs"]);
    }
}
