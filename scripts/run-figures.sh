#!/usr/bin/env bash
# The figures of a real run that the documentation shows: README.md's output
# of scripts/run.sh (verdict lines and headline table) and the verdict line
# quoted in reports/docs/headline.md, each between "begin run-output" and
# "end run-output" markers. They come from one run of the default experiment
# with sim, which is deterministic; the elapsed time and the run folder
# differ per run and are left out.
#   scripts/run-figures.sh [--build DIR]           runs it and rewrites the blocks
#   scripts/run-figures.sh --check [--build DIR]   exits 1 when a block shows other figures
set -euo pipefail
cd "$(dirname "$0")/.."
check=no build=build
while [[ $# -gt 0 ]]; do
  case "$1" in
    --check) check=yes; shift ;;
    --build) build="$2"; shift 2 ;;
    *) echo "run-figures.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
program="$build/cli/okfbench"
[[ -x "$program" ]] || { echo "run-figures.sh: $program is missing: build the okfbench target first" >&2; exit 1; }
build="$(cd "$build" && pwd)"
scratch="$(mktemp -d "$build/run-figures.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
# Generated bundles are kept in the build folder's cache, as the tests keep them.
XDG_CACHE_HOME="$build/tmp/xdg-cache" "$program" run --out "$scratch/run" >"$scratch/stdout" 2>"$scratch/stderr" ||
  { cat "$scratch/stderr" >&2; echo "run-figures.sh: the default experiment failed" >&2; exit 1; }
python3 - "$scratch/stdout" "$check" <<'PY'
import re, sys
stdout_path, check = sys.argv[1], sys.argv[2] == 'yes'
lines = open(stdout_path).read().split('\n')
verdicts = [l for l in lines if l.startswith('- demo: ')]
table = [l for l in lines if l.startswith('|')]
tail = []
for l in lines:
    if l.startswith('Cost: ') or re.match(r'^\d[\d,]* trials planned', l):
        tail.append(re.sub(r'; [0-9.]+ s$', '', l))
    elif l.startswith('wrote '):
        tail.append(re.sub(r' to \S+$', ' to ~/.cache/okfbench/runs/<UTC time>', l))
if not verdicts or not table or len(tail) != 3:
    sys.exit('run-figures.sh: the run printed no demo verdict, table or summary; its stdout was:\n' + '\n'.join(lines))
readme = '```\n## Verdict\n\n' + '\n'.join(verdicts) + '\n```\n\n' + '\n'.join(table) + '\n\n```\n' + '\n\n'.join(tail[:2]) + '\n' + tail[2] + '\n```\n'
search_open = [v for v in verdicts if v.startswith('- demo: agent search+open ')]
if not search_open:
    sys.exit('run-figures.sh: no verdict line for the demo bundle\'s search+open configuration')
headline = 'A line reads:\n\n```\n' + search_open[0][2:] + '\n```\n'
stale = []
for path, block in (('README.md', readme), ('reports/docs/headline.md', headline)):
    text = open(path).read()
    pattern = r'(<!-- begin run-output[^\n]*-->\n).*?(<!-- end run-output -->)'
    if not re.search(pattern, text, flags=re.S):
        sys.exit(f'run-figures.sh: {path} has no begin/end run-output markers')
    new = re.sub(pattern, lambda m: m.group(1) + block + m.group(2), text, count=1, flags=re.S)
    if new != text:
        if check:
            stale.append(path)
        else:
            open(path, 'w').write(new)
            print(f'run-figures.sh: rewrote {path}')
if stale:
    sys.exit('run-figures.sh: the run figures in ' + ' and '.join(stale) + ' are stale: run scripts/run-figures.sh')
PY
