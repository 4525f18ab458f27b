#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang in build-fuzz/ and runs
# each for SECONDS (default 60), one after another, single process.
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 600 spec set
#   scripts/fuzz.sh --runs N [TARGET...]      N inputs per target from the committed
#                                             seeds with a fixed seed (what
#                                             scripts/test.sh runs)
#   scripts/fuzz.sh --configure-only          configure build-fuzz/ and stop (scripts/test.sh
#                                             builds the sanitized suite there)
# Each target starts from a working copy of its seed corpus,
# build-fuzz/corpus/<target>/ (kept between runs, so inputs found earlier are
# reused; the committed tests/fuzz/corpus/ is never written). A crash, leak,
# timeout or out-of-memory input is saved under build-fuzz/crashes/<target>/
# and the script exits 1 naming it; the full output of each target is in
# build-fuzz/logs/<target>.log.
set -euo pipefail
cd "$(dirname "$0")/.."

usage="usage: scripts/fuzz.sh [SECONDS | --runs N] [TARGET...]"
# A timed run explores from the kept working corpus and finds new inputs; a
# counted run starts from the committed seeds alone with libFuzzer's seed
# fixed, so CI replays every seed and then mutates the same way whatever the
# machine's speed, rather than failing by the luck of one machine.
limit=()
configure_only=""
if [[ "${1:-}" == "--configure-only" ]]; then
  configure_only=yes
elif [[ "${1:-}" == "--runs" ]]; then
  runs="${2:-}"
  [[ "$runs" =~ ^[0-9]+$ && "$runs" -gt 0 ]] || { echo "$usage" >&2; exit 2; }
  limit=(-runs="$runs" -seed=1)
  shift 2
else
  seconds="${1:-60}"
  [[ "$seconds" =~ ^[0-9]+$ && "$seconds" -gt 0 ]] || { echo "$usage" >&2; exit 2; }
  limit=(-max_total_time="$seconds")
  shift $(( $# > 0 ? 1 : 0 ))
fi

scripts/setup.sh

build=build-fuzz
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for source in tests/fuzz/fuzz_*.cpp; do
    name=$(basename "$source" .cpp)
    targets+=("${name#fuzz_}")
  done
fi

# The fuzz build is never the same folder as the main build: every library
# is compiled again with libFuzzer's coverage hooks and the sanitizers. The
# tests are configured too (only built when asked for), so the sanitized
# suite of scripts/test.sh links the same instrumented libraries.
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DOKFBENCH_BUILD_FUZZERS=ON \
  -DOKFBENCH_BUILD_TESTS=ON >/dev/null
[[ -n "$configure_only" ]] && exit 0
cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
mkdir -p "$build/logs"
failed=()
for target in "${targets[@]}"; do
  seeds=tests/fuzz/corpus/$target
  work=$build/corpus/$target
  crashes=$build/crashes/$target
  log=$build/logs/$target.log
  [[ -d "$seeds" ]] || { echo "fuzz.sh: no seed corpus $seeds" >&2; exit 2; }
  [[ -n "${runs:-}" ]] && rm -rf "$work"
  mkdir -p "$work" "$crashes"
  cp -n "$seeds"/* "$work"/
  before=$(find "$crashes" -type f | sort)
  # The targets' scratch folders (fuzz_support.hpp) go here: libFuzzer ends
  # a counted run without the exit handlers that would remove them.
  scratch=$build/scratch/$target
  rm -rf "$scratch" && mkdir -p "$scratch"
  if TMPDIR="$PWD/$scratch" "$build/tests/fuzz/fuzz_$target" "$work" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1; then
    echo "fuzz $target: $(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)"
  else
    new=$(comm -13 <(echo "$before") <(find "$crashes" -type f | sort) | tr '\n' ' ')
    echo "fuzz $target: FAILED; input saved as ${new:-(none)}; output in $log" >&2
    grep -E 'ERROR|SUMMARY|fuzz invariant|terminate|what\(\)' "$log" | head -5 >&2 || true
    failed+=("$target")
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: ${#failed[@]} target(s) failed: ${failed[*]}; reproduce with $build/tests/fuzz/fuzz_TARGET INPUT" >&2
  exit 1
fi
