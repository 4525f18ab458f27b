#!/usr/bin/env bash
# Builds the Debian package (cpack -G DEB) from a built tree and checks it:
# its contents (the program, the default experiment and its data), its
# dependencies (the runtime library packages, as dpkg-shlibdeps found them),
# and that the program unpacked into a scratch root runs the default
# experiment's dry run from there.
#   scripts/check-deb.sh [--build DIR]     (default build/)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
[[ "${1:-}" == "--build" ]] && build=${2:?--build needs a folder}
[[ -x "$build/cli/okfbench" ]] || { echo "check-deb: $build/cli/okfbench is not built" >&2; exit 1; }

fail() { echo "check-deb: FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB >cpack.log 2>&1) || fail "cpack failed (see $build/cpack.log)"
shopt -s nullglob
debs=("$build"/okfbench_*.deb)
[[ ${#debs[@]} -eq 1 ]] || fail "expected one okfbench_*.deb in $build, found ${#debs[@]}"
deb=${debs[0]}

contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/okfbench ./usr/share/okfbench/experiments/default.yaml ./usr/share/okfbench/bundles/demo/index.md \
         ./usr/share/okfbench/tokenizers/o200k_base.tiktoken ./usr/share/okfbench/pricing.yaml \
         ./usr/share/doc/okfbench/copyright; do
  grep -qE " $f\$" <<<"$contents" || fail "$deb has no $f"
done

depends=$(dpkg-deb -f "$deb" Depends)
for lib in libyaml-cpp libcurl libsqlite3 libcmark-gfm libutf8proc libpcre2-8 liburing libstemmer libcpp-httplib libssl libfmt libxxhash0 libzstd zlib1g; do
  grep -q "$lib" <<<"$depends" || fail "$deb does not depend on $lib (Depends: $depends)"
done

root=$(mktemp -d "${TMPDIR:-/tmp}/okfbench-deb.XXXXXX")
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$deb" "$root"
(cd "$root" && env -u OKFBENCH_HOME "$root/usr/bin/okfbench" run --dry-run >"$root/dry-run.txt" 2>"$root/dry-run.err") ||
  fail "the unpacked okfbench could not plan the default experiment: $(tail -3 "$root/dry-run.err")"
# The forecast's total row: the 240 trials of the default experiment and their input tokens.
grep -Eq '^ *total +240 +[0-9,]+ ' "$root/dry-run.txt" || fail "unexpected dry run: $(tail -3 "$root/dry-run.txt")"
echo "check-deb: OK $(basename "$deb") ($(dpkg-deb -f "$deb" Installed-Size) KiB installed)"
echo "check-deb: Depends: $depends"
