#!/usr/bin/env bash
# Whole-program bundle loading: `okfbench validate --profile repo` on the tldr
# pages (process start, walk, read, parse, links, report) against Node.js only
# walking the same folder and reading every file into a string. Best of 5 wall
# times each; prints pages/s and the ratio.
#   scripts/bench-load.sh [--build DIR] [--runs N] [FOLDER]
# Needs: cmake, node (scripts/setup.sh installs them) and the reference data
# ($OKFBENCH_DATA, default ../shared/data) unless FOLDER is given.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
runs=5
folder=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    -*) echo "usage: scripts/bench-load.sh [--build DIR] [--runs N] [FOLDER]" >&2; exit 2 ;;
    *) folder="$1"; shift ;;
  esac
done
data="${OKFBENCH_DATA:-$(cd .. && pwd)/shared/data}"
folder="${folder:-$data/markdown/tldr-pages-en/pages}"
[[ -d "$folder" ]] || { echo "bench-load: $folder not found; set OKFBENCH_DATA or pass a folder" >&2; exit 1; }

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target okfbench >/dev/null
okfbench="$build/cli/okfbench"

# Best wall time of $runs runs of a command, in seconds (stdout discarded;
# validate exits 1 for a non-conformant bundle, which is still a full load).
best_of() {
  local best="" start end seconds
  for ((i = 0; i < runs; i++)); do
    start=$(date +%s%N)
    "$@" >/dev/null || [[ $? -eq 1 ]]
    end=$(date +%s%N)
    seconds=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.4f", ns / 1e9 }')
    if [[ -z "$best" ]] || awk -v a="$seconds" -v b="$best" 'BEGIN { exit !(a < b) }'; then best="$seconds"; fi
  done
  echo "$best"
}

counts=$(node scripts/bench-load/read-all.mjs "$folder")
files=$(node -e 'console.log(JSON.parse(process.argv[1]).files)' "$counts")
concepts=$("$okfbench" validate --profile repo --json "$folder" | node -e \
  'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).concepts))' || true)

ours=$(best_of "$okfbench" validate --profile repo "$folder")
theirs=$(best_of node scripts/bench-load/read-all.mjs "$folder")
awk -v files="$files" -v concepts="$concepts" -v ours="$ours" -v theirs="$theirs" -v folder="$folder" 'BEGIN {
  printf "folder: %s (%d markdown files, %s concepts loaded)\n", folder, files, concepts
  printf "okfbench validate --profile repo   %.3f s   %8.0f pages/s (whole program)\n", ours, concepts / ours
  printf "node: walk + readFileSync only      %.3f s   %8.0f files/s\n", theirs, files / theirs
  printf "ratio node / okfbench              %.2fx\n", theirs / ours
}'
