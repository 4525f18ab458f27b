#!/usr/bin/env bash
# Token counting speed: okfbench's BPE against npm tiktoken (the Rust tiktoken
# compiled to WASM), on the same texts (every SciFact document, title + text),
# single-threaded, in 10^6 bytes per CPU second. Also checks that both give
# the same total token count.
#   scripts/bench-tokens.sh [--build DIR] [--encoding o200k_base|cl100k_base]
# Needs: cmake, node/npm (scripts/setup.sh installs them) and the reference
# data ($OKFBENCH_DATA, default ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
encoding=o200k_base
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --encoding) encoding="$2"; shift 2 ;;
    *) echo "usage: scripts/bench-tokens.sh [--build DIR] [--encoding o200k_base|cl100k_base]" >&2; exit 2 ;;
  esac
done
data="${OKFBENCH_DATA:-$(cd .. && pwd)/shared/data}"
corpus="$data/collections/scifact/corpus.jsonl"
[[ -f "$corpus" ]] || { echo "bench-tokens: $corpus not found; set OKFBENCH_DATA" >&2; exit 1; }

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DOKFBENCH_BUILD_BENCHMARKS=ON >/dev/null
cmake --build "$build" -j2 --target bench_tokens >/dev/null

# npm tiktoken from the committed lock file, in a scratch folder of the build tree.
npm_dir="$build/bench-tokens-npm"
mkdir -p "$npm_dir"
cp scripts/bench-tokens/package.json scripts/bench-tokens/package-lock.json scripts/bench-tokens/bench.mjs "$npm_dir/"
(cd "$npm_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)

ours_json="$build/bench-tokens-okfbench.json"
OKFBENCH_DATA="$data" "$build/tests/bench/bench_tokens" --benchmark_filter="BM_Count/$encoding\$" \
  --benchmark_repetitions=3 --benchmark_format=json >"$ours_json" 2>/dev/null
theirs=$(node "$npm_dir/bench.mjs" "$corpus" "$encoding" 5)

node - "$ours_json" "$theirs" "$encoding" <<'JS'
const fs = require("fs");
const [oursPath, theirsLine, encoding] = process.argv.slice(2);
const runs = JSON.parse(fs.readFileSync(oursPath, "utf8")).benchmarks.filter((b) => b.run_type === "iteration");
const ours = Math.max(...runs.map((b) => b.bytes_per_second)) / 1e6;
const oursTokens = runs[0].tokens;
const theirs = JSON.parse(theirsLine);
console.log(`texts: SciFact corpus, ${(theirs.bytes / 1e6).toFixed(2)} MB, ${encoding}`);
console.log(`okfbench BpeEncoding::count   ${ours.toFixed(1)} MB/s  (${oursTokens} tokens)`);
console.log(`npm tiktoken 1.0.22 (WASM)    ${theirs.mb_per_s.toFixed(1)} MB/s  (${theirs.tokens} tokens)`);
console.log(`ratio okfbench / tiktoken     ${(ours / theirs.mb_per_s).toFixed(2)}x`);
if (oursTokens !== theirs.tokens) {
  console.error(`bench-tokens: token totals differ (${oursTokens} vs ${theirs.tokens})`);
  process.exit(1);
}
JS
