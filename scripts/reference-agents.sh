# Sourced by scripts/calibration-benchmark.sh and scripts/forecast-benchmark.sh
# (not run on its own): finds okfbench in BUILD_DIR, makes a temporary work
# folder removed on exit, and serves a scripted reference agent
# (agents/reference_agents.hpp) over `okfbench mock-server` on 127.0.0.1.
#   source "$(dirname "$0")/reference-agents.sh" NAME [BUILD_DIR]
# sets here, bin and work, and defines serve_agent AGENT (sets port) and
# stop_agent. Everything stays offline and deterministic.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${2:-$here/build}
bin=$build/cli/okfbench
[[ -x $bin ]] || bin=$build/okfbench
[[ -x $bin ]] || { echo "$1: no okfbench in $build; build it first" >&2; exit 2; }
work=$(mktemp -d)
pid=""
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export OPENAI_API_KEY=sk-local-reference

# serve_agent AGENT: mock-server answering as AGENT on a free port; sets port.
serve_agent() {
  : >"$work/port"
  "$bin" mock-server --port 0 --agent "$1" >"$work/port" 2>"$work/server.log" &
  pid=$!
  for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.1; done
  [[ -s $work/port ]] || { echo "mock-server --agent $1 did not start: $(cat "$work/server.log")" >&2; exit 1; }
  port=$(head -1 "$work/port")
}

stop_agent() {
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
}
