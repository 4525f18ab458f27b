#!/usr/bin/env bash
# Issue 17's forecast target (a benchmark, not a test), both sides in one go.
# For each scripted reference agent (agents/reference_agents.hpp) served by
# `okfbench mock-server --agent NAME` as if it were a provider:
#   1. it answers 20 generated questions (context and agent path) and
#      `okfbench calibrate` fits a sim profile to that run folder;
#   2. `okfbench run --dry-run --json` forecasts 100 other questions on the
#      same bundle with that profile (spec key forecast:), and with the
#      default profile;
#   3. the agent answers those 100 for real;
# then prints, per agent, forecast / actual for the total input tokens and
# for the agent-to-one-shot cost ratio, with the 80% interval. The target is
# a ratio within 0.85..1.15.
#
#   scripts/forecast-benchmark.sh [BUILD_DIR]   (default: build)
#
# Offline and deterministic: everything runs on 127.0.0.1; about a minute on
# 2 busy cores. Needs node (scripts/setup.sh installs it) to read the JSON.
source "$(dirname "$0")/reference-agents.sh" forecast-benchmark "${1:-}"

"$bin" gen --concepts 300 --seed 7 --questions 120 --out "$work/bundle" >/dev/null 2>&1
# The question file is one "  - id:" entry of four lines after a header: the
# first 20 questions calibrate, the other 100 are forecast and then run.
awk '/^  - id:/{n++} n==0 || n<=20' "$work/bundle/questions.yaml" >"$work/fit.yaml"
awk '/^  - id:/{n++} n==0 || n>20' "$work/bundle/questions.yaml" >"$work/check.yaml"

# spec FILE QUESTIONS PORT AGENT [EXTRA]: the agent on both paths, priced like gpt-4o.
spec() {
  cat >"$1" <<SPEC
name: forecast-$4
seed: 1
concurrency: 2
bundles:
  - {path: $work/bundle, name: gen300, questions: $2}
paths:
  context: {budget_tokens: 2000, k: 5, hops: 1}
  agent: {tools: [[browse, search, open, follow]], max_turns: 20}
models:
  - {name: "openai:$4", base_url: "http://127.0.0.1:$3/v1", price: {input_per_mtok: 2.5, output_per_mtok: 10}}
cache_models: [none]
${5:-}
SPEC
}

# totals FILE: "input agent_cost context_cost" of a run folder or a forecast JSON.
totals() {
  node -e '
    const fs = require("fs");
    const f = process.argv[1];
    let input = 0, cost = {agent: 0, context: 0};
    if (f.endsWith(".json")) {
      const j = JSON.parse(fs.readFileSync(f, "utf8"));
      input = j.total.input_tokens.value;
      for (const c of j.configurations) cost[c.configuration.split(" ")[0]] += c.usd.value;
    } else {
      for (const line of fs.readFileSync(f + "/results.jsonl", "utf8").split("\n")) {
        if (!line) continue;
        const r = JSON.parse(line);
        for (const t of r.turns) {
          input += t.input_tokens;
          cost[r.config.kind] += (t.input_tokens * 2.5 + t.output_tokens * 10) / 1e6;
        }
      }
    }
    console.log(input, cost.agent, cost.context);' "$1"
}

ratio() { node -e 'console.log((Number(process.argv[1]) / Number(process.argv[2])).toFixed(3))' "$1" "$2"; }

for agent in scout diver; do
  serve_agent "$agent"
  spec "$work/fit-$agent.yaml" "$work/fit.yaml" "$port" "$agent"
  "$bin" run "$work/fit-$agent.yaml" --out "$work/fit-$agent" --progress quiet >/dev/null 2>&1
  "$bin" calibrate "$work/fit-$agent" --out "$work/$agent.yaml" --bundle "$work/bundle" --holdout 0 >"$work/calibrate-$agent.txt"
  [[ -n "${KEEP_PROFILES:-}" ]] && cp "$work/$agent.yaml" "$work/calibrate-$agent.txt" "$KEEP_PROFILES/"
  spec "$work/check-$agent.yaml" "$work/check.yaml" "$port" "$agent" "forecast: {openai:$agent: $work/$agent.yaml}"
  spec "$work/default-$agent.yaml" "$work/check.yaml" "$port" "$agent"
  "$bin" run "$work/check-$agent.yaml" --dry-run --json >"$work/forecast-$agent.json" 2>/dev/null
  "$bin" run "$work/default-$agent.yaml" --dry-run --json >"$work/default-$agent.json" 2>/dev/null
  "$bin" run "$work/check-$agent.yaml" --out "$work/check-$agent" --progress quiet >/dev/null 2>&1
  stop_agent
  read -r real_in real_agent real_context < <(totals "$work/check-$agent")
  read -r fit_in fit_agent fit_context < <(totals "$work/forecast-$agent.json")
  read -r def_in def_agent def_context < <(totals "$work/default-$agent.json")
  interval=$(node -e 'const t = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).total.input_tokens;
    console.log(`[${t.low.toFixed(0)}..${t.high.toFixed(0)}]`)' "$work/forecast-$agent.json")
  real_ratio=$(ratio "$real_agent" "$real_context")
  fit_ratio=$(ratio "$fit_agent" "$fit_context")
  def_ratio=$(ratio "$def_agent" "$def_context")
  echo "== $agent: calibrated on 20 questions, forecast for the 100 others (both paths, 200 trials)"
  echo "total input tokens: actual $real_in, forecast $fit_in $interval (forecast/actual $(ratio "$fit_in" "$real_in")), default profile $def_in ($(ratio "$def_in" "$real_in"))"
  echo "agent/one-shot cost: actual $real_ratio, forecast $fit_ratio (forecast/actual $(ratio "$fit_ratio" "$real_ratio")), default profile $def_ratio ($(ratio "$def_ratio" "$real_ratio"))"
done
