#!/usr/bin/env bash
# Regression checks (Anserini style): converts each corpus named in
# datasets/regressions/*.yaml into the build tree once, searches it with the
# spec's settings and prints one [OK] or [FAIL] line per expected index
# statistic and score.
#   scripts/regress.sh [--verify] [--build DIR] [SPEC...]
#     --verify     exit 1 when any check fails
#     --build DIR  build directory holding cli/okfbench (default: build)
# Reference data: $OKFBENCH_DATA, else ../shared/data beside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."

verify=()
build=build
specs=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --verify) verify=(--verify); shift ;;
    --build) build="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) specs+=("$1"); shift ;;
  esac
done
[[ ${#specs[@]} -eq 0 ]] && specs=(datasets/regressions/*.yaml)

okfbench="$build/cli/okfbench"
if [[ ! -x "$okfbench" ]]; then
  echo "regress.sh: $okfbench not found: build first (cmake --build $build --target okfbench)" >&2
  exit 2
fi
data="${OKFBENCH_DATA:-$(cd .. && pwd)/shared/data}"
if [[ ! -d "$data" ]]; then
  echo "regress.sh: no reference data at $data: set OKFBENCH_DATA" >&2
  exit 2
fi

status=0
for spec in "${specs[@]}"; do
  "$okfbench" eval --spec "$spec" --data "$data" --work "$build/regress" "${verify[@]}" || status=1
done
exit "$status"
