//! The figures README.md, docs/compare.md and RELIABILITY.md state that a test can recompute:
//! counts of test cases, of byte offsets, of fuzz targets, the default kill and interrupt
//! counts, the ignored tests, and the line counts in "How it compares". A figure measured by a run (timings, memory, soak
//! tallies) cannot be checked here; `bench/` and the ignored tests produce those.

use regex::Regex;
use std::path::Path;

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The number the first match of `pattern` captures in `text` (commas allowed, as in 9,200).
fn stated(text: &str, pattern: &str) -> usize {
    let found = Regex::new(pattern).expect("a pattern").captures(text);
    let number = found.unwrap_or_else(|| panic!("no {pattern:?} in the text"));
    number[1].replace(',', "").parse().expect("a number")
}

#[test]
fn reliability_counts_match_the_tests() {
    let reliability = read("RELIABILITY.md");
    let offsets = crate::faults::split_reply(100).len() - 1;
    let split = stated(&reliability, r"split at each of its (\d+) byte offsets");
    assert_eq!(split, offsets, "RELIABILITY.md: byte offsets");
    let faults = read("tests/it/faults.rs").matches("#[test]").count();
    let stated_faults = stated(&reliability, r"`tests/it/faults.rs` \((\d+) tests");
    assert_eq!(stated_faults, faults, "RELIABILITY.md: tests in faults.rs");

    let danger = read("src/tools/support/danger.rs");
    let cases = |list: &str| {
        let start = danger.find(&format!("const {list}: ")).expect("the list");
        let body = &danger[start..start + danger[start..].find("];").expect("its end")];
        let entry = |l: &&str| {
            ["\"", "(", "r\"", "r#\""]
                .iter()
                .any(|p| l.trim_start().starts_with(p))
        };
        body.lines().skip(1).filter(entry).count()
    };
    let table = (cases("CATASTROPHIC"), cases("DESTRUCTIVE"), cases("BENIGN"));
    let stated_table = (
        stated(&reliability, r"(\d+) catastrophic"),
        stated(&reliability, r"(\d+) destructive"),
        stated(&reliability, r"(\d+) benign"),
    );
    assert_eq!(stated_table, table, "danger table");
    assert_eq!(
        stated(&reliability, r"(\d+) cases: \d+ catastrophic"),
        table.0 + table.1 + table.2
    );

    let fuzz = read("fuzz/Cargo.toml")
        .matches("required-features = [\"afl\"]")
        .count();
    assert_eq!(
        stated(&reliability, r"(\d+) targets ×"),
        fuzz,
        "fuzz targets"
    );

    let kills = stated(
        &read("tests/it/crash.rs"),
        r"if soak \{ 100 \} else \{ (\d+) \}",
    );
    let interrupts = stated(&read("tests/it/interrupts.rs"), r"else \{ \(1, (\d+)\) \}");
    let short = r"runs short versions: (\d+) kills and (\d+) interrupts";
    let stated_kills = stated(&reliability, short);
    let stated_interrupts = stated(&reliability, r"runs short versions: \d+ kills and (\d+) ");
    assert_eq!((stated_kills, stated_interrupts), (kills, interrupts));
}

/// "≈ N above the unit tests (≈ M with them)" in docs/compare.md's table, within 10 %.
#[test]
fn compare_line_counts_match_the_source() {
    let (mut above, mut total) = (0, 0);
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    while let Some(dir) = dirs.pop() {
        for path in std::fs::read_dir(&dir)
            .expect("src/")
            .flatten()
            .map(|e| e.path())
        {
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a source file");
            let lines: Vec<&str> = text.lines().collect();
            total += lines.len();
            above += (lines.iter())
                .position(|l| l.trim() == "#[cfg(test)]")
                .unwrap_or(lines.len());
        }
    }
    let compare = read("docs/compare.md");
    let stated_above = stated(&compare, r"≈ ([\d,]+) above the unit tests");
    let stated_total = stated(&compare, r"above the unit tests \(≈ ([\d,]+) with them\)");
    let near = |stated: usize, real: usize| stated.abs_diff(real) * 10 <= real;
    assert!(
        near(stated_above, above),
        "docs/compare.md says ≈ {stated_above}, src has {above}"
    );
    assert!(
        near(stated_total, total),
        "docs/compare.md says ≈ {stated_total}, src has {total}"
    );
}

/// The README promises `cargo test` runs every test: each ignored one must be named there with
/// the command that runs it, and the README says how many there are.
#[test]
fn every_ignored_test_is_named_in_the_readme() {
    let readme = read("README.md");
    let ignore = Regex::new(r#"#\[ignore = "[^"]*?: ([^"]+)"\]"#).expect("a pattern");
    let mut seen = 0;
    for file in
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it")).expect("tests/it")
    {
        let text = std::fs::read_to_string(file.expect("an entry").path()).unwrap_or_default();
        for command in ignore.captures_iter(&text) {
            seen += 1;
            assert!(
                readme.contains(&command[1]),
                "README.md does not name `{}`",
                &command[1]
            );
        }
    }
    assert!(seen > 0, "no ignored test found: the pattern is stale");
    let words = ["no", "one", "two", "three", "four", "five", "six"];
    let said = Regex::new(r"(?i)\b(\w+)\s+tests?\s+(?:are|is)\s+ignored").expect("a pattern");
    let said = said
        .captures(&readme)
        .expect("the README says how many tests are ignored");
    let said = words.iter().position(|w| said[1].eq_ignore_ascii_case(w));
    assert_eq!(said, Some(seen), "the README's count of ignored tests");
}

/// A decimal the first match of `pattern` captures in `text`.
fn decimal(text: &str, pattern: &str) -> f64 {
    let found = Regex::new(pattern).expect("a pattern").captures(text);
    let number = found.unwrap_or_else(|| panic!("no {pattern:?} in the text"));
    number[1].replace(',', "").parse().expect("a number")
}

/// The headline figures (docs/compare.md's "Benchmarks") are BENCHMARKS.md's last full run,
/// rounded, and name its commit and profile.
#[test]
fn compare_headline_figures_are_the_benchmarks() {
    let readme = read("docs/compare.md");
    let start = readme.find("## Benchmarks").expect("the section");
    let headline = &readme[start..start + readme[start..].find("\n## ").expect("its end")];
    let bench = read("BENCHMARKS.md");
    let commit = Regex::new(r"at commit `([0-9a-f]{7})`").expect("a pattern");
    let commit = &commit.captures(&bench).expect("the run's commit")[1];
    assert!(headline.contains(commit), "the commit {commit} of the run");
    assert!(headline.contains("`dist` profile"), "the profile");
    let near = |readme: f64, bench: f64, what: &str| {
        assert!(
            (readme - bench).abs() <= bench * 0.05,
            "{what}: docs/compare.md {readme}, BENCHMARKS {bench}"
        );
    };
    let row = |metric: &str| -> &str {
        bench
            .lines()
            .find(|l| l.starts_with(&format!("| {metric}")))
            .expect("the row")
    };
    // (what, the README's words, the BENCHMARKS row, the number in that row)
    let figures = [
        (
            "start-up",
            r"start-up\s+([\d.]+) ms",
            "start-up",
            r"\| ([\d.]+) ms",
        ),
        ("its ratio", r"\*\*(\d+)× faster", "start-up", r"(\d+)×"),
        (
            "per round",
            r"\(([\d.]+) ms vs",
            "agent overhead",
            r"\| ([\d.]+) ms",
        ),
        (
            "its ratio",
            r"\*\*(\d+)×\*\* less agent",
            "agent overhead",
            r"([\d.]+)×",
        ),
        (
            "memory",
            r"\(([\d.]+) MiB vs",
            "peak RSS",
            r"\| ([\d.]+) MiB",
        ),
        (
            "binary",
            r"a ([\d.]+) MB binary",
            "stripped",
            r"\| ([\d.]+) MB",
        ),
    ];
    for (what, said, metric, measured) in figures {
        near(
            decimal(headline, said),
            decimal(row(metric), measured),
            what,
        );
    }
    let within = decimal(headline, r"within ([\d.]+)× of ripgrep");
    for metric in ["grep tool", "glob tool"] {
        let ratio = decimal(row(metric), r"met \(([\d.]+)×\)");
        assert!(
            ratio <= within,
            "{metric}: {ratio}× is not within {within}×"
        );
    }
}
