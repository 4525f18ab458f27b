#!/usr/bin/env bash
# Set up, configure, build (-j2) and run every test.
#   scripts/test.sh              everything below, in order (what CI runs)
#   scripts/test.sh --sanitize   only the sanitized suite (step 3)
# 1. The Release build in build/ (warnings as errors under CI=true): every
#    test, the regression specs, the Debian package (scripts/check-deb.sh)
#    and the Slurm recipe on a single-node Slurm (scripts/test-slurm.sh).
# 2. Nothing else needs the Release build; the rest shares one clang build,
#    build-fuzz/, whose libraries carry AddressSanitizer,
#    UndefinedBehaviorSanitizer and libFuzzer's coverage hooks: the fuzz
#    targets and the test programs link the same instrumented libraries, so
#    the sanitized suite costs one compile of the tests rather than a third
#    build of everything.
# 3. The sanitized suite: every test again in build-fuzz/
#    (OKFBENCH_SANITIZED_SUITE=0 skips it).
# 4. Each libFuzzer target runs OKFBENCH_FUZZ_RUNS inputs (default 2000; 0
#    skips) from its committed seeds with a fixed seed (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

only_sanitized=""
[[ "${1:-}" == "--sanitize" ]] && only_sanitized=yes

scripts/setup.sh

data_given="${OKFBENCH_DATA:+yes}"
export OKFBENCH_DATA="${OKFBENCH_DATA:-$(cd .. && pwd)/shared/data}"

# Commands cache bundle indexes under $XDG_CACHE_HOME (retrieval/index_cache.hpp);
# what the tests run keeps them in the build folder, not in the user's cache.
run_suite() {
  local build=$1
  (export XDG_CACHE_HOME="$(cd "$build" && pwd)/tmp/xdg-cache" && cd "$build" && ctest --output-on-failure -j2)
}

if [[ -z "$only_sanitized" ]]; then
  args=(-DCMAKE_BUILD_TYPE=Release -DOKFBENCH_BUILD_TESTS=ON)
  [[ "${CI:-}" == "true" ]] && args+=(-DOKFBENCH_WERROR=ON)
  cmake -S . -B build "${args[@]}" >/dev/null
  cmake --build build -j2
  export XDG_CACHE_HOME="$PWD/build/tmp/xdg-cache"
  run_suite build
  # Without reference data the data tests skip (GoogleTest says so); the
  # regression specs skip the same way, unless OKFBENCH_DATA names a folder
  # that is not there, which is an error.
  if [[ -d "$OKFBENCH_DATA" || -n "$data_given" ]]; then
    scripts/regress.sh --verify --build build
  else
    echo "test.sh: [SKIP] regression specs: no reference data at $OKFBENCH_DATA (set OKFBENCH_DATA to run them)" >&2
  fi
  scripts/check-deb.sh --build build
  scripts/test-slurm.sh --build build
fi

if [[ -n "$only_sanitized" || "${OKFBENCH_SANITIZED_SUITE:-0}" != "0" ]]; then
  scripts/fuzz.sh --configure-only
  cmake --build build-fuzz -j2
  # Leaks fail a test as any other finding does; a finding stops the program
  # (-fno-sanitize-recover), so the test that ran it fails with the report.
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" run_suite build-fuzz
fi

fuzz_runs="${OKFBENCH_FUZZ_RUNS:-2000}"
if [[ -z "$only_sanitized" && "$fuzz_runs" != "0" ]]; then
  scripts/fuzz.sh --runs "$fuzz_runs"
fi
