#!/bin/sh
# Fuzz every target for SECONDS each (default 120), two at a time (one per core), then print
# each target's executions and crashes from AFL++'s own fuzzer_stats. Build first:
#   cargo afl build --release --features afl
set -u
cd "$(dirname "$0")"
seconds=${1:-120}
export AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
fuzz() {
    cargo afl fuzz -V "$seconds" -i "seeds/$1" -o "out/$1" "target/release/$1" > "out/$1.log" 2>&1
}
mkdir -p out
set -- sse cd split danger edit session hooks mcp_config mcp_wire
while [ $# -gt 0 ]; do
    fuzz "$1" &
    [ $# -gt 1 ] && fuzz "$2" &
    wait
    shift; [ $# -gt 0 ] && shift
done
for stats in out/*/default/fuzzer_stats; do
    target=${stats#out/}; target=${target%%/*}
    awk -v t="$target" '/^(run_time|execs_done|execs_per_sec|saved_crashes|saved_hangs|corpus_count) /{v[$1]=$3}
        END{printf "%-11s %5ss %10s execs %8s/s  crashes %s  hangs %s  corpus %s\n", t,
            v["run_time"], v["execs_done"], v["execs_per_sec"], v["saved_crashes"], v["saved_hangs"], v["corpus_count"]}' "$stats"
done
