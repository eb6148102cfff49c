//! Keeping the teaching material true: file headers, file sizes, the README's code map, the
//! functions the walkthrough cites, and the examples.
//!
//! Everything here reads files or runs the built examples; no corecoder code is called.
//! `CORECODER_REGEN_CODEMAP=1 cargo test --test it docs::` rewrites the code map's line counts
//! (and its list of files) in README.md instead of failing on them; the roles stay as written.

use crate::run::{self, Output};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Lines a file may have above its unit tests.
const CEILING: usize = 400;
/// How far a line count in the code map may drift from the file before the test fails.
const TOLERANCE_PERCENT: usize = 10;
const CODE_MAP_HEADING: &str = "## Code map";
const TABLE_HEAD: &str = "| file | lines | role |\n|---|---|---|\n";
/// The role a regenerated row gets for a new file; the test fails until a person writes one.
const NO_ROLE: &str = "(say what it is for)";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `src/`, as `src/…` paths, sorted.
fn source_files() -> Vec<String> {
    let mut files = Vec::new();
    let mut dirs = vec![root().join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/ is readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(root()).expect("under the root");
                files.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    files.sort();
    files
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(root().join(relative)).expect("readable")
}

/// Lines above `#[cfg(test)]` directly followed by `mod tests`; the whole file if it has none.
fn code_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let tests = (lines.windows(2))
        .position(|pair| pair[0].trim() == "#[cfg(test)]" && pair[1].starts_with("mod tests"));
    tests.unwrap_or(lines.len())
}

#[test]
fn every_source_file_opens_with_a_module_doc() {
    let bare: Vec<String> = (source_files().into_iter())
        .filter(|file| !read(file).starts_with("//!"))
        .collect();
    assert!(
        bare.is_empty(),
        "these files do not open with `//!`: {bare:?}"
    );
}

#[test]
fn no_source_file_exceeds_the_ceiling_above_its_tests() {
    let over: Vec<String> = (source_files().into_iter())
        .map(|file| (code_lines(&read(&file)), file))
        .filter(|(lines, _)| *lines > CEILING)
        .map(|(lines, file)| format!("{file}: {lines} > {CEILING}"))
        .collect();
    assert!(over.is_empty(), "{}", over.join("\n"));
}

/// One row of the code map: `| `src/x.rs` | 120 | role |`.
struct Row {
    file: String,
    lines: usize,
    role: String,
}

/// The code map's rows, and the byte range of the table in the README.
fn code_map(readme: &str) -> (Vec<Row>, std::ops::Range<usize>) {
    let section = readme
        .find(CODE_MAP_HEADING)
        .expect("README has a code map");
    let start = section
        + readme[section..]
            .find(TABLE_HEAD)
            .expect("the code map's table");
    let table_len: usize = (readme[start..].split_inclusive('\n'))
        .take_while(|line| line.starts_with('|'))
        .map(str::len)
        .sum();
    let rows = (readme[start..start + table_len].lines().skip(2))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
            Row {
                file: cells[0].trim_matches('`').to_string(),
                lines: cells.get(1).and_then(|n| n.parse().ok()).unwrap_or(0),
                role: cells[2..].join(" | "),
            }
        })
        .collect();
    (rows, start..start + table_len)
}

#[test]
fn the_readme_code_map_lists_every_source_file_with_its_size() {
    let readme = read("README.md");
    let (rows, range) = code_map(&readme);
    let files = source_files();
    if std::env::var_os("CORECODER_REGEN_CODEMAP").is_some() {
        let table = regenerate(&rows, &files);
        let updated = format!("{}{table}{}", &readme[..range.start], &readme[range.end..]);
        std::fs::write(root().join("README.md"), updated).expect("README.md is writable");
        return;
    }
    let mut problems = Vec::new();
    for row in &rows {
        if !files.contains(&row.file) {
            problems.push(format!("{} is listed but not in src/", row.file));
            continue;
        }
        let actual = code_lines(&read(&row.file));
        if actual.abs_diff(row.lines) * 100 > actual * TOLERANCE_PERCENT {
            problems.push(format!(
                "{}: the map says {}, it has {actual}",
                row.file, row.lines
            ));
        }
        if row.role.is_empty() || row.role == NO_ROLE {
            problems.push(format!("{}: no role written", row.file));
        }
    }
    for file in files
        .iter()
        .filter(|f| !rows.iter().any(|row| &row.file == *f))
    {
        problems.push(format!("{file} is in src/ but not in the code map"));
    }
    assert!(
        problems.is_empty(),
        "{}\n(CORECODER_REGEN_CODEMAP=1 cargo test --test it docs:: rewrites the counts)",
        problems.join("\n")
    );
}

/// The table with today's counts: listed files in their order, new ones at the end.
fn regenerate(rows: &[Row], files: &[String]) -> String {
    let kept = (rows.iter())
        .filter(|row| files.contains(&row.file))
        .map(|row| (row.file.clone(), row.role.clone()));
    let added = (files.iter())
        .filter(|file| !rows.iter().any(|row| &row.file == *file))
        .map(|file| (file.clone(), NO_ROLE.to_string()));
    let mut table = TABLE_HEAD.to_string();
    for (file, role) in kept.chain(added) {
        let lines = code_lines(&read(&file));
        table.push_str(&format!("| `{file}` | {lines} | {role} |\n"));
    }
    table
}

/// Function names the text cites: `` `fn name` `` and `` `Type::name` `` / `` `module::name` ``
/// spans outside code blocks (`std::` paths aside), and the last part of every
/// `b path::to::name` breakpoint line inside them.
fn cited_functions(text: &str) -> Vec<String> {
    let (mut names, mut prose, mut in_fence) = (Vec::new(), String::new(), false);
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence {
            prose.push_str(line);
            prose.push('\n');
        } else if let Some(path) = line.trim().strip_prefix("b ")
            && let Some((_, last)) = path.trim().rsplit_once("::")
        {
            names.push(last.to_string());
        }
    }
    // Odd pieces are inside backticks.
    for span in prose.split('`').skip(1).step_by(2) {
        if let Some(name) = span.strip_prefix("fn ") {
            names.push(name.to_string());
        } else if let Some((_, last)) = span.rsplit_once("::")
            && is_path(span)
            && !span.starts_with("std::")
            && last.starts_with(|c: char| c.is_ascii_lowercase())
        {
            names.push(last.to_string());
        }
    }
    names
}

fn is_path(span: &str) -> bool {
    span.split("::")
        .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

#[test]
fn every_function_the_walkthrough_cites_exists() {
    let sources: String = source_files().iter().map(|f| read(f)).collect();
    for doc in ["docs/walkthrough.md", "ARCHITECTURE.md"] {
        let cited = cited_functions(&read(doc));
        assert!(
            cited.len() >= 10,
            "{doc} cites too few functions: {cited:?}"
        );
        let missing: Vec<&String> = (cited.iter())
            .filter(|name| !sources.contains(&format!("fn {name}(")))
            .filter(|name| !sources.contains(&format!("fn {name}<")))
            .collect();
        assert!(
            missing.is_empty(),
            "{doc} cites functions not in src/: {missing:?}"
        );
    }
}

/// A built example: `cargo test` builds them next to the binary, in `target/debug/examples`.
fn example(name: &str) -> PathBuf {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_corecoder"))
        .parent()
        .expect("the binary's directory");
    let path = bin_dir.join("examples").join(name);
    assert!(
        path.exists(),
        "{} is missing: a plain `cargo test` builds the examples; \
         with `--test it` alone run `cargo build --examples` first",
        path.display()
    );
    path
}

fn run_example(name: &str) -> Output {
    let child = Command::new(example(name))
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the example");
    let output = run::finish(child);
    assert_eq!(output.code, 0, "{name} failed: {output:?}");
    output
}

#[test]
fn example_embed_answers_offline() {
    let output = run_example("embed");
    // The tool really read the manifest: its first line is what the example prints of it.
    let first_line = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let first_line = first_line.lines().next().expect("a first line");
    let shown = format!("> read_file(Cargo.toml)\n  1\t{first_line}\n");
    assert!(
        output.stdout.contains(&shown),
        "{shown:?} not in {output:?}"
    );
    assert!(
        output
            .stdout
            .contains("Answer(\"The package is called corecoder.\")")
    );
}

#[test]
fn example_new_tool_is_called_through_mcp() {
    let output = run_example("new_tool");
    assert!(
        output.stdout.contains("> mcp__local__word_count("),
        "{output:?}"
    );
    assert!(output.stdout.contains("\n  9 words\n"), "{output:?}");
}

#[test]
fn example_plan_and_hooks_refuses_then_vetoes_then_edits() {
    let output = run_example("plan_and_hooks");
    let out = &output.stdout;
    assert!(
        out.contains("Refused: plan mode is on, so edit_file"),
        "{out}"
    );
    assert!(
        out.contains("Blocked by a hook: rm -rf is not allowed here"),
        "{out}"
    );
    assert!(
        out.contains("[hook] notes.txt changed: re-read it"),
        "{out}"
    );
}

#[test]
fn example_team_reports_each_worker_under_its_name() {
    let output = run_example("team");
    let out = &output.stdout;
    let reports = [
        "## lexer\nlexer.rs: 1 TODOs",
        "## parser\nparser.rs: 2 TODOs",
    ];
    assert!(reports.iter().all(|r| out.contains(r)), "{out}");
    assert!(out.contains("## printer\nprinter.rs: 0 TODOs"), "{out}");
}

/// The rows of the README table that follows `heading`'s first `| … |` header line: each row's
/// cells, until the table ends.
fn table_after(readme: &str, heading: &str) -> Vec<Vec<String>> {
    let start = readme
        .find(heading)
        .unwrap_or_else(|| panic!("{heading} in the README"));
    (readme[start..].lines())
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .map(|line| {
            line.split('|')
                .map(|cell| cell.trim().to_string())
                .collect()
        })
        .collect()
}

/// Every match of `pattern` in `text`, once each, sorted.
fn names_in(text: &str, pattern: &str) -> Vec<String> {
    let regex = regex::Regex::new(pattern).expect("a pattern");
    let mut names: Vec<String> = regex
        .find_iter(text)
        .map(|m| m.as_str().to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The configuration table lists exactly the flags and variables `--help` names.
#[test]
fn the_configuration_table_matches_help() {
    let sandbox = crate::run::Sandbox::new("docs_help_table");
    let help = crate::run::run_with(&["--help"], &[], &sandbox).stdout;
    let options: String = (help.lines())
        .filter(|line| line.trim_start().starts_with('-'))
        .map(|line| line.split("  ").find(|part| !part.is_empty()).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let readme = read("README.md");
    let rows = table_after(&readme, "## Configuration");
    let column = |n: usize| {
        (rows.iter())
            .map(|row| row[n].clone())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let flag = r"--[a-z][a-z-]+";
    let variable = r"\b(CORECODER|OPENAI|DEEPSEEK)_[A-Z_]+\b";
    assert_eq!(
        names_in(&column(2), flag),
        names_in(&options, flag),
        "flags"
    );
    assert_eq!(
        names_in(&column(1), variable),
        names_in(&help, variable),
        "variables"
    );
}

/// The command table lists exactly the commands `/help` prints (the REPL's `HELP`).
#[test]
fn the_command_table_matches_slash_help() {
    let repl = read("src/app/repl.rs");
    let start = repl.find("const HELP: &str").expect("the REPL's HELP");
    let help = &repl[start..start + repl[start..].find("\";").expect("its end")];
    let readme = read("README.md");
    let rows = table_after(&readme, "| command | what it does |");
    let first: Vec<String> = rows.iter().map(|row| row[1].clone()).collect();
    let command = r"/[a-z]+";
    assert_eq!(
        names_in(&first.join(" "), command),
        names_in(help, command),
        "commands"
    );
}

/// `.ci/run` says what it needs (npm too) and installs the MCP server where the test looks for
/// it, under `CARGO_TARGET_DIR` when that is set.
#[test]
fn the_ci_script_tells_the_truth_about_what_it_needs() {
    let ci = read(".ci/run");
    let header: String = ci.lines().take_while(|l| l.starts_with('#')).collect();
    assert!(header.contains("npm"), "the header names npm:\n{header}");
    assert!(
        ci.contains("\"${CARGO_TARGET_DIR:-target}/tmp/npm-mcp\""),
        "{ci}"
    );
    let test = read("tests/it/mcp.rs");
    assert!(
        test.contains("env!(\"CARGO_TARGET_TMPDIR\")).join(\"npm-mcp\")"),
        "where the test looks"
    );
}

/// Set-up names the Rust version `Cargo.toml` requires, Node/npm for the tests, and the
/// install step the Usage lines rely on.
#[test]
fn set_up_names_the_prerequisites_and_the_install_step() {
    let readme = read("README.md");
    let set_up =
        &readme[readme.find("## Set up").expect("Set up")..readme.find("## Usage").expect("Usage")];
    let cargo = read("Cargo.toml");
    let version = (cargo.lines())
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("rust-version in Cargo.toml");
    assert!(
        set_up.contains(&format!("Rust {version} or newer")),
        "{set_up}"
    );
    assert!(set_up.contains("Node.js with npm"), "{set_up}");
    assert!(
        readme.contains("`cargo install --path .`"),
        "the install step"
    );
}

/// The module a source file is (`src/extras/mcp.rs` is `extras::mcp`, a `mod.rs` its folder).
fn module_of(file: &str) -> String {
    let path = file.trim_start_matches("src/").trim_end_matches(".rs");
    path.trim_end_matches("/mod").replace('/', "::")
}

/// The modules of `src/` that `file` names (`crate::a::b`, or `super::b` beside it).
fn imports_of(file: &str, modules: &[String]) -> Vec<String> {
    let text = read(file);
    let module = module_of(file);
    let parent = module.rsplit_once("::").map_or("", |(parent, _)| parent);
    let beside = text.replace("super::", &format!("crate::{parent}::"));
    (modules.iter())
        .filter(|other| **other != module)
        .filter(|other| {
            let named = format!("crate::{other}");
            beside.match_indices(&named).any(|(at, _)| {
                let rest = &beside[at + named.len()..];
                !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_')
            })
        })
        .cloned()
        .collect()
}

/// What the tools share stands on its own: nothing in `tools/support/` imports the core, the
/// extras or the binary's faces; and in `tools/support/` and `extras/` no two files import
/// each other (the import circles this layout broke: danger_match <-> danger_rules,
/// mcp <-> mcp_wire).
#[test]
fn tools_support_stands_alone_and_its_imports_run_one_way() {
    let files = source_files();
    let modules: Vec<String> = files.iter().map(|f| module_of(f)).collect();
    let outer = ["crate::core", "crate::extras", "crate::app"];
    let mut problems = Vec::new();
    let layered =
        |file: &&String| file.starts_with("src/tools/support/") || file.starts_with("src/extras/");
    for file in files.iter().filter(layered) {
        let text = read(file);
        if file.starts_with("src/tools/support/") {
            let found = outer.iter().filter(|outer| text.contains(*outer));
            problems.extend(found.map(|outer| format!("{file} names {outer}")));
        }
        let module = module_of(file);
        for other in imports_of(file, &modules) {
            let back = files.iter().find(|f| module_of(f) == other);
            if let Some(back) = back.filter(layered)
                && module < other
                && imports_of(back, &modules).contains(&module)
            {
                problems.push(format!("{module} and {other} import each other"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
