#!/usr/bin/env bash
# Regenerates tests/fuzz/corpus/index_cache/ from real cache files: for each
# seed bundle, `okfbench index` writes its cache file, and the seed is what
# fuzz_index_cache reads (the bundle section's length as a u32, the bundle
# section, the search section). Run it whenever the index cache's format
# number changes (retrieval/index_cache.cpp, kFormat), then commit the seeds.
#   scripts/fuzz-seeds-index-cache.sh [--build DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
[[ "${1:-}" == "--build" ]] && build="$2"
okfbench="$build/cli/okfbench"
[[ -x "$okfbench" ]] || { echo "fuzz-seeds-index-cache: no $okfbench; build first" >&2; exit 1; }
out=tests/fuzz/corpus/index_cache
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# seed name, bundle folder, profile
seeds=(
  "demo datasets/bundles/demo okf"
  "sales tests/data/kb/sales okf"
  "lessons tests/data/lessons lessons"
  "vault tests/data/vault repo"
  "malformed tests/data/malformed okf"
)
for entry in "${seeds[@]}"; do
  read -r name folder profile <<<"$entry"
  cache="$work/$name"
  "$okfbench" index "$folder" --profile "$profile" --index-cache "$cache" >/dev/null 2>&1 || true
  file=$(find "$cache" -name '*.okfidx' | head -1)
  [[ -n "$file" ]] || { echo "fuzz-seeds-index-cache: okfbench index wrote no cache file for $folder" >&2; exit 1; }
  # Header (retrieval/index_cache.cpp): 24 bytes, then per section (manifest,
  # search, bundle) its u64 offset, u64 length and 16-byte checksum.
  python3 - "$file" "$out/$name" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
sections = [struct.unpack_from("<QQ", data, 24 + 32 * i) for i in range(3)]
(search_at, search_len), (bundle_at, bundle_len) = sections[1], sections[2]
with open(sys.argv[2], "wb") as seed:
    seed.write(struct.pack("<I", bundle_len))
    seed.write(data[bundle_at:bundle_at + bundle_len])
    seed.write(data[search_at:search_at + search_len])
PY
  echo "$out/$name: $(stat -c %s "$out/$name") bytes from $folder ($profile)"
done
