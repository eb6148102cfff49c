#!/usr/bin/env python3
"""docs/compare.md's "How it compares" table, measured: `bench/compare.py [NAME ...]`.

For each program: start-up is the wall time of `PROGRAM --version` (median of 7 runs after one
warm-up), memory its peak resident size as `/usr/bin/time -f %M` reports it (median of 7 more
runs; time is a small C program, so the figure is the program's own: a child spawned straight
from Python would inherit Python's high-water mark at exec), lines the `wc -l` of its installed
source. NAME is
one of corecoder, CoreCoder, claude-code, codex, aider (default: all). Peers are installed on
first use under target/ (CoreCoder in target/bench-venv, shared with bench/run.sh; the others
under target/compare/), from PyPI or npm; one that cannot be installed is skipped with a note.
corecoder is the release build of `cargo build --profile dist`. Prints a markdown table.
"""

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "target"
RUNS = 7


def venv_tool(venv, package, script, source):
    """A PyPI package in its own venv: (executable, its source directory)."""
    python = venv / "bin" / "python"
    if not (venv / "bin" / script).exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", package], check=True)
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip()
    return venv / "bin" / script, Path(site) / source


def npm_tool(package, script):
    """An npm package under target/compare/npm: (executable, None: its source is not shipped)."""
    prefix = TARGET / "compare" / "npm"
    bin_path = prefix / "node_modules" / ".bin" / script
    if not bin_path.exists():
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix),
                        package], check=True, stdout=subprocess.DEVNULL)
    return bin_path, None


def corecoder():
    binary = TARGET / "dist" / "corecoder"
    if not binary.exists():
        subprocess.run(["cargo", "build", "--profile", "dist"], cwd=ROOT, check=True)
    return binary, ROOT / "src"


PROGRAMS = {
    "corecoder": corecoder,
    "CoreCoder": lambda: venv_tool(TARGET / "bench-venv", "corecoder", "corecoder", "corecoder"),
    "claude-code": lambda: npm_tool("@anthropic-ai/claude-code", "claude"),
    "codex": lambda: npm_tool("@openai/codex", "codex"),
    "aider": lambda: venv_tool(TARGET / "compare" / "aider-venv", "aider-chat", "aider", "aider"),
}


def timed_run(program):
    """Wall time of one `program --version`, output discarded."""
    started = time.perf_counter()
    done = subprocess.run([str(program), "--version"], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"{program} --version exited {done.returncode}")
    return time.perf_counter() - started


def peak_rss(program):
    """Peak RSS (bytes) of one `program --version`, from /usr/bin/time (in KiB)."""
    done = subprocess.run(["/usr/bin/time", "-f", "%M", str(program), "--version"],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=True)
    return int(done.stderr.strip().splitlines()[-1]) * 1024


def source_lines(source):
    """(all lines, lines above each file's `#[cfg(test)]`) of the source files under `source`."""
    if source is None:
        return None
    total = above = 0
    for path in sorted(source.rglob("*")):
        if path.suffix not in (".rs", ".py") or not path.is_file():
            continue
        lines = path.read_text(errors="replace").splitlines()
        total += len(lines)
        cut = next((n for n, l in enumerate(lines) if l.strip() == "#[cfg(test)]"), len(lines))
        above += cut
    return total, above


def measure(name):
    program, source = PROGRAMS[name]()
    version = subprocess.run([str(program), "--version"], capture_output=True,
                             text=True).stdout.strip().splitlines()[0]
    timed_run(program)  # warm-up
    startup = statistics.median(timed_run(program) for _ in range(RUNS))
    memory = statistics.median(peak_rss(program) for _ in range(RUNS))
    return version, startup, memory, source_lines(source)


def main():
    names = sys.argv[1:] or list(PROGRAMS)
    print("| | version | lines of code (above the unit tests) | start-up | memory at start-up |")
    print("|---|---|---|---|---|")
    for name in names:
        try:
            version, startup, memory, lines = measure(name)
        except (OSError, RuntimeError, subprocess.CalledProcessError) as e:
            print(f"note: {name} skipped: {e}", file=sys.stderr)
            continue
        shown = "— (no source installed)" if lines is None else f"{lines[0]:,} ({lines[1]:,})"
        print(f"| {name} | {version} | {shown} | {startup * 1000:.1f} ms | "
              f"{memory / 1e6:.1f} MB |")


if __name__ == "__main__":
    main()
