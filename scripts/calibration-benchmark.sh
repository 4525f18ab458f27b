#!/usr/bin/env bash
# Issue 17's benchmark (not a test): for each scripted reference agent
# (agents/reference_agents.hpp), record it answering 120 generated questions
# through the mock server, calibrate a sim profile on 20 of them and replay
# the other 100 with the fitted sim; prints, per agent, the total input
# tokens the agent spent on those 100 against the fitted sim's, and the same
# for the default sim. The target is within +-15%.
#
#   scripts/calibration-benchmark.sh [BUILD_DIR]   (default: build)
#
# Offline and deterministic: everything runs on 127.0.0.1 against
# `okfbench mock-server --agent NAME`; about 25 s on 2 busy cores.
source "$(dirname "$0")/reference-agents.sh" calibration-benchmark "${1:-}"

"$bin" gen --concepts 300 --seed 7 --questions 120 --out "$work/bundle" >/dev/null
for agent in scout diver; do
  serve_agent "$agent"
  cat >"$work/$agent.yaml" <<SPEC
name: calibrate-$agent
seed: 1
concurrency: 2
bundles:
  - {path: $work/bundle, name: gen300}
paths:
  context: {budget_tokens: 2000, k: 5, hops: 1}
  agent: {tools: [[browse, search, open, follow]], max_turns: 20}
models:
  - {name: "openai:$agent", base_url: "http://127.0.0.1:$port/v1", price: {input_per_mtok: 1, output_per_mtok: 1}}
SPEC
  "$bin" run "$work/$agent.yaml" --out "$work/run-$agent" \
    --record "$work/rec-$agent" --progress quiet >/dev/null
  stop_agent
  # 120 questions, 100 held out: a share of 0.83334 holds out exactly 100 (cli/cmd_calibrate.cpp).
  echo "== $agent: calibrated on 20 questions, checked on the 100 others"
  "$bin" calibrate "$work/rec-$agent" --out "$work/$agent-profile.yaml" --bundle "$work/bundle" --holdout 0.83334 |
    grep -E "^(parameter|searches|opens|share|terms|follow|repeated|browse|search k|answer|context answer|tool turns|model calls|  per_message|  mean|total)"
  echo "default sim on the same 100 questions:"
  : >"$work/default.yaml"
  "$bin" calibrate "$work/rec-$agent" --out "$work/unused.yaml" --bundle "$work/bundle" --holdout 0.83334 \
    --check-with "$work/default.yaml" | grep -E "^total"
done
