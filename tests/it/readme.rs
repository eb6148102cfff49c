//! The README's promises to a newcomer, and the links of every page. The README stays short and
//! in the order a first read needs (what corecoder is and its size, set-up, your own model, where
//! to start reading); the size it states is `src/`'s; its two set-up commands are one that runs
//! corecoder and the test command CI runs; every setting it names is one `--help` knows; every
//! example is in its table; and every relative link and repository path the Markdown names
//! points at something that exists.
//!
//! Reads files and runs the binary's `--help`; no corecoder code is called. The reference
//! tables the README links (flags, slash commands, the code map) are checked in `docs`, the
//! measured figures in `figures`.

use crate::docs::{non_blank_code_lines, read, root, source_files, table_after};
use regex::Regex;
use std::path::Path;

/// At most this many lines: a first read, with the reference a link away (issue 29).
const README_LINES: usize = 200;
/// How far a stated line count may drift from `src/` before the test fails; the file counts
/// must be exact (`CORECODER_REGEN_CODEMAP=1 cargo test --test it docs::` rewrites them all).
const TOLERANCE_PERCENT: usize = 10;

/// The README's size sentence: the folders it calls the core (`src/core/`, and any other named
/// beside it), then the core's files and lines, then all of `src/`'s.
pub(crate) const README_SIZE: &str = r"the core \(((?:`src/[a-z_/]+`(?:,\s+|\s+and\s+)?)+)\),[^;]*?\sis\s+(\d+)\s+files\s+and\s+([\d,]+)\s+lines;\s+the\s+whole\s+of\s+`src/`\s+is\s+(\d+)\s+files\s+and\s+([\d,]+)\s+lines";

/// The size the README states and the size `src/` has, each as [core files, core lines, files,
/// lines], lines being non-blank lines above the unit tests.
pub(crate) struct Size {
    pub(crate) said: [usize; 4],
    pub(crate) actual: [usize; 4],
}

pub(crate) fn readme_size(readme: &str) -> Size {
    let found = Regex::new(README_SIZE)
        .expect("a pattern")
        .captures(readme)
        .expect("the README states the size of the core and of src/");
    let folders: Vec<String> = (Regex::new(r"`(src/[a-z_/]+)`").expect("a pattern"))
        .captures_iter(&found[1])
        .map(|c| format!("{}/", c[1].trim_end_matches('/')))
        .collect();
    let files = source_files();
    let core: Vec<&String> = (files.iter())
        .filter(|file| {
            folders
                .iter()
                .any(|folder| file.starts_with(folder.as_str()))
        })
        .collect();
    let lines = |list: &[&String]| list.iter().map(|f| non_blank_code_lines(&read(f))).sum();
    let number = |n: usize| found[n].replace(',', "").parse().expect("a number");
    Size {
        said: [number(2), number(3), number(4), number(5)],
        actual: [
            core.len(),
            lines(&core),
            files.len(),
            lines(&files.iter().collect::<Vec<_>>()),
        ],
    }
}

/// `text` from `heading` to the next `## ` heading (or the end).
pub(crate) fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = (text.find(heading)).unwrap_or_else(|| panic!("no {heading:?}"));
    let end = (text[start + 1..].find("\n## ")).map_or(text.len(), |n| start + 1 + n);
    &text[start..end]
}

/// Short, and in the order of a first read: what it is and its size, set-up, your own model
/// with the lines a CoreCoder user looks for, where to start reading.
#[test]
fn the_readme_is_short_and_in_the_order_a_newcomer_reads() {
    let readme = read("README.md");
    let lines = readme.lines().count();
    assert!(lines <= README_LINES, "README.md is {lines} lines");
    let size = Regex::new(README_SIZE).expect("a pattern").find(&readme);
    let at = |heading: &str| {
        readme
            .find(heading)
            .unwrap_or_else(|| panic!("no {heading}"))
    };
    let order = [
        size.expect("the size sentence").start(),
        at("## Set up"),
        at("## Your own model"),
        at("## Where to start reading"),
    ];
    assert!(order.is_sorted(), "the README's order: {order:?}");
    let own = section(&readme, "## Your own model");
    for needed in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "CORECODER_MODEL",
        "--provider anthropic",
        "--provider responses",
    ] {
        assert!(own.contains(needed), "\"Your own model\" lacks {needed}");
    }
    let reading = section(&readme, "## Where to start reading");
    assert!(reading.contains("](docs/code-map.md)"), "{reading}");
}

/// The size up front is `src/`'s: the core's files and lines, and the whole's.
#[test]
fn the_readme_states_the_size_of_the_core_and_of_src() {
    let size = readme_size(&read("README.md"));
    let [files, lines, all_files, all_lines] = size.actual;
    let near = |said: usize, real: usize| said.abs_diff(real) * 100 <= real * TOLERANCE_PERCENT;
    let [s_files, s_lines, s_all_files, s_all_lines] = size.said;
    assert!(
        s_files == files && near(s_lines, lines) && s_all_files == all_files,
        "the README says the core is {s_files} files, {s_lines} lines, and src/ {s_all_files} \
         files; they are {files}, {lines} and {all_files}"
    );
    assert!(
        near(s_all_lines, all_lines),
        "the README says src/ is {s_all_lines} lines; it is {all_lines}"
    );
}

/// Set-up is exactly two commands to paste: one that runs corecoder (the offline demo without
/// a key) and the test command, which is the one CI runs.
#[test]
fn set_up_is_two_commands_and_ci_runs_the_test_one() {
    let readme = read("README.md");
    let set_up = section(&readme, "## Set up");
    let blocks: Vec<&str> = (set_up.split("```sh\n").skip(1))
        .map(|rest| rest.split("```").next().expect("a closed block").trim())
        .collect();
    assert_eq!(blocks.len(), 2, "the set-up commands: {blocks:?}");
    assert!(blocks.iter().all(|b| !b.contains('\n')), "{blocks:?}");
    assert!(blocks[0].starts_with("cargo run"), "{blocks:?}");
    assert!(set_up.contains("runs the offline demo"), "{set_up}");
    let test = blocks[1];
    assert!(test.starts_with("cargo test"), "{test}");
    let ci = read(".ci/run");
    let runs = (ci.lines().map(str::trim))
        .any(|line| line == test || line.starts_with(&format!("{test} ")));
    assert!(runs, ".ci/run does not run `{test}`:\n{ci}");
}

/// Every variable and flag of corecoder's that the README names is one `--help` names (cargo's
/// own flags, in the `cargo …` and `git …` commands, aside).
#[test]
fn every_setting_the_readme_names_is_one_help_knows() {
    let sandbox = crate::run::Sandbox::new("readme_settings");
    let help = crate::run::run_with(&["--help"], &[], &sandbox).stdout;
    let readme = read("README.md");
    let cargo = Regex::new(r"(?:cargo|git) [^`\n]*").expect("a pattern");
    let ours = cargo.replace_all(&readme, "");
    let names = Regex::new(r"\b(CORECODER|OPENAI|DEEPSEEK|ANTHROPIC)_[A-Z_]+\b|--[a-z][a-z-]+")
        .expect("a pattern");
    let unknown: Vec<&str> = (names.find_iter(&ours).map(|m| m.as_str()))
        .filter(|name| !help.contains(name))
        .collect();
    assert!(unknown.is_empty(), "not in --help: {unknown:?}");
    assert!(names.find_iter(&ours).count() >= 10, "the pattern is stale");
}

/// The examples table lists exactly the examples `examples/` holds.
#[test]
fn every_example_is_in_the_readme() {
    let mut examples: Vec<String> = (std::fs::read_dir(root().join("examples")))
        .expect("examples/")
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().to_string();
            name.strip_suffix(".rs").map(String::from)
        })
        .collect();
    examples.sort();
    let readme = read("README.md");
    let mut listed: Vec<String> = (table_after(&readme, "| example | shows |").iter())
        .map(|row| row[1].trim_matches('`').to_string())
        .collect();
    listed.sort();
    assert_eq!(listed, examples, "the README's examples table");
}

/// The Markdown pages whose links and paths are checked: the README, the top-level pages and
/// `docs/`.
fn pages() -> Vec<String> {
    let mut pages = Vec::new();
    for dir in ["", "docs/"] {
        for entry in std::fs::read_dir(root().join(dir))
            .expect("a folder")
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.ends_with(".md") {
                pages.push(format!("{dir}{name}"));
            }
        }
    }
    pages.sort();
    pages
}

/// A page's prose: code blocks left out, and inline code replaced by `code` (so a `](`
/// inside backticks is no link, while a link whose text is code still is one).
fn prose(text: &str) -> String {
    let mut in_fence = false;
    let mut lines = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence {
            lines.push_str(line);
            lines.push('\n');
        }
    }
    (lines.split('`').enumerate())
        .map(|(n, piece)| if n % 2 == 1 { "code" } else { piece })
        .collect()
}

/// The anchors of a page's headings, as GitHub makes them: lower case, punctuation dropped,
/// spaces as hyphens.
fn anchors(text: &str) -> Vec<String> {
    let mut in_fence = false;
    let mut anchors = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && line.starts_with('#') {
            let title = line.trim_start_matches('#').trim().to_lowercase();
            let slug: String = (title.chars())
                .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
                .map(|c| if c == ' ' { '-' } else { c })
                .collect();
            anchors.push(slug);
        }
    }
    anchors
}

/// Every relative link (`[text](path)`, `[text](path#anchor)`, `[text](#anchor)`) in the
/// README, the top-level pages and `docs/` names a file that exists, and an anchor one of
/// that page's headings makes.
#[test]
fn every_relative_link_resolves() {
    let link = Regex::new(r"\]\(([^)\s]+)\)").expect("a pattern");
    let mut problems = Vec::new();
    let mut seen = 0;
    for page in pages() {
        let text = read(&page);
        let folder = Path::new(&page).parent().expect("a folder").to_path_buf();
        for target in link.captures_iter(&prose(&text)).map(|c| c[1].to_string()) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            seen += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = match path.is_empty() {
                true => Path::new(&page).to_path_buf(),
                false => folder.join(path),
            };
            if !root().join(&file).exists() {
                problems.push(format!("{page}: {target} (no {})", file.display()));
            } else if !anchor.is_empty() {
                let linked = std::fs::read_to_string(root().join(&file)).unwrap_or_default();
                if !anchors(&linked).iter().any(|a| a == anchor) {
                    problems.push(format!("{page}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(
        seen >= 30,
        "only {seen} relative links: the pattern is stale"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every repository path the README and `docs/` name in backticks (`src/…`, `docs/…`,
/// `tests/…`, `examples/…`, `bench/…`, `.ci/…`, `fixtures/…`) exists.
#[test]
fn every_path_the_readme_and_docs_name_exists() {
    let path = Regex::new(r"`((?:src|docs|tests|examples|bench|\.ci|fixtures)/[A-Za-z0-9_./-]*)`")
        .expect("a pattern");
    let mut problems = Vec::new();
    let pages = (pages().into_iter()).filter(|p| p == "README.md" || p.starts_with("docs/"));
    for page in pages {
        for named in path.captures_iter(&read(&page)).map(|c| c[1].to_string()) {
            if !root().join(&named).exists() {
                problems.push(format!("{page}: {named}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "paths that do not exist:\n{}",
        problems.join("\n")
    );
}

/// Every figure the README states is one a test checks (issue 30): each number in its prose
/// (code and links left out) must be one a check below finds and verifies, so a new figure
/// comes with its check. The size sentence and the ignored tests are checked above and in
/// `figures`; `127.0.0.1` and the HTTP status `400` are names, not figures.
#[test]
fn every_figure_the_readme_states_is_checked() {
    let readme = prose(&read("README.md"));
    let manifest = read("Cargo.toml");
    let soak = read("tests/it/soak.rs");
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
    ];
    let value = |said: &str| -> usize {
        match words.iter().position(|w| said.eq_ignore_ascii_case(w)) {
            Some(n) => n,
            None => said.replace(',', "").parse().expect("a number"),
        }
    };
    let first = |pattern: &str, text: &str| -> String {
        let found = Regex::new(pattern).expect("a pattern").captures(text);
        found
            .unwrap_or_else(|| panic!("{pattern} not found"))
            .get(1)
            .expect("a group")
            .as_str()
            .to_string()
    };
    let code_lines = |file: &str| {
        let text = read(file);
        (text.lines())
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("//"))
            .count()
    };
    let team = first(r"over (\w+) workers", &read("examples/team.rs"));
    let steps = first(r"(\w+) steps", &read("examples/new_tool.rs"));
    let default_soak = value(&first(r"\(first\.\.first \+ (\d+)\)", &soak)) + 1;
    let ignored_soak = value(&first(r#"CORECODER_SOAK_SESSIONS", (\d+)\)"#, &soak));
    // The dialects `--provider` chooses from: chat completions, the default, and the others.
    let dialects = first(r"enum Dialect \{([^}]*)\}", &read("src/core/config.rs"));
    let providers = dialects.matches(',').count();
    let tools = Regex::new(r"\npub(?:\(crate\))? fn ")
        .expect("a pattern")
        .find_iter(&read("src/tools/schemas.rs"))
        .count();
    // (where the README says it, the figure's group, what it must be)
    let checks: Vec<(&str, usize)> = vec![
        (r"Rust (\d+\.\d+) or newer", 0),
        (r"loop, (\w+) tools", tools),
        (r"the ([\d,]+)-session soak", ignored_soak),
        (r"a (\d+)-session soak runs by default", default_soak),
        (
            r"`?code`? is the plain agent a fork keeps, in (\d+) lines",
            code_lines("examples/minimal.rs"),
        ),
        (
            r"the library in (\d+) lines",
            code_lines("examples/embed.rs"),
        ),
        (r"the (\d+)-step recipe", value(&steps)),
        (r"with (\w+) workers", value(&team)),
        (r"(\w+) other APIs, chosen with", providers - 1),
    ];
    let rust = first(r#"rust-version = "([\d.]+)""#, &manifest);
    let mut covered: Vec<(usize, usize)> = Vec::new();
    for (pattern, expected) in &checks {
        let found = Regex::new(pattern).expect("a pattern").captures(&readme);
        let found = found.unwrap_or_else(|| panic!("the README no longer says {pattern:?}"));
        let said = found.get(1).expect("a group");
        match *expected {
            0 => assert_eq!(said.as_str(), rust, "the README's Rust version"),
            n => assert_eq!(value(said.as_str()), n, "the README says {:?}", &found[0]),
        }
        covered.push((said.start(), said.end()));
    }
    // Checked by `the_readme_states_the_size_of_the_core_and_of_src` and
    // `figures::every_ignored_test_is_named_in_the_readme`.
    let size = r"is \d+ files and [\d,]+ lines;\s+the whole of code is \d+ files and [\d,]+ lines";
    for spans in [size, r"(?i)\b(\w+)\s+tests?\s+(?:are|is)\s+ignored"] {
        for found in Regex::new(spans).expect("a pattern").captures_iter(&readme) {
            covered.push((
                found.get(0).expect("a match").start(),
                found.get(0).expect("a match").end(),
            ));
        }
    }
    let figure =
        Regex::new(r"(?i)\b(\d[\d,.]*\d|\d|zero|two|three|four|five|six|seven|eight|nine)\b")
            .expect("a pattern");
    let names = ["127.0.0.1", "400"];
    for found in figure.find_iter(&readme) {
        let inside = covered
            .iter()
            .any(|(start, end)| *start <= found.start() && found.end() <= *end);
        assert!(
            inside || names.contains(&found.as_str()),
            "the README states {:?} ({:?}) and no test checks it: add its check here",
            found.as_str(),
            &readme[found.start().saturating_sub(40)..(found.end() + 20).min(readme.len())]
        );
    }
}
