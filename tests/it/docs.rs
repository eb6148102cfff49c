//! Keeping the teaching material true: file headers, file sizes, the code map
//! (`docs/code-map.md`), the size the README states, its set-up commands and settings, the
//! reference tables against `--help` and `/help`, every relative link and path the Markdown
//! names, the functions the walkthrough cites, and the examples.
//!
//! Everything here reads files, runs the built binary and examples, or builds a fork of the
//! crate in a copy (`a_fork_without_extras_builds_the_minimal_example`); no corecoder code is
//! called.
//! `CORECODER_REGEN_CODEMAP=1 cargo test --test it docs::` rewrites the code map's line counts
//! (and its list of files: a new folder gets a section of its own), the core's size it states,
//! and the size the README states, instead of failing on them; the roles stay as written.

use crate::readme::{README_SIZE, readme_size, section};
use crate::run::{self, Output};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Lines a file may have above its unit tests.
const CEILING: usize = 400;
/// How far a line count in the code map may drift from the file before the test fails.
const TOLERANCE_PERCENT: usize = 10;
/// Every file of `src/` with its size and role, folder by folder; the README links it.
const CODE_MAP: &str = "docs/code-map.md";
/// The table reference of the flags and variables, the slash commands and the exit codes.
const REFERENCE: &str = "docs/reference.md";
const TABLE_HEAD: &str = "| file | lines | role |\n|---|---|---|\n";
/// The role a regenerated row gets for a new file; the test fails until a person writes one.
const NO_ROLE: &str = "(say what it is for)";

pub(crate) fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `src/`, as `src/…` paths, sorted.
pub(crate) fn source_files() -> Vec<String> {
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

pub(crate) fn read(relative: &str) -> String {
    std::fs::read_to_string(root().join(relative)).expect("readable")
}

/// Lines above `#[cfg(test)]` directly followed by `mod tests`; the whole file if it has none.
pub(crate) fn code_lines(text: &str) -> usize {
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

/// One table of the code map (one per folder): its rows and its byte range in the page.
struct Table {
    rows: Vec<Row>,
    range: std::ops::Range<usize>,
}

/// The code map's tables: every `| file | lines | role |` table of the page, in order.
fn code_map(readme: &str) -> Vec<Table> {
    let end = readme.len();
    let mut tables = Vec::new();
    let mut at = 0;
    while let Some(found) = readme[at..end].find(TABLE_HEAD) {
        let start = at + found;
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
        tables.push(Table {
            rows,
            range: start..start + table_len,
        });
        at = start + table_len;
    }
    assert!(!tables.is_empty(), "the code map's tables");
    tables
}

#[test]
fn the_code_map_lists_every_source_file_with_its_size() {
    let readme = read(CODE_MAP);
    let tables = code_map(&readme);
    let files = source_files();
    if std::env::var_os("CORECODER_REGEN_CODEMAP").is_some() {
        let mut updated = readme.clone();
        // From the last table back, so the earlier ranges stay where they are.
        for (n, table) in tables.iter().enumerate().rev() {
            let text = regenerate(&tables, n, &files);
            updated.replace_range(table.range.clone(), &text);
        }
        updated.push_str(&new_sections(&tables, &files));
        let core = core_files();
        let core_lines = core.iter().map(|f| non_blank_code_lines(&read(f))).sum();
        let said = restate(&updated, CORE_SAID, &[core.len(), core_lines]);
        std::fs::write(root().join(CODE_MAP), said).expect("the code map is writable");
        let readme = read("README.md");
        let size = readme_size(&readme);
        let said = restate(&readme, README_SIZE, &size.actual);
        std::fs::write(root().join("README.md"), said).expect("README.md is writable");
        return;
    }
    let rows: Vec<&Row> = tables.iter().flat_map(|t| &t.rows).collect();
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

/// The folder a file is in: `src/core/agent.rs` → `src/core`.
fn folder(file: &str) -> &str {
    file.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// The table a file not yet in the map belongs to: the one listing a file of its folder, else
/// the one listing its nearest enclosing folder below `src/`; `None` for a folder the map has
/// never seen (a new `src/x/`), which gets a section of its own.
fn home_table(tables: &[Table], file: &str) -> Option<usize> {
    let here = folder(file);
    let same = |t: &Table| t.rows.iter().any(|r| folder(&r.file) == here);
    if let Some(n) = tables.iter().position(same) {
        return Some(n);
    }
    let enclosing =
        |r: &Row| folder(&r.file) != "src" && here.starts_with(&format!("{}/", folder(&r.file)));
    (tables.iter().enumerate())
        .flat_map(|(n, t)| {
            t.rows
                .iter()
                .filter(|r| enclosing(r))
                .map(move |r| (folder(&r.file).len(), n))
        })
        .max()
        .map(|(_, n)| n)
}

/// One code-map row with today's count.
fn row_text(file: &str, role: &str) -> String {
    format!("| `{file}` | {} | {role} |\n", code_lines(&read(file)))
}

/// Table `n` with today's counts: its listed files in their order, then the new files that
/// belong to it (`home_table`).
fn regenerate(tables: &[Table], n: usize, files: &[String]) -> String {
    let listed = |file: &String| {
        tables
            .iter()
            .any(|t| t.rows.iter().any(|r| &r.file == file))
    };
    let kept = (tables[n].rows.iter())
        .filter(|row| files.contains(&row.file))
        .map(|row| row_text(&row.file, &row.role));
    let added = (files.iter())
        .filter(|file| !listed(file) && home_table(tables, file) == Some(n))
        .map(|file| row_text(file, NO_ROLE));
    let mut table = TABLE_HEAD.to_string();
    table.extend(kept.chain(added));
    table
}

/// A section for each folder of `src/` the map has never seen, with its files, to append.
fn new_sections(tables: &[Table], files: &[String]) -> String {
    let top = |file: &str| file.split('/').take(2).collect::<Vec<_>>().join("/");
    let mut homeless: Vec<&String> = (files.iter())
        .filter(|file| home_table(tables, file).is_none())
        .collect();
    homeless.sort_by_key(|file| top(file));
    let mut text = String::new();
    for (n, file) in homeless.iter().enumerate() {
        if n == 0 || top(homeless[n - 1]) != top(file) {
            text.push_str(&format!(
                "\n## `{}/`\n\n{NO_ROLE}\n\n{TABLE_HEAD}",
                top(file)
            ));
        }
        text.push_str(&row_text(file, NO_ROLE));
    }
    text
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
    for doc in ["docs/walkthrough.md", "ARCHITECTURE.md", "DESIGN.md"] {
        let cited = cited_functions(&read(doc));
        assert!(
            cited.len() >= 10,
            "{doc} cites too few functions: {cited:?}"
        );
        let missing = not_defined(&cited, &sources);
        assert!(
            missing.is_empty(),
            "{doc} cites functions not in src/: {missing:?}"
        );
    }
}

/// SECURITY.md's promises are its tests: every test (and function) it names is there, in
/// `src/` or `tests/it/`, so a renamed or deleted test cannot leave a promise unbacked.
#[test]
fn every_test_security_md_names_exists() {
    let mut sources: String = source_files().iter().map(|f| read(f)).collect();
    for entry in std::fs::read_dir(root().join("tests/it")).expect("tests/it") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            sources.push_str(&std::fs::read_to_string(&path).expect("a test file"));
        }
    }
    let cited = cited_functions(&read("SECURITY.md"));
    assert!(
        cited.len() >= 100,
        "SECURITY.md cites too few tests: {cited:?}"
    );
    let missing = not_defined(&cited, &sources);
    assert!(
        missing.is_empty(),
        "SECURITY.md names tests or functions that are not there: {missing:?}"
    );
}

/// The names no `fn name(` or `fn name<` in `sources` defines.
fn not_defined<'a>(names: &'a [String], sources: &str) -> Vec<&'a String> {
    (names.iter())
        .filter(|name| !sources.contains(&format!("fn {name}(")))
        .filter(|name| !sources.contains(&format!("fn {name}<")))
        .collect()
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

/// The plain agent a fork keeps (`examples/minimal.rs`, nothing turned on) reads a file, is
/// refused a `git clean -fdx` under `--yes`, moves with `cd` and writes a todo list in one reply; the
/// next request tells the model where it is and what the list says (the notes are the core's),
/// and the answer is all of stdout.
#[test]
fn example_minimal_tells_the_model_the_new_directory_and_the_list() {
    minimal_turn(&example("minimal"), "docs_minimal_example");
}

/// `minimal -p … --yes` against the scripted loopback server, through one reply that calls
/// read_file, bash `git clean -fdx` (refused: destructive) and `cd sub`, and todo_write; the
/// next request must say where and what.
fn minimal_turn(binary: &Path, name: &str) {
    use crate::server::{Reply, Server};
    let sandbox = crate::run::Sandbox::new(name);
    sandbox.write("notes.txt", "the plan\n");
    std::fs::create_dir_all(sandbox.path("sub")).expect("a directory");
    let todos =
        serde_json::json!({"tasks": [{"content": "write the tests", "status": "in_progress"}]});
    let calls = [
        (
            "call_read",
            "read_file",
            serde_json::json!({"file_path": "notes.txt"}),
        ),
        (
            "call_clean",
            "bash",
            serde_json::json!({"command": "git clean -fdx"}),
        ),
        ("call_env", "bash", serde_json::json!({"command": "env"})),
        ("call_cd", "bash", serde_json::json!({"command": "cd sub"})),
        ("call_todo", "todo_write", todos),
    ];
    let server = Server::start(vec![
        Reply::Sse(crate::sse::tool_calls(&calls)),
        Reply::Sse(crate::sse::text("moved and planned")),
    ]);
    let child = Command::new(binary)
        .args(["-p", "go to sub and plan", "--yes"])
        .current_dir(&sandbox.dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("CORECODER_BASE_URL", server.url())
        .env("CORECODER_API_KEY", "sk-test")
        .env("CORECODER_MODEL", "test-model")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the example");
    let output = run::finish(child);
    assert_eq!(output.code, 0, "{output:?}");
    assert_eq!(output.stdout, "moved and planned\n", "{output:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "two requests");
    let results = requests[1].tool_results();
    assert!(
        results[0].1.contains("the plan"),
        "read_file ran: {results:?}"
    );
    // `--yes` runs bash, but not a destructive command no one opted in to by name.
    assert!(results[1].1.starts_with("Refused"), "{results:?}");
    // The key the agent was started with never reaches bash, in a fork either.
    assert!(results[2].1.contains("PATH="), "env ran: {results:?}");
    assert!(
        !results[2].1.contains("sk-test"),
        "the key reached bash: {results:?}"
    );
    let last = &results.last().expect("five results").1;
    let sub = sandbox.dir.join("sub");
    let moved = format!("[session state]\nWorking directory: {}", sub.display());
    assert!(last.contains(&moved), "the new directory is told: {last}");
    assert!(
        last.contains("Current todo list:") && last.contains("write the tests"),
        "the list is told: {last}"
    );
}

/// The fork is a fact: in a copy of the crate, every file under `src/extras/` but `null.rs`
/// and all of `src/app/` deleted, and `#[path = "extras/null.rs"]` put above `pub mod extras;`
/// in `src/lib.rs` with the `pub mod app;` line dropped, `cargo build --offline --example
/// minimal` builds; the forked agent then passes the same turn as the whole one. Its own
/// target directory under the tests' tmp keeps the dependencies built between runs (the first
/// run builds them all, which takes minutes on a busy machine). The copy's files are dated now
/// (`tar -m`): a copied date, cut to the second, could be older than the last build's.
#[test]
fn a_fork_without_extras_builds_the_minimal_example() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let fork = tmp.join("fork");
    let _ = std::fs::remove_dir_all(&fork);
    std::fs::create_dir_all(&fork).expect("the fork's directory");
    let copy = format!(
        "tar -c --exclude=./target --exclude=./.git --exclude=./fuzz . | tar -x -m -C '{}'",
        fork.display()
    );
    let copied = Command::new("sh")
        .args(["-c", &copy])
        .current_dir(root())
        .status();
    assert!(copied.expect("tar").success(), "the copy");
    for entry in walk(&fork.join("src/extras")) {
        if entry.file_name().is_some_and(|name| name != "null.rs") {
            std::fs::remove_file(&entry).expect("delete an extra");
        }
    }
    std::fs::remove_dir_all(fork.join("src/app")).expect("delete app/");
    let lib = read("src/lib.rs");
    assert!(
        lib.contains("\npub mod extras;\n") && lib.contains("\npub mod app;\n"),
        "{lib}"
    );
    let forked = (lib.replace(
        "\npub mod extras;\n",
        "\n#[path = \"extras/null.rs\"]\npub mod extras;\n",
    ))
    .replace("\npub mod app;\n", "\n");
    std::fs::write(fork.join("src/lib.rs"), forked).expect("the one change");
    let target = tmp.join("fork-target");
    let built = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--example", "minimal"])
        .current_dir(&fork)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo");
    let stderr = String::from_utf8_lossy(&built.stderr);
    assert!(built.status.success(), "the fork does not build:\n{stderr}");
    minimal_turn(
        &target.join("debug/examples/minimal"),
        "docs_forked_minimal",
    );
}

/// Every file under `dir`, however deep.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a directory").flatten() {
        match entry.path() {
            path if path.is_dir() => files.extend(walk(&path)),
            path => files.push(path),
        }
    }
    files
}

/// The rows of the Markdown table that follows `heading`'s first `| … |` header line: each row's
/// cells, until the table ends.
pub(crate) fn table_after(readme: &str, heading: &str) -> Vec<Vec<String>> {
    let start = readme
        .find(heading)
        .unwrap_or_else(|| panic!("{heading} in the page"));
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
pub(crate) fn names_in(text: &str, pattern: &str) -> Vec<String> {
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
    let readme = read(REFERENCE);
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
    let repl = read("src/app/repl_commands.rs");
    let start = repl.find("const HELP: &str").expect("the REPL's HELP");
    let help = &repl[start..start + repl[start..].find("\";").expect("its end")];
    let readme = read(REFERENCE);
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
    let set_up = section(&readme, "## Set up");
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

// ---- The layers: what each folder may import, the core's budget, the one circle. ----

/// The core and the client: everything a plain chat-completions agent needs to finish a task
/// with nothing turned on, read in one sitting: at most 2,800 non-blank lines above the tests
/// and no file past 300 (issue 29). The border is drawn by what a plain agent needs: a feature
/// that needs more lines here pays for them here, it does not move needed code out.
const CORE_LINES: usize = 2800;
/// Lines a file may have above its tests unless its `//!` header says why it needs more.
const FILE_LINES: usize = 300;

/// A source file's module path: `src/core/agent.rs` is `core::agent`, `src/core/mod.rs` is
/// `core`, `src/lib.rs` the crate root.
fn module_of(file: &str) -> Vec<String> {
    let inner = file.trim_start_matches("src/").trim_end_matches(".rs");
    let mut parts: Vec<String> = inner.split('/').map(String::from).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The file a module path names: the longest prefix of `path` that is a file of `files`.
fn file_of(path: &[String], files: &[String]) -> Option<String> {
    (1..=path.len()).rev().find_map(|n| {
        let stem = format!("src/{}", path[..n].join("/"));
        [format!("{stem}.rs"), format!("{stem}/mod.rs")]
            .into_iter()
            .find(|candidate| files.contains(candidate))
    })
}

/// Every crate path a file names above its tests, absolute: `use` trees with their braces
/// expanded, `super::`/`self::` resolved, and inline `crate::a::b` paths in code.
fn crate_paths(file: &str, text: &str) -> Vec<Vec<String>> {
    let here = module_of(file);
    let code: String = (text.lines().take(code_lines(text)))
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| format!("{line}\n"))
        .collect();
    let mut paths = Vec::new();
    for statement in code.split(';') {
        let statement = statement.trim();
        let tree = statement.strip_prefix("pub ").unwrap_or(statement);
        let tree = tree.strip_prefix("pub(crate) ").unwrap_or(tree);
        if let Some(tree) = tree.strip_prefix("use ") {
            let compact: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
            expand_use(&compact.replace(' ', "\u{0}"), &mut Vec::new(), &mut paths);
        }
    }
    let inline =
        regex::Regex::new(r"\b[a-z_][a-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)+").expect("a pattern");
    for found in inline.find_iter(&code) {
        paths.push(found.as_str().split("::").map(String::from).collect());
    }
    // A path may also start at a module this file declares (`mod bash;` … `bash::run`).
    let declared = regex::Regex::new(r"(?m)^\s*(?:pub )?mod ([a-z_0-9]+);").expect("a pattern");
    let children: Vec<String> = (declared.captures_iter(&code))
        .map(|c| c[1].to_string())
        .collect();
    (paths.into_iter())
        .filter_map(|path| match children.contains(&path[0]) {
            true => Some([here.clone(), path].concat()),
            false => absolute(&here, path),
        })
        .collect()
}

/// Push every leaf of a `use` tree (spaces as `\0`, to drop `as` renames) onto `out`.
fn expand_use(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim_matches('\u{0}');
    let Some(open) = tree.find('{') else {
        let name = tree.split('\u{0}').next().unwrap_or("");
        let mut path = prefix.clone();
        path.extend(
            name.split("::")
                .filter(|p| !p.is_empty() && *p != "self")
                .map(String::from),
        );
        out.push(path);
        return;
    };
    let head: Vec<String> = (tree[..open].split("::"))
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut depth, mut start) = (0, 0);
    let mut items = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    let before = prefix.len();
    prefix.extend(head);
    for item in items
        .into_iter()
        .filter(|item| !item.trim_matches('\u{0}').is_empty())
    {
        expand_use(item, prefix, out);
    }
    prefix.truncate(before);
}

/// `path` from the crate root, if it is one of ours (`crate::`, `super::`, `self::`).
fn absolute(here: &[String], path: Vec<String>) -> Option<Vec<String>> {
    let mut at: Vec<String> = here.to_vec();
    let mut rest = path.into_iter().peekable();
    match rest.peek().map(String::as_str) {
        Some("crate") => at.clear(),
        Some("super") => {}
        Some("self") => {}
        _ => return None,
    }
    while let Some(part) = rest.peek() {
        match part.as_str() {
            "crate" => {}
            "self" => {}
            "super" => {
                at.pop();
            }
            _ => break,
        }
        rest.next();
    }
    at.extend(rest);
    Some(at)
}

/// Which files each source file imports (itself left out), by file.
fn import_graph() -> Vec<(String, Vec<String>)> {
    let files: Vec<String> = (source_files().into_iter())
        .filter(|f| f != "src/main.rs")
        .collect();
    (files.iter())
        .map(|file| {
            let mut targets: Vec<String> = (crate_paths(file, &read(file)).iter())
                .filter_map(|path| file_of(path, &files))
                .filter(|target| target != file)
                .collect();
            targets.sort();
            targets.dedup();
            (file.clone(), targets)
        })
        .collect()
}

/// The circles of the import graph: its strongly connected parts of more than one file.
fn import_circles(graph: &[(String, Vec<String>)]) -> Vec<Vec<String>> {
    let reaches = |from: &str| {
        let mut seen = vec![from.to_string()];
        let mut next = vec![from.to_string()];
        while let Some(file) = next.pop() {
            let targets = graph
                .iter()
                .find(|(f, _)| *f == file)
                .map(|(_, t)| t.clone());
            for target in targets.unwrap_or_default() {
                if !seen.contains(&target) {
                    seen.push(target.clone());
                    next.push(target);
                }
            }
        }
        seen
    };
    let reach: Vec<(String, Vec<String>)> =
        graph.iter().map(|(f, _)| (f.clone(), reaches(f))).collect();
    let mut circles: Vec<Vec<String>> = Vec::new();
    for (file, reached) in &reach {
        let mut circle: Vec<String> = (reached.iter())
            .filter(|other| reach.iter().any(|(o, r)| o == *other && r.contains(file)))
            .cloned()
            .collect();
        circle.sort();
        if circle.len() > 1 && !circles.contains(&circle) {
            circles.push(circle);
        }
    }
    circles
}

/// The one circle allowed is the sub-agent's: the `agent` tool runs a whole loop, which
/// dispatches tools. `cargo test --test it docs::import_circles -- --nocapture` prints them.
#[test]
fn import_circles_are_only_the_sub_agent_loop() {
    let mut graph = import_graph();
    for circle in import_circles(&graph) {
        println!("circle of {}: {}", circle.len(), circle.join(", "));
    }
    // Without the one import that makes a sub-agent (the `agent` tool's use of the loop), no
    // circle may be left.
    for (file, targets) in &mut graph {
        if file == "src/tools/agent.rs" {
            targets.retain(|target| target != "src/core/agent.rs");
        }
    }
    let circles = import_circles(&graph);
    assert!(
        circles.is_empty(),
        "import circles besides the sub-agent loop: {circles:?}"
    );
}

/// What each layer may import: the core nothing of the app and of the extras only their seam
/// (`extras/mod.rs`); the extras never the loop; the tools' shared helpers neither.
#[test]
fn each_layer_imports_only_what_it_may() {
    let mut problems = Vec::new();
    for (file, targets) in import_graph() {
        for target in targets {
            let layer_of = |f: &str| f.split('/').nth(1).unwrap_or("").to_string();
            let (from, to) = (layer_of(&file), layer_of(&target));
            let support = |f: &str| f.starts_with("src/tools/support/");
            let refused = match from.as_str() {
                "core" => to == "app" || (to == "extras" && target != "src/extras/mod.rs"),
                // One streamed request knows nothing of the loop, the batch or the tools.
                "client" => {
                    (["app", "tools"].contains(&to.as_str()) && !support(&target))
                        || (to == "extras" && target != "src/extras/mod.rs")
                        || ["src/core/agent.rs", "src/core/batch.rs"].contains(&target.as_str())
                }
                "extras" => {
                    to == "app"
                        || ["src/core/agent.rs", "src/core/batch.rs"].contains(&target.as_str())
                }
                "tools" if support(&file) => to != "tools" || !support(&target),
                "tools" => to == "app",
                _ => false,
            };
            if refused {
                problems.push(format!("{file} imports {target}"));
            }
        }
    }
    let seam = read("src/extras/mod.rs");
    if seam
        .lines()
        .any(|line| line.trim_start().starts_with("pub use"))
    {
        problems.push("src/extras/mod.rs re-exports a feature's types: the seam is Extras".into());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Non-blank lines above a file's unit tests.
pub(crate) fn non_blank_code_lines(text: &str) -> usize {
    (text.lines().take(code_lines(text)))
        .filter(|line| !line.trim().is_empty())
        .count()
}

/// The files of `src/core/` and `src/client/`: one turn.
fn core_files() -> Vec<String> {
    (source_files().into_iter())
        .filter(|f| f.starts_with("src/core/") || f.starts_with("src/client/"))
        .collect()
}

/// The code map's sentence on the core: how many files, about how many non-blank lines.
const CORE_SAID: &str = r"read these (\d+) files, about ([\d,]+)\s+lines";

/// `n` with a comma between thousands, as the prose writes it: 19,855.
pub(crate) fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `text` with the last `numbers.len()` groups of `pattern`'s first match rewritten as
/// `numbers`, in order: what `CORECODER_REGEN_CODEMAP` writes.
pub(crate) fn restate(text: &str, pattern: &str, numbers: &[usize]) -> String {
    let regex = regex::Regex::new(pattern).expect("a pattern");
    let found = regex
        .captures(text)
        .unwrap_or_else(|| panic!("no {pattern:?}"));
    let first = found.len() - numbers.len();
    let mut out = text.to_string();
    // From the last group back, so the earlier ranges stay where they are.
    for (n, number) in numbers.iter().enumerate().rev() {
        let range = found.get(first + n).expect("the group").range();
        out.replace_range(range, &thousands(*number));
    }
    out
}

/// A receiver wrapped in parentheses, `(self.extras).x(…)` or `(calls.iter()).map(…)`, the call
/// on the same line or the next: it keeps `cargo fmt` from breaking a chain over more lines, so
/// it only hides lines from the count.
fn formatting_games(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().take(code_lines(text)).collect();
    let next = |at: usize| lines.get(at + 1).map(|next| next.trim_start());
    let with_call = |at: usize| match next(at).filter(|next| next.starts_with('.')) {
        Some(call) => format!("{}{call}", lines[at]),
        None => lines[at].to_string(),
    };
    (0..lines.len())
        .filter(|&at| wraps_a_receiver(&with_call(at)))
        .map(|at| lines[at].trim().to_string())
        .collect()
}

/// Whether `line` holds `(…).name` where the `(` opens no call's arguments and `…` is a name,
/// a field or a method chain: outside its own brackets no space, comma or `..`, which an
/// operator, a cast, a tuple or a range would need the parentheses for.
fn wraps_a_receiver(line: &str) -> bool {
    let bytes = line.as_bytes();
    let a_name = |text: &str| text.starts_with(|c: char| c.is_ascii_lowercase() || c == '_');
    let opens_a_call = |at: usize| {
        at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || b"_>)]!".contains(&bytes[at - 1]))
    };
    let wrapped = |open: usize| {
        let (mut depth, mut outside) = (0, String::new());
        for (at, &byte) in bytes.iter().enumerate().skip(open) {
            match byte {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' if depth == 1 => {
                    let method = line[at + 1..].strip_prefix('.');
                    return a_name(outside.trim_start_matches('&'))
                        && !outside.contains([' ', ','])
                        && !outside.contains("..")
                        && method.is_some_and(a_name);
                }
                b')' | b']' | b'}' => depth -= 1,
                _ if depth == 1 => outside.push(byte as char),
                _ => {}
            }
        }
        false
    };
    (0..bytes.len()).any(|at| bytes[at] == b'(' && !opens_a_call(at) && wrapped(at))
}

/// `core/mod.rs` then `client/mod.rs`: the files of one turn, in the order they are read.
fn reading_order() -> Vec<String> {
    let mut order = Vec::new();
    for folder in ["core", "client"] {
        let listed = read(&format!("src/{folder}/mod.rs"));
        let names = (listed.lines())
            .filter_map(|line| line.strip_prefix("pub mod "))
            .filter_map(|rest| rest.split(';').next());
        order.extend(names.map(|name| format!("src/{folder}/{name}.rs")));
    }
    order
}

#[test]
fn core_and_client_are_read_in_one_sitting() {
    let core = core_files();
    let lines: usize = core.iter().map(|f| non_blank_code_lines(&read(f))).sum();
    let mut problems = Vec::new();
    if lines > CORE_LINES {
        problems.push(format!(
            "src/core/ and src/client/ are {lines} non-blank lines; the budget is {CORE_LINES}"
        ));
    }
    for file in &core {
        let text = read(file);
        if non_blank_code_lines(&text) > FILE_LINES {
            problems.push(format!("{file} is over {FILE_LINES} non-blank lines"));
        }
        for game in formatting_games(&text) {
            problems.push(format!("{file}: a receiver in parentheses: {game}"));
        }
    }
    // core/mod.rs and client/mod.rs list every file; the README's table follows their order.
    let order = reading_order();
    let unlisted: Vec<&String> = (core.iter())
        .filter(|f| !f.ends_with("/mod.rs") && !order.contains(f))
        .collect();
    if !unlisted.is_empty() {
        problems.push(format!(
            "core/mod.rs or client/mod.rs does not list {unlisted:?}"
        ));
    }
    let readme = read(CODE_MAP);
    let said = regex::Regex::new(CORE_SAID)
        .expect("a pattern")
        .captures(&readme)
        .expect("the code map says how much the core is");
    let about: usize = said[2].replace(',', "").parse().expect("a number");
    if said[1] != core.len().to_string() || about.abs_diff(lines) * 100 > lines * TOLERANCE_PERCENT
    {
        problems.push(format!(
            "the code map says {} files, about {about} lines; core and client are {} files, {lines} lines",
            &said[1],
            core.len()
        ));
    }
    let table = &code_map(&readme)[1];
    let mapped: Vec<String> = (table.rows.iter().map(|row| row.file.clone()))
        .filter(|file| !file.ends_with("mod.rs"))
        .collect();
    if mapped != order {
        problems.push(format!(
            "the code map's core table is not in reading order: {mapped:?}"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The count is honest: a receiver in parentheses is found, a plain one is not, nor
/// parentheses an operator, a cast, a range or a tuple needs.
#[test]
fn formatting_games_are_found() {
    let games = [
        "let a = (self.extras).state_note(x);",
        "let c = (a.iter()).map(f);",
        "let e = (told.take()).unwrap_or_else(|| start(s));",
        "let f = (last.filter(|_| tier < Tier::Collapse)).unwrap_or(n);",
        "Some((calls.iter()).count())",
        "let m = (calls.iter().zip(&settled))",
    ];
    let plain = [
        "let b = self.extras.note(x);",
        "let d = from_str(&call.arguments).ok();",
        "let g = (a + b).max(c);",
        "let h = (n as u64).min(1);",
        "let i = (0..n).map(f);",
        "let j = (a, b).into();",
        "let k = vec![(a.b)];",
        "let l = f::<T>(a.b).c();",
    ];
    let text = [games.join("\n"), "    .filter(f)".into(), plain.join("\n")].join("\n");
    assert_eq!(formatting_games(&text), games);
    assert!(formatting_games("let m = (a.iter())\n\n    .map(f);").is_empty());
}

/// Past 300 lines a file says why in its header (the words "300 lines"); the core never.
#[test]
fn files_over_300_lines_say_why() {
    let over: Vec<String> = (source_files().into_iter())
        .map(|file| (code_lines(&read(&file)), file))
        .filter(|(lines, _)| *lines > FILE_LINES)
        .filter(|(_, file)| {
            let header: String = (read(file).lines())
                .take_while(|line| line.starts_with("//!"))
                .collect();
            file.starts_with("src/core/") || !header.contains("300 lines")
        })
        .map(|(lines, file)| format!("{file}: {lines} lines"))
        .collect();
    assert!(
        over.is_empty(),
        "over {FILE_LINES} lines without a reason:\n{}",
        over.join("\n")
    );
}

/// The threads that are neither scoped nor joined by a caller's `thread::scope`: each one is
/// joined by its owner's `Drop`, except the one detached reader `bounded.rs` explains.
const UNSCOPED_THREADS: [&str; 4] = [
    "src/core/dispatch.rs",
    "src/extras/mcp_wire.rs",
    "src/app/scripted_model.rs",
    "src/tools/support/bounded.rs",
];

/// ARCHITECTURE.md's "what is not there", checked: no async, no `macro_rules!`, no `static`,
/// threads spawned outside a scope only where it says, and an SSE parser that opens nothing.
#[test]
fn the_invariants_architecture_names_hold() {
    let mut problems = Vec::new();
    for file in source_files() {
        let text = read(&file);
        let code: Vec<&str> = (text.lines().take(code_lines(&text)))
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect();
        for line in &code {
            let line = line.trim_start();
            let bare_static = line.starts_with("static ") || line.starts_with("pub static ");
            let forbidden = ["async fn", "macro_rules!", "tokio", "futures::"];
            if bare_static || forbidden.iter().any(|word| line.contains(word)) {
                problems.push(format!("{file}: {line}"));
            }
            let unscoped = line.contains("thread::spawn(") || line.contains("thread.spawn(");
            if unscoped && !UNSCOPED_THREADS.contains(&file.as_str()) {
                problems.push(format!("{file} spawns a thread outside a scope: {line}"));
            }
        }
        if file == "src/client/sse.rs" {
            let opens = ["std::fs", "std::net", "ureq", "Command", "File::"];
            for word in opens
                .iter()
                .filter(|word| code.iter().any(|l| l.contains(*word)))
            {
                problems.push(format!("{file} names {word}: the parser opens nothing"));
            }
        }
    }
    let architecture = read("ARCHITECTURE.md");
    for file in UNSCOPED_THREADS {
        let name = file.rsplit('/').next().expect("a file name");
        if !architecture.contains(name) {
            problems.push(format!("ARCHITECTURE.md does not name {name}'s thread"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
