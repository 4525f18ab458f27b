#!/usr/bin/env bash
# Installs okfbench's system dependencies with apt-get when any is missing.
# Idempotent and quiet when everything is already there.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ccache git
  libyaml-cpp-dev libcmark-gfm-dev libcmark-gfm-extensions-dev nlohmann-json3-dev
  libcurl4-openssl-dev libfmt-dev libcli11-dev libutf8proc-dev libsqlite3-dev
  libstemmer-dev libpcre2-dev libcpp-httplib-dev libssl-dev liburing-dev libxxhash-dev libzstd-dev zlib1g-dev zstd
  libgtest-dev libgmock-dev libbenchmark-dev
  # scripts/fuzz.sh: clang, libFuzzer's runtime, llvm-symbolizer for sanitizer stack traces
  clang libclang-rt-14-dev llvm
  # tests/install: an installed okfbench opens no file of the source or build tree
  strace
  # GNU time: the tests that bound a command's peak memory read it with %M
  time
)
# The HTML report's chart libraries come from npm at build time, and its test
# renders the report in headless Chromium. Checked by command, not package:
# a Node.js installed from elsewhere ships its own npm.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
[[ -x /usr/bin/chromium ]] || packages+=(chromium)
if [[ "${OKFBENCH_SETUP_EXTRA:-}" != "" ]]; then
  read -r -a extra <<<"$OKFBENCH_SETUP_EXTRA"
  packages+=("${extra[@]}")
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The MCP tests drive `okfbench mcp` with the official TypeScript SDK client,
# pinned by tests/mcp/package-lock.json; npm ci again when the lock file changed.
mcp_client="$(cd "$(dirname "$0")/../tests/mcp" && pwd)"
installed="$mcp_client/node_modules/.package-lock.json"
if [[ ! -f "$installed" || "$mcp_client/package-lock.json" -nt "$installed" ]]; then
  echo "setup: npm ci in tests/mcp (the MCP SDK client)" >&2
  (cd "$mcp_client" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
fi

# The proxy tests drive `okfbench proxy` with the official OpenAI and Anthropic
# SDK clients, pinned by tests/proxy/package-lock.json.
proxy_clients="$(cd "$(dirname "$0")/../tests/proxy" && pwd)"
installed="$proxy_clients/node_modules/.package-lock.json"
if [[ ! -f "$installed" || "$proxy_clients/package-lock.json" -nt "$installed" ]]; then
  echo "setup: npm ci in tests/proxy (the OpenAI and Anthropic SDK clients)" >&2
  (cd "$proxy_clients" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
fi
