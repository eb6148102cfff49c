//! Glob syntax as a regex: a `glob` or `grep` pattern (`*`, `**`, `?`, `[..]`, `{a,b}`) compiled
//! to match a whole relative path, and a `.gitignore` line's pattern translated for `walk.rs`.
//!
//! Pure functions over strings; nothing here reads a file or walks a tree.

use regex::Regex;

/// Compile a glob (`*`, `**`, `?`, `[..]`, `{a,b}`) into a regex that must match a whole
/// `/`-separated relative path.
pub(crate) fn compile_glob(pattern: &str) -> Result<Regex, String> {
    if let Some(too_long) = super::text::pattern_too_long("glob", pattern) {
        return Err(too_long);
    }
    let body = translate(pattern, Syntax::Glob)?;
    let shown = super::text::echo(pattern);
    Regex::new(&format!("^{body}$")).map_err(|e| {
        format!(
            "invalid glob {shown:?}: {}",
            super::text::echo(&e.to_string())
        )
    })
}

/// Braces are alternatives in a glob but plain characters in `.gitignore`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    Glob,
    Gitignore,
}

/// Translate glob syntax into a regex fragment over `/`-separated paths.
pub(crate) fn translate(glob: &str, syntax: Syntax) -> Result<String, String> {
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
        return Err(format!("unclosed '{{' in {:?}", super::text::echo(glob)));
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
