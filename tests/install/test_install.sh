#!/usr/bin/env bash
# An installed okfbench runs anywhere: `cmake --install` into a temporary
# prefix, the prefix moved to another folder, then the default experiment run
# from there with another working directory. It must
#   - print the same headline table as the build tree (tests/golden/default_headline.md),
#   - have neither the source nor the build path compiled into it,
#   - open no file under the source or build tree while it runs (checked with strace),
#   - record the commit it was built from in the manifest, as --version prints it.
# The prefix lives in a temporary folder outside both trees (removed on
# success, kept for inspection on failure).
# Usage: test_install.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$(cd "$1" && pwd -P)
build=$(cd "$2" && pwd -P)
work=$(mktemp -d "${TMPDIR:-/tmp}/okfbench-install.XXXXXX")
work=$(cd "$work" && pwd -P)
case "$work/" in "$src/"* | "$build/"*) echo "test_install: the temporary folder $work is inside a tree; set TMPDIR" >&2; exit 1 ;; esac
mkdir -p "$work/elsewhere"

fail() { echo "test_install: FAIL: $* (files kept in $work)" >&2; exit 1; }
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" || fail "cmake --install failed (see $work/install.log)"
mv "$work/prefix" "$work/moved"
bin="$work/moved/bin/okfbench"
[[ -x "$bin" ]] || fail "$bin was not installed"
for f in experiments/default.yaml experiments/questions/demo.yaml bundles/demo/index.md tokenizers/o200k_base.tiktoken \
         tokenizers/cl100k_base.tiktoken tokenizers/encodings.json pricing.yaml regressions/cranfield.yaml; do
  [[ -f "$work/moved/share/okfbench/$f" ]] || fail "share/okfbench/$f was not installed"
done

for tree in "$src" "$build"; do
  if grep -qF "$tree" "$bin"; then fail "$bin contains the path $tree"; fi
done

# The run sees no variable that could point it back at a tree.
clean_env=(env -u OKFBENCH_HOME -u OKFBENCH_TOKENIZERS -u OKFBENCH_PRICING -u OKFBENCH_DATA -u XDG_CACHE_HOME HOME="$work/elsewhere")
cd "$work/elsewhere"
run=("$bin" run --out "$work/elsewhere/out" --progress quiet)
if strace -f -qq -o /dev/null true 2>/dev/null; then
  "${clean_env[@]}" strace -f -qq -e trace=%file -o "$work/trace.txt" "${run[@]}" >"$work/stdout.txt" 2>"$work/stderr.txt" ||
    fail "the installed okfbench run failed: $(cat "$work/stderr.txt")"
  for tree in "$src" "$build"; do
    if grep -F "\"$tree" "$work/trace.txt" >"$work/touched.txt"; then
      fail "the installed okfbench touched $tree: $(head -3 "$work/touched.txt")"
    fi
  done
  grep -qF "$work/moved/share/okfbench/tokenizers/o200k_base.tiktoken" "$work/trace.txt" ||
    fail "the trace shows no read of the moved prefix's tokenizers (is strace tracing the program?)"
else
  echo "test_install: strace cannot trace here (ptrace refused); checking the run without a file trace" >&2
  "${clean_env[@]}" "${run[@]}" >"$work/stdout.txt" 2>"$work/stderr.txt" ||
    fail "the installed okfbench run failed: $(cat "$work/stderr.txt")"
fi

headline=$(sed -n '/ trials planned: /q;p' "$work/stdout.txt")
expected=$(cat "$src/tests/golden/default_headline.md")
[[ "$headline" == "$expected" ]] || fail "the installed run's headline differs from tests/golden/default_headline.md:
$(diff <(echo "$expected") <(echo "$headline") | head -20)"

version=$("$bin" --version)
[[ "$version" =~ ^okfbench\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ ([0-9a-f]{40}(-dirty)?|unknown)\)$ ]] ||
  fail "--version printed '$version'"
sha=${BASH_REMATCH[1]}
if head=$(git -C "$src" rev-parse HEAD 2>/dev/null); then
  [[ "$sha" == "$head" || "$sha" == "$head-dirty" ]] || fail "--version names commit $sha, the source is at $head (rebuild?)"
fi
grep -qF "\"git_sha\": \"$sha\"" "$work/elsewhere/out/manifest.json" ||
  fail "manifest.json does not record git_sha $sha: $(grep git_sha "$work/elsewhere/out/manifest.json")"

# With OKFBENCH_HOME naming no folder, the error says so and what to do.
if "${clean_env[@]}" OKFBENCH_HOME="$work/nowhere" "$bin" tokens <<<"hi" >/dev/null 2>"$work/err.txt"; then
  fail "OKFBENCH_HOME=$work/nowhere was accepted"
fi
grep -qF "OKFBENCH_HOME=$work/nowhere is not a folder" "$work/err.txt" || fail "unexpected error: $(cat "$work/err.txt")"
rm -rf "$work"
echo "test_install: OK ($version)"
