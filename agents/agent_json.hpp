#pragma once
// JSON for agent runs (the `okfbench agent --json` output). Unknown token
// counts are null, never 0.
#include <nlohmann/json_fwd.hpp>

#include "agents/agent.hpp"

namespace okfbench::agents {

void to_json(nlohmann::json& out, const Usage& usage);
void to_json(nlohmann::json& out, const AgentToolCall& call);
void to_json(nlohmann::json& out, const AgentTurn& turn);
void to_json(nlohmann::json& out, const RunSummary& summary);
// answer, stop, error, turns, tool_calls, schema_tokens_per_call and summary
// (the conversation itself is left out: it can be large).
void to_json(nlohmann::json& out, const AgentRun& run);

}  // namespace okfbench::agents
