#!/bin/sh
# The benchmark suite in one command: find or install the peers (ripgrep, fd, CoreCoder in a
# venv under target/), then run `cargo bench --profile dist --bench bench` (the shipped build),
# which prints the table and writes target/bench-results.md. A peer that cannot be installed is
# skipped with a note by the bench itself. Arguments pass through as section names, e.g.
# `bench/run.sh search sse`. `bench/run.sh prompt-cache [--rows ...]` runs issue 19's rows
# instead (bench/prompt_cache.py: a scripted model in Python that records every request).
# `bench/run.sh peers [--agents ...] [--reps N]` runs issue 32's peer task (bench/peers.py:
# corecoder, pi, Codex CLI, Claude Code and CoreCoder 0.8 on one scripted 20-turn task, each in
# a network namespace with only loopback; the npm peers install pinned under target/peers/).
set -u
cd "$(dirname "$0")/.."

if ! command -v rg >/dev/null || ! { command -v fd || command -v fdfind; } >/dev/null; then
    if command -v apt-get >/dev/null; then
        apt-get update -qq && apt-get install -y -qq ripgrep fd-find >/dev/null \
            || echo "note: could not install ripgrep/fd with apt-get" >&2
    fi
fi
if [ ! -x target/bench-venv/bin/corecoder ]; then
    { python3 -m venv target/bench-venv && target/bench-venv/bin/pip install -q corecoder; } \
        || echo "note: could not install CoreCoder from PyPI" >&2
fi
if [ "${1:-}" = prompt-cache ]; then
    shift
    cargo build -q --profile dist || exit 1
    exec python3 bench/prompt_cache.py --corecoder target/dist/corecoder "$@"
fi
if [ "${1:-}" = peers ]; then
    shift
    cargo build -q --profile dist || exit 1
    exec python3 bench/peers.py "$@"
fi
# `--profile dist`: every row, in process or not, times the code that is shipped.
exec cargo bench --profile dist --bench bench -- "$@"
