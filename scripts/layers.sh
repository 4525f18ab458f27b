#!/usr/bin/env bash
# The layer picture of README.md (between its "begin layers" and "end layers"
# markers) is <build>/layers.txt, which CMake writes from the libraries' link
# lists (CMakeLists.txt).
#   scripts/layers.sh [--build DIR]           rewrites the picture in README.md
#   scripts/layers.sh --check [--build DIR]   exits 1 when README.md shows another picture
set -euo pipefail
cd "$(dirname "$0")/.."
check=no build=build
while [[ $# -gt 0 ]]; do
  case "$1" in
    --check) check=yes; shift ;;
    --build) build="$2"; shift 2 ;;
    *) echo "layers.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -f "$build/layers.txt" ]] || { echo "layers.sh: $build/layers.txt is missing: configure with cmake first" >&2; exit 1; }
shown() { sed -n '/<!-- begin layers/,/<!-- end layers -->/p' README.md | sed '1,2d;$d' | sed '$d'; }
if [[ "$check" == yes ]]; then
  diff -u "$build/layers.txt" <(shown) || { echo "README.md's layer picture is stale: run scripts/layers.sh" >&2; exit 1; }
  exit 0
fi
python3 - "$build/layers.txt" <<'PY'
import re, sys
picture = open(sys.argv[1]).read()
text = open('README.md').read()
new = re.sub(r'(<!-- begin layers[^\n]*\n```\n).*?(```\n<!-- end layers -->)', lambda m: m.group(1) + picture + m.group(2), text, flags=re.S)
if new == text and picture not in text:
    sys.exit('layers.sh: README.md has no begin/end layers markers')
open('README.md', 'w').write(new)
PY
