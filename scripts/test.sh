#!/usr/bin/env bash
# Set up, configure, build (-j2) and run every test.
#   scripts/test.sh              Release build in build/, warnings as errors under CI=true
#   scripts/test.sh --sanitize   the same suite under address,undefined sanitizers (build-sanitize/)
# Then (not with --sanitize) scripts/check-deb.sh builds and checks the Debian package,
# scripts/test-slurm.sh runs the Slurm recipe on a single-node Slurm, and each libFuzzer
# target runs OKFBENCH_FUZZ_RUNS inputs (default 2000; 0 skips) from its committed seeds
# with a fixed seed, through scripts/fuzz.sh, which builds them with clang in build-fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
[[ "${1:-}" == "--sanitize" ]] && sanitize="address,undefined"

scripts/setup.sh

build=build
args=(-DCMAKE_BUILD_TYPE=Release -DOKFBENCH_BUILD_TESTS=ON)
if [[ -n "$sanitize" ]]; then
  build=build-sanitize
  args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DOKFBENCH_SANITIZE="$sanitize" -DOKFBENCH_BUILD_TESTS=ON)
fi
[[ "${CI:-}" == "true" ]] && args+=(-DOKFBENCH_WERROR=ON)

cmake -S . -B "$build" "${args[@]}" >/dev/null
cmake --build "$build" -j2
# Commands cache bundle indexes under $XDG_CACHE_HOME (retrieval/index_cache.hpp);
# what the tests run keeps them in the build folder, not in the user's cache.
export XDG_CACHE_HOME="$(cd "$build" && pwd)/tmp/xdg-cache"
data_given="${OKFBENCH_DATA:+yes}"
export OKFBENCH_DATA="${OKFBENCH_DATA:-$(cd .. && pwd)/shared/data}"
(cd "$build" && ctest --output-on-failure -j2)
# Without reference data the data tests skip (GoogleTest says so); the
# regression specs skip the same way, unless OKFBENCH_DATA names a folder
# that is not there, which is an error.
if [[ -d "$OKFBENCH_DATA" || -n "$data_given" ]]; then
  scripts/regress.sh --verify --build "$build"
else
  echo "test.sh: [SKIP] regression specs: no reference data at $OKFBENCH_DATA (set OKFBENCH_DATA to run them)" >&2
fi
# The Debian package: contents, dependencies, and a run unpacked in a scratch root.
# Then the Slurm recipe on a single-node Slurm started here (skipped where Slurm cannot be installed).
if [[ -z "$sanitize" ]]; then
  scripts/check-deb.sh --build "$build"
  scripts/test-slurm.sh --build "$build"
fi
fuzz_runs="${OKFBENCH_FUZZ_RUNS:-2000}"
if [[ -z "$sanitize" && "$fuzz_runs" != "0" ]]; then
  scripts/fuzz.sh --runs "$fuzz_runs"
fi
