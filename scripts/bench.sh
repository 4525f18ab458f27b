#!/usr/bin/env bash
# Runs the benchmarks and writes tests/bench/RESULTS.md: the machine, then each
# figure as a ratio against a baseline measured in the same run wherever one
# exists (absolute times differ by 2x and more between machines, ratios much
# less), then every benchmark row as measured.
#   scripts/bench.sh [--quick | --full] [--build DIR] [--out FILE]
# --quick (the default, a few minutes on 2 cores): each Google Benchmark for
#   at least 0.1 s, the whole-program scripts with 3 runs each.
# --full: at least 1 s, 3 repetitions (medians), 5 runs, and the HTML
#   explorer timed in Chromium on 10,000 trials (scripts/bench-explorer.sh).
# Builds the programs of tests/bench with -DOKFBENCH_BUILD_BENCHMARKS=ON in DIR
# (default build/). Reads the reference data from $OKFBENCH_DATA (default
# ../shared/data); without it the benchmarks that need it are listed as not
# measured. Needs cmake, node and npm (scripts/setup.sh installs them).
# Run it on a machine as quiet as you can get (and `nice` it on a shared one):
# the page records the load average at the start and the end.
set -euo pipefail
cd "$(dirname "$0")/.."

usage="usage: scripts/bench.sh [--quick | --full] [--build DIR] [--out FILE]"
mode=quick
build=build
out=tests/bench/RESULTS.md
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) mode=quick; shift ;;
    --full) mode=full; shift ;;
    --build) build="${2:?--build needs a folder}"; shift 2 ;;
    --out) out="${2:?--out needs a file}"; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
command="scripts/bench.sh --$mode"
export OKFBENCH_DATA="${OKFBENCH_DATA:-$(cd .. && pwd)/shared/data}"

programs=(bench_bundle bench_tokens bench_search bench_context bench_agents bench_runner bench_measures bench_reports)
echo "bench: building ${programs[*]} and okfbench in $build" >&2
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DOKFBENCH_BUILD_BENCHMARKS=ON >/dev/null
cmake --build "$build" -j2 --target okfbench "${programs[@]}" >/dev/null

# The raw results stay in DIR/bench-raw, so the page can be rewritten from
# them (node scripts/bench/results.mjs DIR/bench-raw) without measuring again.
work="$build/bench-raw"
rm -rf "$work"
mkdir -p "$work"
started=$(date +%s)

# The machine and the build, recorded before anything runs.
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
{
  echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
  echo "cores=$(nproc)"
  echo "memory_kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
  echo "os=$(. /etc/os-release && echo "$PRETTY_NAME"), Linux $(uname -r)"
  echo "compiler=$("${cxx:-c++}" --version | head -1)"
  echo "build=$("$build/cli/okfbench" --version)"
  echo "build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")"
  echo "nice=$(nice)"
  echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "command=$command"
  echo "data=$OKFBENCH_DATA"
} >"$work/machine.txt"

if [[ $mode == quick ]]; then
  gbench=(--benchmark_min_time=0.1)
  runs=3
else
  gbench=(--benchmark_min_time=1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true)
  runs=5
fi

for program in "${programs[@]}"; do
  echo "bench: $program" >&2
  # A benchmark without its data reports an error row (or, for bench_search,
  # exits 1); the results page lists it as not measured.
  "$build/tests/bench/$program" "${gbench[@]}" --benchmark_out="$work/$program.json" \
    --benchmark_out_format=json >"$work/$program.txt" 2>&1 || echo "bench: $program exited $?" >&2
done

# The whole-program comparisons: each prints its own figures and ratio.
if [[ -d "$OKFBENCH_DATA/markdown/tldr-pages-en/pages" ]]; then
  echo "bench: scripts/bench-load.sh" >&2
  scripts/bench-load.sh --build "$build" --runs "$runs" >"$work/bench-load.txt" || echo "bench: bench-load.sh failed" >&2
fi
if [[ -f "$OKFBENCH_DATA/collections/scifact/corpus.jsonl" ]]; then
  echo "bench: scripts/bench-tokens.sh" >&2
  scripts/bench-tokens.sh --build "$build" >"$work/bench-tokens.txt" || echo "bench: bench-tokens.sh failed" >&2
fi
echo "bench: scripts/bench-index.sh (100,000 concepts)" >&2
scripts/bench-index.sh --build "$build" --runs "$runs" --concepts 100000 >"$work/bench-index.txt" ||
  echo "bench: bench-index.sh failed" >&2
if [[ $mode == full ]]; then
  echo "bench: scripts/bench-index.sh (1,000,000 concepts)" >&2
  scripts/bench-index.sh --build "$build" --runs 2 --concepts 1000000 >"$work/bench-index-1m.txt" ||
    echo "bench: bench-index.sh (1,000,000) failed" >&2
  echo "bench: scripts/bench-explorer.sh" >&2
  scripts/bench-explorer.sh --build "$build" >"$work/bench-explorer.txt" || echo "bench: bench-explorer.sh failed" >&2
fi

echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$work/machine.txt"
echo "seconds=$(($(date +%s) - started))" >>"$work/machine.txt"
mkdir -p "$(dirname "$out")"
node scripts/bench/results.mjs "$work" >"$out.tmp"
mv "$out.tmp" "$out"
echo "bench: wrote $out" >&2
