#!/usr/bin/env bash
# Times report.html's explorer on a run of TRIALS trials (default 10,000) in
# Debian's Chromium: the default experiment's 240 trials are run once, their
# records and transcripts repeated (each copy its own trial key and repeat
# index) up to TRIALS, `okfbench report --format html` builds the page (every
# trial's conversation embedded), and
# tests/reports/html_explorer.js measures it inside the page: milliseconds
# from navigation start to the filled trial table, for a path filter, a text
# search and a sort over every trial, and to open the last trial's
# conversation. Prints the page's size and the JSON of the figures.
#   scripts/bench-explorer.sh [--build DIR] [TRIALS]
# Needs: a build (cmake, node and npm: scripts/setup.sh), /usr/bin/chromium and zstd.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
trials=10000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    -*) echo "usage: scripts/bench-explorer.sh [--build DIR] [TRIALS]" >&2; exit 2 ;;
    *) trials="$1"; shift ;;
  esac
done
[[ -x /usr/bin/chromium ]] || { echo "bench-explorer: /usr/bin/chromium is missing (scripts/setup.sh installs it)" >&2; exit 1; }
command -v zstd >/dev/null || { echo "bench-explorer: zstd is missing (scripts/setup.sh installs it)" >&2; exit 1; }

cmake --build "$build" -j2 --target okfbench >/dev/null
okfbench="$build/cli/okfbench"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$okfbench" run --out "$work/run" --progress quiet >/dev/null
mkdir "$work/big"
cp "$work/run/manifest.json" "$work/big/"
node -e '
const fs = require("fs");
const [from, to, wanted] = process.argv.slice(1);
const lines = fs.readFileSync(from, "utf8").split("\n").filter((l) => l.trim());
const out = [];
for (let i = 0; i < Number(wanted); i++) {
  const r = JSON.parse(lines[i % lines.length]);
  const copy = Math.floor(i / lines.length);
  r.trial_key = `${r.trial_key}-${copy}`;
  r.config.repeat = copy;
  out.push(JSON.stringify(r));
}
fs.writeFileSync(to, out.join("\n") + "\n");
' "$work/run/results.jsonl" "$work/big/results.jsonl" "$trials"
# The transcripts, copied the same way: each prompt once, then each trial's
# copies under the keys of the records above (one zstd frame holds them all).
zstd -dcq "$work/run/transcripts.jsonl.zst" | node -e '
const fs = require("fs");
const keysOf = (file) => fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l).trial_key);
const [original, copies] = process.argv.slice(1).map(keysOf);
const lines = fs.readFileSync(0, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
const trials = new Map(lines.filter((j) => j.type === "trial").map((j) => [j.trial_key, j]));
const out = lines.filter((j) => j.type === "prompt").map((j) => JSON.stringify(j));
copies.forEach((key, i) => {
  const t = trials.get(original[i % original.length]);
  if (t) out.push(JSON.stringify(Object.assign({}, t, {trial_key: key})));
});
process.stdout.write(out.join("\n") + "\n");
' "$work/run/results.jsonl" "$work/big/results.jsonl" | zstd -q -o "$work/big/transcripts.jsonl.zst"
TIMEFORMAT="okfbench report --format html of $trials trials: %R s"
time "$okfbench" report "$work/big" --format html >/dev/null 2>&1
echo "report.html of $trials trials: $(du -h "$work/big/report.html" | cut -f1); transcripts.jsonl.zst: $(du -h "$work/big/transcripts.jsonl.zst" | cut -f1)"
NODE_PATH="$build/reports/web/node_modules" node tests/reports/html_explorer.js measure "$work/big/report.html"
