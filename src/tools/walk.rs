//! The directory walker shared by `glob` and `grep`, and the glob-to-regex translator they use.
//!
//! A tool calls `files(root)` once per call. It walks the tree with `walkdir`, never descending
//! into the fixed skip list (`.git`, `node_modules`, ...) or into anything a `.gitignore` ignores:
//! the ones inside the tree, at every level, and the ones above `root` up to its repository root.
//! Files come back in path order, so results are the same on every run.
//!
//! It does not read file contents, follow symlinks, or know about `.git/info/exclude`, global
//! excludes or escaped trailing spaces in `.gitignore`.

use regex::Regex;
use regex::bytes::{Regex as BytesRegex, RegexSet};
use std::fs;
use std::path::{Path, PathBuf};
use walkdir::{DirEntry, WalkDir};

/// Directories no search wants: version control internals, dependencies, build output, caches.
const SKIP_DIRS: [&str; 5] = [".git", "node_modules", "target", "__pycache__", ".venv"];

/// Every file under `root` that is neither skipped nor ignored, in path order, found lazily.
pub fn files(root: &Path) -> impl Iterator<Item = PathBuf> + use<> {
    let mut ignores = IgnoreStack::for_root(root);
    WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(move |entry| ignores.admit(entry))
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_file())
        .map(DirEntry::into_path)
}

/// `path` relative to `root`: the form globs match against and tools print.
pub fn relative(root: &Path, path: &Path) -> String {
    match below(path, root) {
        Some(rel) => String::from_utf8_lossy(rel).into_owned(),
        None => path.to_string_lossy().into_owned(),
    }
}

/// `path` below `base`, as bytes. Every path the walk yields is `base` joined with more, so a
/// byte prefix settles it; `Path::strip_prefix` compares component by component, and was the
/// largest cost of a glob over a big tree. Falls back to it for any other spelling.
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

/// Compile a glob (`*`, `**`, `?`, `[..]`, `{a,b}`) into a regex that must match a whole
/// `/`-separated relative path.
pub fn compile_glob(pattern: &str) -> Result<Regex, String> {
    let body = translate(pattern, Syntax::Glob)?;
    Regex::new(&format!("^{body}$")).map_err(|e| format!("invalid glob {pattern:?}: {e}"))
}

/// Is this entry a directory or something else? Dir-only ignore rules need to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    File,
}

/// The `.gitignore` files in force at the walker's current position, outermost first.
struct IgnoreStack {
    /// From directories above the walk root, inside the same repository: always in force.
    outer: Vec<IgnoreFile>,
    /// From directories inside the walk, tagged with their depth so leaving a directory drops them.
    inner: Vec<(usize, IgnoreFile)>,
}

impl IgnoreStack {
    fn for_root(root: &Path) -> IgnoreStack {
        // Searching `repo/src` should still honour `repo/.gitignore`, but nothing outside the repo.
        let mut outer = Vec::new();
        let mut in_repo = root.join(".git").exists();
        for dir in root.ancestors().skip(1) {
            if in_repo {
                break;
            }
            outer.extend(IgnoreFile::load(dir));
            in_repo = dir.join(".git").exists();
        }
        if !in_repo {
            outer.clear();
        }
        outer.reverse();
        IgnoreStack {
            outer,
            inner: Vec::new(),
        }
    }

    /// Should the walk yield (and, for a directory, enter) this entry?
    fn admit(&mut self, entry: &DirEntry) -> bool {
        let depth = entry.depth();
        // The walk is depth-first, so rules pushed at this depth or deeper belong to a directory
        // that is finished.
        while self.inner.last().is_some_and(|(d, _)| *d >= depth) {
            self.inner.pop();
        }
        let kind = if entry.file_type().is_dir() {
            Kind::Dir
        } else {
            Kind::File
        };
        // The root itself is never filtered: asking for `target/` explicitly means it.
        if depth > 0 {
            let skipped = kind == Kind::Dir && SKIP_DIRS.iter().any(|s| entry.file_name() == *s);
            if skipped || self.is_ignored(entry.path(), kind) {
                return false;
            }
        }
        if kind == Kind::Dir
            && let Some(file) = IgnoreFile::load(entry.path())
        {
            self.inner.push((depth, file));
        }
        true
    }

    fn is_ignored(&self, path: &Path, kind: Kind) -> bool {
        let inner = self.inner.iter().map(|(_, file)| file);
        // As in git, the deepest `.gitignore` with an opinion about the path decides.
        let mut nearest_first = self.outer.iter().chain(inner).rev();
        let verdict = nearest_first.find_map(|file| file.verdict(path, kind));
        verdict.unwrap_or(false)
    }
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
    fn load(dir: &Path) -> Option<IgnoreFile> {
        let text = fs::read_to_string(dir.join(".gitignore")).ok()?;
        IgnoreFile::parse(dir, &text)
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

/// Braces are alternatives in a glob but plain characters in `.gitignore`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    Glob,
    Gitignore,
}

/// Translate glob syntax into a regex fragment over `/`-separated paths.
fn translate(glob: &str, syntax: Syntax) -> Result<String, String> {
    let chars: Vec<char> = glob.chars().collect();
    let mut out = String::new();
    let mut open_braces = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let braces = syntax == Syntax::Glob;
        match c {
            '*' if chars.get(i + 1) == Some(&'*') => {
                let (regex, used) = double_star(&chars, i);
                out.push_str(regex);
                i += used;
                continue;
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            '[' => match class(&chars[i..]) {
                Some((regex, used)) => {
                    out.push_str(&regex);
                    i += used;
                    continue;
                }
                None => out.push_str("\\["),
            },
            '{' if braces => {
                open_braces += 1;
                out.push_str("(?:");
            }
            ',' if braces && open_braces > 0 => out.push('|'),
            '}' if braces && open_braces > 0 => {
                open_braces -= 1;
                out.push(')');
            }
            '\\' if i + 1 < chars.len() => {
                out.push_str(&regex::escape(&chars[i + 1].to_string()));
                i += 2;
                continue;
            }
            _ => out.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    if open_braces > 0 {
        return Err(format!("unclosed '{{' in {glob:?}"));
    }
    Ok(out)
}

/// `**` at `chars[at]`: any number of directories when it is a whole path component, otherwise
/// just a `*`. Returns the regex and how many characters it consumed.
fn double_star(chars: &[char], at: usize) -> (&'static str, usize) {
    let whole_component = at == 0 || chars[at - 1] == '/';
    match chars.get(at + 2) {
        Some('/') if whole_component => ("(?:.*/)?", 3),
        None if whole_component => (".*", 2),
        _ => ("[^/]*", 2),
    }
}

/// A `[...]` class starting at `chars[0]`: the regex class and the characters used, or `None`
/// when it never closes (then `[` is literal).
fn class(chars: &[char]) -> Option<(String, usize)> {
    let mut out = String::from("[");
    let mut i = 1;
    if matches!(chars.get(1), Some('!' | '^')) {
        out.push('^');
        i += 1;
    }
    let first = i;
    while let Some(&c) = chars.get(i) {
        // A `]` right after the opening is a literal member, as in shells.
        if c == ']' && i > first {
            out.push(']');
            return Some((out, i + 1));
        }
        // Characters that are special inside a regex class but plain inside a glob one.
        if matches!(c, '[' | ']' | '\\' | '&' | '~' | '^') {
            out.push('\\');
        }
        out.push(c);
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::TempDir;

    fn glob(pattern: &str, path: &str) -> bool {
        compile_glob(pattern).expect("valid glob").is_match(path)
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
        let found: Vec<String> = files(&dir.0).map(|p| relative(&dir.0, &p)).collect();
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
        let found: Vec<String> = files(&root).map(|p| relative(&root, &p)).collect();
        assert_eq!(found, ["a.rs"]);
    }
}
