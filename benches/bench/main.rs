//! The benchmark suite: how fast and small corecoder is, side by side with the tools a user
//! would pick instead, measured in the same run on the same machine.
//!
//! Run by `bench/run.sh` (which installs the peers) or directly with
//! `cargo bench --profile dist --bench bench [-- NAME…]`, where NAME picks sections (`startup`,
//! `session`, `size`, `search`, `sse`, `parallel`, `streaming`, `compaction`, `shell`). Prints a
//! markdown table (medians of ≥ 5 runs after a warm-up, ratios to the peers) and writes it to
//! `target/bench-results.md`. A missing peer is skipped with a note. Not part of `cargo test`.

mod agents;
mod inproc;
mod measure;
mod responses_sse;
mod search;
mod server;
mod sse_body;
mod streaming;
mod tree;

use std::path::PathBuf;
use std::process::Command;

/// The binary cargo built for this bench, in the bench's profile (`dist` from `bench/run.sh`),
/// so the in-process rows and the whole-process rows time the same code as is shipped.
pub const OURS: &str = env!("CARGO_BIN_EXE_corecoder");

fn main() {
    // As `src/main.rs` does, so the in-process rows use the allocator the binary uses.
    corecoder::app::process::tune_malloc();
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let run = |name: &str| wanted.is_empty() || wanted.iter().any(|w| w == name);
    let peers = Peers::find();
    let mut rows = Vec::new();
    if run("startup") {
        rows.push(agents::startup(&peers));
    }
    if run("session") {
        rows.extend(agents::session(&peers));
    }
    if run("size") {
        rows.push(inproc::binary_size());
    }
    if run("search") {
        rows.extend(search::grep_and_glob(&peers));
    }
    if run("sse") {
        rows.push(inproc::sse_throughput());
        rows.push(inproc::anthropic_sse_throughput());
        rows.push(responses_sse::throughput());
    }
    if run("parallel") {
        rows.push(agents::parallel_tools());
    }
    if run("streaming") {
        rows.push(streaming::early_start());
    }
    if run("compaction") {
        rows.push(inproc::compaction());
    }
    if run("shell") {
        rows.extend(inproc::shell_steps());
    }
    let report = markdown(&rows, &peers);
    println!("{report}");
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-results.md");
    if std::fs::write(&out, &report).is_ok() {
        eprintln!("written to {}", out.display());
    }
}

/// One line of the table.
pub struct Row {
    metric: String,
    ours: String,
    peers: Vec<(String, String)>,
    target: String,
    verdict: &'static str,
}

impl Row {
    pub fn new(metric: &str, ours: String, target: &str) -> Row {
        Row {
            metric: metric.to_string(),
            ours,
            peers: Vec::new(),
            target: target.to_string(),
            verdict: "–",
        }
    }

    /// A peer's figure and how many times slower (or bigger) it is than ours.
    pub fn peer(&mut self, figure: String, ratio: String) {
        self.peers.push((figure, ratio));
    }

    pub fn verdict(&mut self, met: bool) {
        self.verdict = if met { "met" } else { "**missed**" };
    }

    /// No honest figure can be taken for this row (the reason is in its module's doc).
    pub fn not_measured(&mut self) {
        self.verdict = "not measured";
    }
}

fn markdown(rows: &[Row], peers: &Peers) -> String {
    let mut out = String::from(
        "| metric | corecoder | peers (figure: theirs ÷ ours, > 1 means corecoder wins) | target | |\n",
    );
    out += "|---|---|---|---|---|\n";
    for row in rows {
        let peers: Vec<String> = (row.peers.iter())
            .map(|(f, r)| format!("{f}: {r}"))
            .collect();
        let peers = if peers.is_empty() {
            "–".to_string()
        } else {
            peers.join("; ")
        };
        out += &format!(
            "| {} | {} | {} | {} | {} |\n",
            row.metric, row.ours, peers, row.target, row.verdict
        );
    }
    out += &format!("\nPeers: {}\n", peers.versions.join("; "));
    for note in &peers.notes {
        out += &format!("\nNote: {note}\n");
    }
    out
}

/// The tools measured against, found on `PATH` or in `target/bench-venv`.
pub struct Peers {
    pub ripgrep: Option<PathBuf>,
    pub fd: Option<PathBuf>,
    /// CoreCoder's `corecoder` script and the venv's python (for calling its tools).
    pub corecoder: Option<PathBuf>,
    pub python: Option<PathBuf>,
    versions: Vec<String>,
    notes: Vec<String>,
}

impl Peers {
    fn find() -> Peers {
        let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-venv/bin");
        let mut peers = Peers {
            ripgrep: on_path("rg"),
            fd: on_path("fd").or_else(|| on_path("fdfind")),
            corecoder: Some(venv.join("corecoder")).filter(|p| p.exists()),
            python: Some(venv.join("python")).filter(|p| p.exists()),
            versions: vec![format!("corecoder {}", env!("CARGO_PKG_VERSION"))],
            notes: Vec::new(),
        };
        for (name, found, version_args) in [
            ("ripgrep", peers.ripgrep.clone(), vec!["--version"]),
            ("fd", peers.fd.clone(), vec!["--version"]),
            (
                "CoreCoder",
                peers.python.clone(),
                vec!["-m", "pip", "show", "corecoder"],
            ),
        ] {
            match found.and_then(|p| Command::new(p).args(version_args).output().ok()) {
                Some(out) => peers.versions.push(version_line(name, &out.stdout)),
                None => peers
                    .notes
                    .push(format!("{name} not found: its comparisons are skipped")),
            }
        }
        peers
    }
}

/// "ripgrep 13.0.0" from `rg --version`, "CoreCoder 0.8.0" from `pip show`.
fn version_line(name: &str, stdout: &[u8]) -> String {
    let text = String::from_utf8_lossy(stdout);
    let version = (text.lines())
        .find_map(|l| l.strip_prefix("Version: ").map(str::to_string))
        .or_else(|| {
            text.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .map(str::to_string)
        })
        .unwrap_or_default();
    format!("{name} {version}")
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}
