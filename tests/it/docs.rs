//! Keeping the teaching material true: file headers, file sizes, the code map
//! (`docs/code-map.md`), the size the README states, its set-up commands and settings, the
//! reference tables against `--help` and `/help`, every relative link and path the Markdown
//! names, the functions the walkthrough cites, and the examples; and what ARCHITECTURE.md,
//! DESIGN.md and the `//!` headers promise of the code (the files, functions, turn, seam,
//! threads, line counts and test commands they name; ARCHITECTURE.md's last section lists
//! which test keeps which promise).
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

/// Rows under a heading that is not their folder's (issue 30 found six `src/extras/` rows in
/// the `src/app/` table): each file belongs to the table of the most specific folder a
/// heading names (`src/tools/support/` before `src/tools/`).
fn rows_in_the_wrong_table(page: &str, tables: &[Table]) -> Vec<String> {
    let heading = regex::Regex::new(r"(?m)^## (.*)$").expect("a pattern");
    let folder = regex::Regex::new(r"`(src/[a-z_/]*)`").expect("a pattern");
    let headings: Vec<(usize, Vec<String>)> = (heading.captures_iter(page))
        .map(|c| {
            let names = folder.captures_iter(&c[1]).map(|f| f[1].to_string());
            (c.get(0).expect("a match").start(), names.collect())
        })
        .collect();
    let all: Vec<&String> = headings.iter().flat_map(|(_, names)| names).collect();
    let mut problems = Vec::new();
    for table in tables {
        let Some((_, names)) = headings
            .iter()
            .rev()
            .find(|(at, _)| *at < table.range.start)
        else {
            continue;
        };
        for row in &table.rows {
            let dir = format!(
                "{}/",
                Path::new(&row.file).parent().expect("a folder").display()
            );
            let home = (all.iter())
                .filter(|name| dir.starts_with(name.as_str()))
                .max_by_key(|name| name.len());
            if !home.is_some_and(|home| names.contains(home)) {
                problems.push(format!("{} is listed under {names:?}", row.file));
            }
        }
    }
    problems
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
    problems.extend(rows_in_the_wrong_table(&readme, &tables));
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
    // ARCHITECTURE.md also names the tests that keep its promises (`docs::…`).
    let sources: String = (source_files().into_iter().chain(integration_tests()))
        .map(|f| read(&f))
        .collect();
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

/// The files of `tests/it/`, as `tests/it/…` paths, sorted.
fn integration_tests() -> Vec<String> {
    let mut files: Vec<String> = (std::fs::read_dir(root().join("tests/it")).expect("tests/it"))
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().to_string())
        .filter(|name| name.ends_with(".rs"))
        .map(|name| format!("tests/it/{name}"))
        .collect();
    files.sort();
    files
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
    let shown = format!("> read_file(Cargo.toml)\n  1:{first_line}\n");
    assert!(
        output.stdout.contains(&shown),
        "{shown:?} not in {output:?}"
    );
    assert!(
        output
            .stdout
            .contains("Answer(\"The package is called corecoder.\")")
    );
    // `Extras::default()` counts spending (ARCHITECTURE.md: the built-in prices are on).
    assert!(
        output.stdout.contains("tokens: ") && output.stdout.contains(" prompt + "),
        "{output:?}"
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

/// The plain agent a fork keeps (`examples/minimal.rs`, nothing turned on) reads a file (the
/// third identical read is not run: the loop guard), is
/// refused a `git clean -fdx` under `--yes`, moves with `cd` and writes a todo list in one reply; the
/// next request tells the model where it is and what the list says (the notes are the core's),
/// and the answer is all of stdout.
#[test]
fn example_minimal_tells_the_model_the_new_directory_and_the_list() {
    minimal_turn(&example("minimal"), "docs_minimal_example");
    minimal_refuses_a_hostile_reply(&example("minimal"), "docs_minimal_hostile");
}

/// `minimal -p … --yes` against the scripted loopback server, through one reply that calls
/// read_file three times alike (the third refused: the loop guard), bash `git clean -fdx`
/// (refused: destructive) and `cd sub`, and todo_write; the next request must say where and what.
fn minimal_turn(binary: &Path, name: &str) {
    use crate::server::{Reply, Server};
    let sandbox = crate::run::Sandbox::new(name);
    sandbox.write("notes.txt", "the plan\n");
    std::fs::create_dir_all(sandbox.path("sub")).expect("a directory");
    let todos =
        serde_json::json!({"tasks": [{"content": "write the tests", "status": "in_progress"}]});
    let read = serde_json::json!({"file_path": "notes.txt"});
    let calls = [
        ("call_read", "read_file", read.clone()),
        ("call_again", "read_file", read.clone()),
        ("call_third", "read_file", read),
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
    let output = run_minimal(binary, &sandbox, &server, "go to sub and plan");
    assert_eq!(output.code, 0, "{output:?}");
    assert_eq!(output.stdout, "moved and planned\n", "{output:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "two requests");
    let results = requests[1].tool_results();
    assert!(
        results[0].1.contains("the plan") && results[1].1.contains("the plan"),
        "read_file ran: {results:?}"
    );
    // The loop guard: the third identical call in a row is not run, in a fork too.
    assert!(
        results[2]
            .1
            .starts_with("Not run: this is the same read_file call"),
        "{results:?}"
    );
    // `--yes` runs bash, but not a destructive command no one opted in to by name.
    assert!(results[3].1.starts_with("Refused"), "{results:?}");
    // The key the agent was started with never reaches bash, in a fork either.
    assert!(results[4].1.contains("PATH="), "env ran: {results:?}");
    assert!(
        !results[4].1.contains("sk-test"),
        "the key reached bash: {results:?}"
    );
    let last = &results.last().expect("seven results").1;
    let sub = sandbox.dir.join("sub");
    let moved = format!("[session state]\nWorking directory: {}", sub.display());
    assert!(last.contains(&moved), "the new directory is told: {last}");
    assert!(
        last.contains("Current todo list:") && last.contains("write the tests"),
        "the list is told: {last}"
    );
}

/// The minimal example (or the fork's) run once with `-p TASK --yes` against `server`, with
/// nothing of the user's environment but `PATH`.
fn run_minimal(
    binary: &Path,
    sandbox: &crate::run::Sandbox,
    server: &crate::server::Server,
    task: &str,
) -> Output {
    let child = Command::new(binary)
        .args(["-p", task, "--yes"])
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
    run::finish(child)
}

/// A reply no real model sends is refused whole by the plain agent too (the bound is the
/// client's, `wire::well_formed`, not a dialect's): 1001 calls, or one call named 300 bytes
/// long. Nothing runs, nothing is asked again, and the error says why.
fn minimal_refuses_a_hostile_reply(binary: &Path, name: &str) {
    use crate::server::{Reply, Server};
    // Each read differs (its `limit`), so the loop guard stops none: let in, all would run.
    let args = |n: usize| serde_json::json!({"file_path": "notes.txt", "limit": n + 1});
    let ids: Vec<String> = (0..1001).map(|n| format!("c{n}")).collect();
    let many: Vec<_> = (ids.iter().enumerate())
        .map(|(n, id)| (id.as_str(), "read_file", args(n)))
        .collect();
    let long = "n".repeat(300);
    let named = [("c1", long.as_str(), args(0))];
    let cases = [
        (&many[..], "the reply holds 1001 tool calls"),
        (&named[..], "bytes long; a name or id is at most 256"),
    ];
    for (calls, said) in cases {
        let sandbox = crate::run::Sandbox::new(name);
        sandbox.write("notes.txt", "the plan\n");
        let server = Server::start(vec![
            Reply::Sse(crate::sse::tool_calls(calls)),
            Reply::Sse(crate::sse::text("went on")),
        ]);
        let output = run_minimal(binary, &sandbox, &server, "read the notes");
        assert_eq!(output.code, 1, "{said}: {output:?}");
        assert!(output.stderr.contains(said), "{said}: {output:?}");
        assert_eq!(
            server.requests().len(),
            1,
            "{said}: not run, not asked again"
        );
    }
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
    let forked = target.join("debug/examples/minimal");
    minimal_refuses_a_hostile_reply(&forked, "docs_forked_hostile");
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
            .filter_map(|line| {
                line.strip_prefix("pub mod ")
                    .or_else(|| line.strip_prefix("pub(crate) mod "))
            })
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
/// joined by its owner's `Drop` (the owner named beside it), except the one detached reader
/// `bounded.rs` explains.
const UNSCOPED_THREADS: [(&str, Option<&str>); 4] = [
    ("src/core/dispatch.rs", Some("Pool")),
    ("src/extras/mcp_wire.rs", Some("Link")),
    ("src/app/scripted_model.rs", Some("ScriptedModel")),
    ("src/tools/support/bounded.rs", None),
];

/// The files that spawn threads inside a `std::thread::scope`, as ARCHITECTURE.md lists them:
/// the team, the walk, a request's Ctrl+C watcher, the spinner, MCP start-up and shut-down, the
/// sandboxed write, the stdin reader of `--acp`.
const SCOPED_THREADS: [&str; 7] = [
    "src/app/acp.rs",
    "src/app/spinner.rs",
    "src/client/llm.rs",
    "src/extras/mcp.rs",
    "src/extras/sandbox.rs",
    "src/tools/agent.rs",
    "src/tools/support/walk.rs",
];

/// ARCHITECTURE.md's "what is not there", checked: no async, no `macro_rules!`, no `static`,
/// threads spawned outside a scope only where it says, and an SSE parser that opens nothing.
#[test]
fn the_invariants_architecture_names_hold() {
    let mut problems = Vec::new();
    let spawn = regex::Regex::new(r"(thread::|\.)spawn\([^)]").expect("a pattern");
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
            // `thread::spawn(f)`, `builder.spawn(f)`: any spawn with a closure but a scope's
            // (`Command::spawn()` takes none).
            let unscoped = spawn.is_match(line) && !line.contains("scope.spawn(");
            if unscoped && !UNSCOPED_THREADS.iter().any(|(f, _)| *f == file) {
                problems.push(format!("{file} spawns a thread outside a scope: {line}"));
            }
            if line.contains("scope.spawn(") && !SCOPED_THREADS.contains(&file.as_str()) {
                problems.push(format!(
                    "{file}: a scoped thread ARCHITECTURE.md does not list"
                ));
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
    for (file, owner) in UNSCOPED_THREADS {
        let name = file.rsplit('/').next().expect("a file name");
        if !architecture.contains(name) {
            problems.push(format!("ARCHITECTURE.md does not name {name}'s thread"));
        }
        let Some(owner) = owner else { continue };
        let text = read(file);
        let joined = (text.split_once(&format!("impl Drop for {owner} {{")))
            .is_some_and(|(_, drop)| drop.split("\n}\n").next().unwrap_or("").contains(".join()"));
        if !joined || !architecture.contains(&format!("`{owner}`'s")) {
            problems.push(format!(
                "{file}: {owner}'s Drop must join its thread, as ARCHITECTURE.md says"
            ));
        }
    }
    for file in SCOPED_THREADS {
        let text = read(file);
        if !(text.lines().take(code_lines(&text))).any(|line| line.contains("scope.spawn(")) {
            problems.push(format!(
                "{file} no longer spawns in a scope: update ARCHITECTURE.md"
            ));
        }
    }
    // "the pool's 8 workers"
    let workers = read("src/core/dispatch.rs").contains("const WORKERS: usize = 8;");
    if !workers || !architecture.contains("the pool's 8 workers") {
        problems.push("the pool is not the 8 workers ARCHITECTURE.md says".to_string());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---- ARCHITECTURE.md's promises: the files, functions and turn it names, the seam, the history. ----

/// Where a `.rs` name a page gives is: `src/NAME`, or the one source file ending in `/NAME`
/// (`core/agent.rs`, `dispatch.rs`), or a path from the root (`tests/it/docs.rs`).
fn resolve(name: &str, files: &[String]) -> Vec<String> {
    for from_root in [name.to_string(), format!("tests/it/{name}")] {
        if root().join(&from_root).is_file() {
            return vec![from_root];
        }
    }
    (files.iter())
        .filter(|f| **f == format!("src/{name}") || f.ends_with(&format!("/{name}")))
        .cloned()
        .collect()
}

/// Files DESIGN.md names that are not ours to check: one gone on purpose (the history of a
/// decision), two of the `landlock` crate's source.
const NOT_OURS: [&str; 3] = ["extras/provider_quirks.rs", "prctl.rs", "ruleset.rs"];

/// Every `.rs` file ARCHITECTURE.md and DESIGN.md name, in prose or in the turn's drawing, is
/// there (a bare name like `dispatch.rs` must name one file only).
#[test]
fn every_file_architecture_and_design_name_exists() {
    let files = source_files();
    let name = regex::Regex::new(r"[A-Za-z0-9_][A-Za-z0-9_./]*\.rs\b").expect("a pattern");
    let mut problems = Vec::new();
    for doc in ["ARCHITECTURE.md", "DESIGN.md"] {
        let text = read(doc);
        let named: Vec<&str> = name.find_iter(&text).map(|m| m.as_str()).collect();
        assert!(named.len() >= 20, "{doc} names too few files: {named:?}");
        for named in named.into_iter().filter(|n| !NOT_OURS.contains(n)) {
            match resolve(named, &files).len() {
                1 => {}
                0 => problems.push(format!("{doc} names {named}, which is not there")),
                _ => problems.push(format!("{doc} names {named}, which is several files")),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Whether `what` is defined where its name says: `module::f` is `f` in that module's file,
/// `Type::f` in a file with an `impl Type` (or `impl Trait for Type`; `Type::default` may be
/// derived), `module::Type` a `struct`/`enum Type` in that module, `Enum::Variant` a variant.
fn defined_in(what: &str, files: &[String]) -> Result<(), String> {
    let what = what.replace("::tests::", "::");
    let (owner, item) = what.rsplit_once("::").expect("a path");
    let owner = owner.rsplit("::").next().expect("a name");
    let is_type = |name: &str| name.starts_with(char::is_uppercase);
    let holds = |text: &str| match (is_type(owner), is_type(item)) {
        (true, true) => {
            let enum_of =
                regex::Regex::new(&format!(r"enum {owner}(<[^>]*>)? \{{")).expect("a pattern");
            let variants = enum_of.find(text).map(|m| &text[m.end()..]);
            variants.is_some_and(|v| {
                let v = v.split("\n}").next().unwrap_or("");
                v.contains(&format!("\n    {item}"))
            })
        }
        (true, false) => {
            let implemented = regex::Regex::new(&format!(r"impl(<[^>]*>)? (\w+ for )?{owner}\b"))
                .expect("a pattern");
            let derived = item == "default"
                && regex::Regex::new(&format!(
                    r"#\[derive\(Default\)\]\n(pub(\(crate\))? )?struct {owner} "
                ))
                .expect("a pattern")
                .is_match(text);
            derived || (implemented.is_match(text) && defines_fn(text, item))
        }
        (false, true) => [format!("struct {item}"), format!("enum {item}")]
            .iter()
            .any(|d| text.contains(d.as_str())),
        (false, false) => defines_fn(text, item),
    };
    let homes: Vec<&String> = (files.iter())
        .filter(|f| is_type(owner) || module_of(f).last().is_some_and(|m| m == owner))
        .collect();
    match homes.iter().any(|home| holds(&read(home))) {
        true => Ok(()),
        false => Err(format!("{what} is not defined where it says")),
    }
}

fn defines_fn(text: &str, name: &str) -> bool {
    text.contains(&format!("fn {name}(")) || text.contains(&format!("fn {name}<"))
}

/// Every `Type::function` and `module::function` ARCHITECTURE.md names (in prose and in the
/// drawing of one turn) is defined where the name says, not merely somewhere.
#[test]
fn every_function_architecture_names_is_where_it_says() {
    let files: Vec<String> = (source_files().into_iter())
        .filter(|f| f != "src/main.rs")
        .chain(integration_tests())
        .collect();
    let path = regex::Regex::new(r"\b[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)+")
        .expect("a pattern");
    let text = read("ARCHITECTURE.md");
    let mut named: Vec<&str> = path
        .find_iter(&text)
        .map(|m| m.as_str())
        .filter(|p| !p.starts_with("std::"))
        .collect();
    named.sort();
    named.dedup();
    assert!(named.len() >= 30, "too few names: {named:?}");
    let problems: Vec<String> = (named.iter())
        .filter_map(|what| defined_in(what, &files).err())
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The body of `fn name` in `text`: from its signature to the closing brace at its indent.
fn body_of(text: &str, name: &str) -> String {
    let start = text
        .find(&format!("fn {name}("))
        .unwrap_or_else(|| panic!("no fn {name}"));
    let line_start = text[..start].rfind('\n').map_or(0, |n| n + 1);
    let indent = &text[line_start..start];
    let indent = &indent[..indent.len() - indent.trim_start().len()];
    let end = text[start..]
        .find(&format!("\n{indent}}}\n"))
        .expect("the end of the function");
    text[start..start + end].to_string()
}

/// The numbered steps of ARCHITECTURE.md's drawing of one turn are the steps `run_loop` takes,
/// in its order: the first function each step names is called there, after the one before.
#[test]
fn the_turn_architecture_draws_is_the_loop() {
    let text = read("ARCHITECTURE.md");
    let drawing = (text.split("```").nth(1)).expect("the drawing of one turn");
    let step = regex::Regex::new(r"(?m)^\s*(\d+)\. \S*?::([a-z_]+)").expect("a pattern");
    let steps: Vec<(String, String)> = (step.captures_iter(drawing))
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect();
    assert!(
        steps.len() >= 5,
        "the drawing names too few steps: {steps:?}"
    );
    let run_loop = body_of(&read("src/core/agent.rs"), "run_loop");
    let mut after = 0;
    for (n, function) in &steps {
        let at = [format!(".{function}("), format!("::{function}(")]
            .iter()
            .filter_map(|call| run_loop[after..].find(call.as_str()))
            .min();
        match at {
            Some(at) => after += at + 1,
            None => {
                panic!("step {n}, {function}, is not called in run_loop after the step before it")
            }
        }
    }
}

/// ARCHITECTURE.md's seam and history, checked: `Extras`' fields are private and it is not
/// `Clone`; `impl Agent` is one file; the history is a private field of `Agent`, and only the
/// functions the loop lends it to (`message.rs`' repair, `context.rs`' compaction) take it
/// mutably; no trait and no type parameter on a struct or enum; the `SubAgent` bundle is read by
/// the `agent` tool alone; `process::exit_code` names every `Error` variant (no `_` arm); and
/// DESIGN.md's pool, started when the user's agent begins its loop, and its five folders.
#[test]
fn the_seam_and_the_history_are_as_architecture_says() {
    let mut problems = Vec::new();
    let seam = read("src/extras/mod.rs");
    let (before, after) = seam.split_once("struct Extras {").expect("struct Extras");
    let fields = after.split("\n}\n").next().expect("its fields");
    if (fields.lines()).any(|line| line.trim_start().starts_with("pub")) {
        problems.push("a field of Extras is public".to_string());
    }
    let derive = before.lines().rev().take(2).collect::<String>();
    let generic = regex::Regex::new(r"(?m)^\s*(pub(\(crate\))? )?(trait |(struct|enum) \w+<[A-Z])")
        .expect("a pattern");
    let mut everything = String::new();
    for file in source_files() {
        let text = read(&file);
        let code: String = (text.lines().take(code_lines(&text)))
            .filter(|line| !line.trim_start().starts_with("//"))
            .map(|line| format!("{line}\n"))
            .collect();
        if code.contains("impl Agent {") && file != "src/core/agent.rs" {
            problems.push(format!("{file} has an impl Agent"));
        }
        let lent = ["&mut Vec<Message>", "&mut [Message]"];
        let history_files = ["src/core/message.rs", "src/core/context.rs"];
        if lent.iter().any(|l| code.contains(l)) && !history_files.contains(&file.as_str()) {
            problems.push(format!("{file} takes a history mutably"));
        }
        if let Some(found) = generic.find(&code) {
            problems.push(format!("{file}: {}", found.as_str().trim()));
        }
        let tool = file.starts_with("src/tools/") && !file.starts_with("src/tools/support/");
        let own = ["src/tools/agent.rs", "src/tools/mod.rs"].contains(&file.as_str());
        if tool && !own && code.contains("sub_agent") {
            problems.push(format!("{file} reads the sub-agent bundle"));
        }
        everything.push_str(&code);
    }
    if derive.contains("Clone") || everything.contains("impl Clone for Extras") {
        problems.push("Extras is Clone".to_string());
    }
    if !derive.contains("#[derive(Default)]") || everything.contains("impl Default for Extras") {
        problems.push("Extras::default() is not derived field by field".to_string());
    }
    // "the loop calls one method per step (`Extras::task_submitted`, …)": each is called there.
    let architecture = read("ARCHITECTURE.md");
    let steps = (architecture
        .split("the loop calls one method per step")
        .nth(1))
    .and_then(|rest| rest.split(").").next())
    .expect("the seam's steps");
    let method = regex::Regex::new(r"`Extras::([a-z_]+)`").expect("a pattern");
    let the_loop = code_of("src/core/agent.rs") + &code_of("src/core/batch.rs");
    let named: Vec<String> = method
        .captures_iter(steps)
        .map(|c| c[1].to_string())
        .collect();
    if named.len() < 5 {
        problems.push(format!("the seam's steps are not found: {named:?}"));
    }
    for name in named
        .iter()
        .filter(|n| !the_loop.contains(&format!(".{n}(")))
    {
        problems.push(format!("the loop does not call Extras::{name}"));
    }
    let set_up = code_of("src/extras/set_up.rs");
    for name in ["set_hooks", "set_mcp"] {
        if !defines_fn(&set_up, name) {
            problems.push(format!("extras/set_up.rs has no {name}"));
        }
    }
    // Consent: the PreToolUse hooks come first, and bash asks the danger table again.
    let batch = code_of("src/core/batch.rs");
    let (hooks, consent) = (batch.find(".before_call("), batch.find(".settle_consent("));
    if hooks.zip(consent).is_none_or(|(h, c)| h >= c) {
        problems.push("the batch does not ask the hooks before consent".to_string());
    }
    if !code_of("src/tools/bash.rs").contains("danger::check(") {
        problems.push("bash::run does not check the danger table again".to_string());
    }
    // "One type, `message::ToolCall` (`id`, `name`, `arguments` as raw JSON text)"
    let call = code_of("src/core/message.rs");
    let fields = (call.split_once("struct ToolCall {").map(|(_, f)| f))
        .and_then(|f| f.split('}').next())
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if fields.replace("pub(crate) ", "").replace("pub ", "")
        != "id: String, name: String, arguments: String,"
    {
        problems.push(format!(
            "ToolCall is not id, name and raw arguments: {fields}"
        ));
    }
    // Early start and the calibrated estimate are never set up: the binary's are the default's,
    // so the binary's tests of them (`early::`) test `Extras::default()`.
    for file in ["src/extras/set_up.rs", "src/app/setup.rs"] {
        let code = code_of(file);
        for word in ["early", "calibration"]
            .iter()
            .filter(|w| code.contains(*w))
        {
            problems.push(format!(
                "{file} sets up {word}: the default is no longer what runs"
            ));
        }
    }
    // DESIGN.md: the pool starts when the user's agent begins its first task.
    let run_loop = body_of(&code_of("src/core/agent.rs"), "run_loop");
    let starts = run_loop.find("AgentKind::Main") < run_loop.find("get_or_insert_with(Pool::new)");
    if !starts || run_loop.find("AgentKind::Main").is_none() {
        problems.push("the pool does not start with the user's agent's loop".to_string());
    }
    // "five folders, one seam" (DESIGN.md)
    let folders: Vec<String> = (std::fs::read_dir(root().join("src"))
        .expect("src/")
        .flatten())
    .filter(|entry| entry.path().is_dir())
    .map(|entry| entry.file_name().to_string_lossy().to_string())
    .collect();
    if folders.len() != 5 {
        problems.push(format!(
            "src/ has {folders:?}, not the five folders DESIGN.md names"
        ));
    }
    let agent = read("src/core/agent.rs");
    let agent_fields = (agent.split_once("struct Agent {").expect("struct Agent").1)
        .split("\n}\n")
        .next()
        .expect("its fields")
        .to_string();
    if !agent_fields
        .lines()
        .any(|l| l.trim() == "history: Vec<Message>,")
    {
        problems.push("Agent's history is not a private Vec<Message>".to_string());
    }
    if agent.contains("-> &mut Vec<Message>") || agent.contains("-> &mut [Message]") {
        problems.push("Agent lends its history out mutably".to_string());
    }
    let event = read("src/core/event.rs");
    let variants = (event.split_once("enum Error {").expect("enum Error").1)
        .split("\n}\n")
        .next()
        .expect("its variants")
        .to_string();
    let exit_code = body_of(&read("src/app/process.rs"), "exit_code");
    let variant = regex::Regex::new(r"(?m)^    ([A-Z]\w*)").expect("a pattern");
    for name in variant.captures_iter(&variants).map(|c| c[1].to_string()) {
        if !exit_code.contains(&format!("Error::{name}")) {
            problems.push(format!("process::exit_code does not name Error::{name}"));
        }
    }
    if exit_code.contains("_ =>") {
        problems.push("process::exit_code has a catch-all arm".to_string());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The process-wide things ARCHITECTURE.md names are the only ones: `signal-hook` and
/// `mallopt` only in `app/process.rs`, and `main` tunes malloc before anything else.
#[test]
fn the_process_wide_state_is_what_architecture_names() {
    let mut problems = Vec::new();
    for file in source_files() {
        let text = read(&file);
        let code = &text
            .lines()
            .take(code_lines(&text))
            .collect::<Vec<_>>()
            .join("\n");
        for word in ["signal_hook", "mallopt"] {
            if code.contains(word) && file != "src/app/process.rs" {
                problems.push(format!("{file} names {word}"));
            }
        }
    }
    if !read("benches/bench/main.rs").contains("process::tune_malloc()") {
        problems.push("the bench does not tune malloc as the binary does".to_string());
    }
    let main = body_of(&read("src/main.rs"), "main");
    let first = (main.lines().skip(1))
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("//"));
    if !first.is_some_and(|l| l.contains("tune_malloc()")) {
        problems.push(format!("main does not start with tune_malloc: {first:?}"));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every test path: `module::tests::name` for a unit test (`src/`), `module::name` for one of
/// `tests/it/`, as `cargo test` filters match them.
fn test_paths() -> Vec<String> {
    let test =
        regex::Regex::new(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*fn ([a-z_0-9]+)").expect("a pattern");
    let mut paths = Vec::new();
    for file in source_files() {
        let module = module_of(&file).join("::");
        for found in test.captures_iter(&read(&file)) {
            paths.push(format!("{module}::tests::{}", &found[1]));
        }
    }
    for file in integration_tests() {
        let module = file.trim_start_matches("tests/it/").trim_end_matches(".rs");
        for found in test.captures_iter(&read(&file)) {
            paths.push(format!("{module}::{}", &found[1]));
        }
    }
    paths
}

/// Every `cargo test …` command ARCHITECTURE.md and DESIGN.md give runs at least one test:
/// each filter (the words that are not flags) is part of some test's path.
#[test]
fn every_test_command_architecture_and_design_give_runs_a_test() {
    let paths = test_paths();
    let command = regex::Regex::new(r"`[^`]*cargo\s+test\s[^`]*`").expect("a pattern");
    let (mut problems, mut seen) = (Vec::new(), 0);
    for doc in ["ARCHITECTURE.md", "DESIGN.md"] {
        let text = read(doc);
        let commands: Vec<&str> = command.find_iter(&text).map(|m| m.as_str()).collect();
        seen += commands.len();
        for command in commands {
            let words: Vec<&str> = command.trim_matches('`').split_whitespace().collect();
            let start = words.iter().position(|w| *w == "test").expect("cargo test") + 1;
            let mut filters = Vec::new();
            let mut skip = false;
            for word in &words[start..] {
                match (skip, word.starts_with('-')) {
                    (true, _) => skip = false,
                    (false, true) => skip = ["--test", "--profile", "--bench"].contains(word),
                    (false, false) => filters.push(*word),
                }
            }
            for filter in filters {
                if !paths.iter().any(|path| path.contains(filter)) {
                    problems.push(format!("{doc}: `{command}` runs no test named {filter}"));
                }
            }
        }
    }
    assert!(
        seen >= 10,
        "only {seen} test commands: the pattern is stale"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A file's code above its tests, comments left out.
fn code_of(file: &str) -> String {
    let text = read(file);
    (text.lines().take(code_lines(&text)))
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// The "never"s and "nothing here"s the `//!` headers of `lib.rs`, `core/`, `client/` and the
/// null seam promise, where a word in the code would break them.
#[test]
fn the_headers_nevers_hold() {
    let nevers: [(&str, &str, &[&str]); 10] = [
        (
            "src/core/dispatch.rs",
            "reaches MCP through the ToolContext and asks no one",
            &["Extras", "Answer", "ask("],
        ),
        (
            "src/core/agent.rs",
            "talks no HTTP and runs no tool itself",
            &["ureq", "http::", "dispatch::run("],
        ),
        (
            "src/core/batch.rs",
            "never touches the history",
            &["history"],
        ),
        (
            "src/core/config.rs",
            "reads no variable, file or flag",
            &["std::env", "env::var", "std::fs", "File::"],
        ),
        (
            "src/core/consent.rs",
            "is pure logic",
            &["std::fs", "std::io", "Llm", "Command"],
        ),
        (
            "src/core/prompt.rs",
            "sends nothing",
            &["Llm", "ureq", "http::"],
        ),
        (
            "src/core/summary.rs",
            "builds text only",
            &["Llm", "ureq", "http::"],
        ),
        (
            "src/core/notes.rs",
            "decides the text only",
            &["Llm", "ureq", "history.push"],
        ),
        (
            "src/client/wire.rs",
            "sends or reads no byte",
            &["ureq", "std::net", "std::io", "BufRead"],
        ),
        (
            "src/client/mod.rs",
            "touches no history and runs no tool",
            &["tools::dispatch", "core::dispatch"],
        ),
    ];
    let mut problems = Vec::new();
    for (file, promise, words) in nevers {
        let code = code_of(file);
        for word in words.iter().filter(|word| code.contains(*word)) {
            problems.push(format!("{file} {promise}, but names {word}"));
        }
    }
    // The null seam is not compiled in the full crate: a fork points `mod extras` at it.
    for file in ["src/lib.rs", "src/extras/mod.rs"] {
        if code_of(file).contains("null") {
            problems.push(format!("{file} compiles the null seam"));
        }
    }
    // lib.rs: the re-exports are what a plain embedding program needs.
    let minimal = read("examples/minimal.rs");
    let paths = regex::Regex::new(r"corecoder::[a-z_]+::").expect("a pattern");
    if let Some(found) = paths.find(&minimal) {
        problems.push(format!(
            "examples/minimal.rs reaches past the re-exports: {}",
            found.as_str()
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The lines DESIGN.md's "Hand-written or a crate" gives for our own pieces (non-blank, above
/// the tests) are the files', within the code map's tolerance: the table's files, Landlock's
/// three and seccomp's.
#[test]
fn the_line_counts_design_gives_are_the_files() {
    let design = read("DESIGN.md");
    let files = source_files();
    let mut stated: Vec<(String, usize)> = Vec::new();
    let row = regex::Regex::new(r"(?m)^\| [^|]*\(`([a-z0-9_/]+\.rs)`\) \| (?:\d+ → )?(\d+)")
        .expect("a pattern");
    let after = regex::Regex::new(r"`([a-z_]+\.rs)`\s+\d+ → (\d+)").expect("a pattern");
    for found in row
        .captures_iter(&design)
        .chain(after.captures_iter(&design))
    {
        stated.push((found[1].to_string(), found[2].parse().expect("a number")));
    }
    let seccomp = regex::Regex::new(r"Lines a reader reads: ours (\d+)").expect("a pattern");
    if let Some(found) = seccomp.captures(&design) {
        let lines = found[1].parse().expect("a number");
        stated.push(("extras/sandbox/seccomp.rs".to_string(), lines));
    }
    assert!(stated.len() >= 8, "too few line counts found: {stated:?}");
    let mut problems = Vec::new();
    for (name, said) in stated {
        let found = resolve(&name, &files);
        let [file] = found.as_slice() else {
            problems.push(format!("{name} is not one file: {found:?}"));
            continue;
        };
        let lines = non_blank_code_lines(&read(file));
        if lines.abs_diff(said) * 100 > lines * TOLERANCE_PERCENT {
            problems.push(format!(
                "DESIGN.md says {name} is {said} lines; it is {lines}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
