#!/usr/bin/env bash
# The persistent index on a generated bundle, whole programs, each figure a
# ratio against a baseline measured in the same run:
#   read    reading every markdown file once (find | xargs cat > /dev/null)
#   start   `okfbench --version` (process start-up)
#   stat    a stat of every markdown file (find -printf '%s %T@'): the
#           floor of any check that sees an edit to any file without a
#           file watcher
# Rows: generating the bundle; a cold load (`validate --no-index-cache`);
# writing the cache (`index`); `search` from a fresh process with the cache
# current (manifest and search sections only) and without a cache;
# `context` with the cache current (the whole bundle restored); `index`
# finding the cache current (every section checked, all restored); query
# latency p50/p99 over the question set in one process (`eval`). Times are
# wall seconds (best of --runs for the short ones) and, for the long ones,
# CPU seconds (user + system, all threads), which grow with the work alone
# where wall time also waits for the disk; memory is the peak resident set
# (/usr/bin/time) against the bundle's markdown bytes and against its size
# as `du` counts it (whole blocks, the issue's measure of a bundle).
#   scripts/bench-index.sh [--build DIR | --program PATH] [--concepts N] [--questions N] [--runs N] [--work DIR]
# --work keeps the bundle and the cache there (default: a temporary folder,
# removed at the end); --program times that okfbench instead of building one
# (so a long run is not disturbed by a rebuild). Needs cmake and GNU time (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
concepts=100000
questions=200
runs=5
work=""
program=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --concepts) concepts="$2"; shift 2 ;;
    --questions) questions="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --program) program="$2"; shift 2 ;;
    *) echo "usage: scripts/bench-index.sh [--build DIR | --program PATH] [--concepts N] [--questions N] [--runs N] [--work DIR]" >&2; exit 2 ;;
  esac
done
[[ -x /usr/bin/time ]] || { echo "bench-index: /usr/bin/time (GNU time) is missing; run scripts/setup.sh" >&2; exit 1; }

if [[ -n "$program" ]]; then
  okfbench="$(cd "$(dirname "$program")" && pwd)/$(basename "$program")"
else
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target okfbench >/dev/null
  okfbench="$(cd "$build" && pwd)/cli/okfbench"
fi

if [[ -z "$work" ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
bundle="$work/bundle"
cache="$work/cache"

# Runs a command with its output discarded; a failure stops the benchmark
# (naming the command and its stderr), except exit 1 from validate, which
# reports a non-conformant bundle with it.
run_quietly() {
  local err rc=0
  err=$(mktemp)
  "$@" >/dev/null 2>"$err" || rc=$?
  if [[ $rc -ne 0 ]] && ! [[ $rc -eq 1 && " $* " == *" validate "* ]]; then
    echo "bench-index: '$*' exited $rc:" >&2
    cat "$err" >&2
    rm -f "$err"
    exit 1
  fi
  rm -f "$err"
}

# "SECONDS KB CPU-SECONDS" of one run of a command.
timed() {
  local file
  file=$(mktemp)
  run_quietly /usr/bin/time -o "$file" -f "%e %M %U %S" "$@"
  awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }' "$file"
  rm -f "$file"
}

# Best wall time of $runs runs, in seconds (nanosecond clock).
best_of() {
  local best="" start end seconds
  for ((i = 0; i < runs; i++)); do
    start=$(date +%s%N)
    run_quietly "$@"
    end=$(date +%s%N)
    seconds=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.4f", ns / 1e9 }')
    if [[ -z "$best" ]] || awk -v a="$seconds" -v b="$best" 'BEGIN { exit !(a < b) }'; then best="$seconds"; fi
  done
  echo "$best"
}

read_all() { find "$bundle" -name '*.md' -print0 | xargs -0 cat >/dev/null; }
stat_all() { find "$bundle" -name '*.md' -printf '%s %T@\n' >/dev/null; }

if [[ ! -d "$bundle" ]]; then
  result=$(timed "$okfbench" gen --concepts "$concepts" --questions "$questions" --out "$bundle")
read -r gen_s gen_kb gen_cpu <<<"$result"
else
  gen_s="" gen_kb="" gen_cpu=""
fi
bytes=$(find "$bundle" -name '*.md' -printf '%s\n' | awk '{ s += $1 } END { print s }')
files=$(find "$bundle" -name '*.md' | wc -l)
# The bundle as `du` counts it (whole 4 KiB blocks, folders and the question
# set included): the measure of a bundle's size the issue's targets use.
du_kb=$(du -sk "$bundle" | cut -f1)
read_s=$(best_of read_all)
start_s=$(best_of "$okfbench" --version)
stat_s=$(best_of stat_all)
result=$(timed "$okfbench" validate --no-index-cache "$bundle")
read -r cold_s cold_kb cold_cpu <<<"$result"
rm -rf "$cache"
result=$(timed "$okfbench" index --index-cache "$cache" "$bundle")
read -r index_s index_kb index_cpu <<<"$result"
cache_bytes=$(find "$cache" -name '*.okfidx' -printf '%s\n' | awk '{ s += $1 } END { print s }')
query="revenue churn"
cached_s=$(best_of "$okfbench" search --index-cache "$cache" "$bundle" "$query")
result=$(timed "$okfbench" search --index-cache "$cache" "$bundle" "$query")
read -r _ cached_kb _ <<<"$result"
context_s=$(best_of "$okfbench" context --index-cache "$cache" "$bundle" "$query")
result=$(timed "$okfbench" context --index-cache "$cache" "$bundle" "$query")
read -r _ context_kb _ <<<"$result"
current_s=$(best_of "$okfbench" index --index-cache "$cache" "$bundle")
result=$(timed "$okfbench" search --no-index-cache "$bundle" "$query")
read -r uncached_s uncached_kb uncached_cpu <<<"$result"
latency=$("$okfbench" eval --index-cache "$cache" --bundle "$bundle" --questions "$bundle/questions.yaml" --json |
  awk '/"p50"/ { gsub(/[,]/, ""); p50 = $2 } /"p99"/ { gsub(/[,]/, ""); p99 = $2 } END { print p50, p99 }')
read -r p50 p99 <<<"$latency"

awk -v concepts="$concepts" -v files="$files" -v bytes="$bytes" -v gen_s="$gen_s" -v gen_kb="$gen_kb" \
  -v gen_cpu="$gen_cpu" -v cold_cpu="$cold_cpu" -v index_cpu="$index_cpu" -v uncached_cpu="$uncached_cpu" \
  -v read_s="$read_s" -v start_s="$start_s" -v cold_s="$cold_s" -v cold_kb="$cold_kb" -v index_s="$index_s" \
  -v index_kb="$index_kb" -v cache_bytes="$cache_bytes" -v cached_s="$cached_s" -v cached_kb="$cached_kb" \
  -v current_s="$current_s" -v uncached_s="$uncached_s" -v uncached_kb="$uncached_kb" -v p50="$p50" -v p99="$p99" \
  -v runs="$runs" -v stat_s="$stat_s" -v context_s="$context_s" -v context_kb="$context_kb" -v du_kb="$du_kb" 'BEGIN {
  mb = bytes / 1e6
  printf "bundle: %d concepts generated, %d markdown files, %.1f MB (du: %.1f MiB); cache file %.1f MB\n", concepts, files, mb, du_kb / 1024, cache_bytes / 1e6
  printf "baselines (best of %d): read every file %.3f s; okfbench --version %.4f s; stat every file %.3f s (%.1f x start)\n\n", runs, read_s, start_s, stat_s, stat_s / start_s
  printf "| step | seconds | / read | / start | / stat | CPU s per 1,000 concepts | peak memory / bundle bytes | peak memory / du |\n|---|--:|--:|--:|--:|--:|--:|--:|\n"
  k = concepts / 1000
  if (gen_s != "") printf "| gen | %.2f | %.1f | | | %.3f | %.2f | %.2f |\n", gen_s, gen_s / read_s, gen_cpu / k, gen_kb * 1024 / bytes, gen_kb / du_kb
  printf "| validate, no cache (cold load) | %.2f | %.1f | | | %.3f | %.2f | %.2f |\n", cold_s, cold_s / read_s, cold_cpu / k, cold_kb * 1024 / bytes, cold_kb / du_kb
  printf "| index (load, build, write the cache) | %.2f | %.1f | | | %.3f | %.2f | %.2f |\n", index_s, index_s / read_s, index_cpu / k, index_kb * 1024 / bytes, index_kb / du_kb
  printf "| search, no cache (load and index) | %.2f | %.1f | %.0f | | %.3f | %.2f | %.2f |\n", uncached_s, uncached_s / read_s, uncached_s / start_s, uncached_cpu / k, uncached_kb * 1024 / bytes, uncached_kb / du_kb
  printf "| search, cache current | %.3f | %.2f | %.1f | %.2f | | %.2f | %.2f |\n", cached_s, cached_s / read_s, cached_s / start_s, cached_s / stat_s, cached_kb * 1024 / bytes, cached_kb / du_kb
  printf "| context, cache current | %.3f | %.2f | %.0f | %.1f | | %.2f | %.2f |\n", context_s, context_s / read_s, context_s / start_s, context_s / stat_s, context_kb * 1024 / bytes, context_kb / du_kb
  printf "| index, cache current | %.3f | %.2f | %.0f | %.1f | | | |\n", current_s, current_s / read_s, current_s / start_s, current_s / stat_s
  printf "\nquery latency in one process (eval, cached bundle): p50 %.3f ms, p99 %.3f ms\n", p50, p99
}'
