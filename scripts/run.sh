#!/usr/bin/env bash
# Set up, build, and run okfbench's default experiment (or any okfbench command given as arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target okfbench >/dev/null
export OKFBENCH_DATA="${OKFBENCH_DATA:-$(cd .. && pwd)/shared/data}"
if [[ $# -eq 0 ]]; then
  exec build/cli/okfbench run
fi
exec build/cli/okfbench "$@"
