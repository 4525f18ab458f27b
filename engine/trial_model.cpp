#include "engine/trial_model.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "reports/trial_metrics.hpp"
#include "retrieval/qualified_id.hpp"

namespace okfbench::engine {

reports::TurnRecord record_turn(const agents::Usage& usage) {
  reports::TurnRecord t;
  t.input_tokens = usage.input_tokens;
  t.cached_tokens = usage.cached_input_tokens;
  t.cache_write_tokens = usage.cache_write_tokens;
  t.output_tokens = usage.output_tokens;
  return t;
}

void fill_new_input(std::vector<reports::TurnRecord>& turns) {
  reports::TrialRecord r;
  r.turns = std::move(turns);
  std::vector<std::optional<std::int64_t>> fresh;
  for (std::size_t i = 0; i < r.turns.size(); ++i) fresh.push_back(reports::turn_new_input(r, i));
  for (std::size_t i = 0; i < r.turns.size(); ++i) r.turns[i].new_input_tokens = fresh[i];
  turns = std::move(r.turns);
}

std::vector<reports::TurnRecord> record_turns(const agents::AgentRun& run) {
  std::vector<reports::TurnRecord> turns;
  for (const agents::AgentTurn& t : run.turns) {
    reports::TurnRecord turn = record_turn(t.usage);
    turn.dropped_tool_calls = static_cast<std::int64_t>(t.dropped_tool_calls);
    for (const agents::AgentToolCall& call : run.tool_calls) {
      if (call.turn != t.turn) continue;
      reports::ToolCallRecord record{call.name, call.arguments, static_cast<std::int64_t>(call.result_bytes), call.error,
                                     call.repeated, call.access};
      turn.tool_calls.push_back(std::move(record));
    }
    turns.push_back(std::move(turn));
  }
  fill_new_input(turns);
  return turns;
}

std::vector<reports::PackedConcept> record_pack(const retrieval::ContextPack& pack) {
  std::vector<reports::PackedConcept> out;
  for (const retrieval::PackEntry& c : pack.concepts) {
    // Over several bundles ids are BUNDLE:ID (a link never leaves its bundle).
    const auto named = [&](const std::string& id) { return c.bundle.empty() ? id : retrieval::qualified_id(c.bundle, id); };
    const std::string reason =
        c.reason == retrieval::PackReason::seed ? "seed" : fmt::format("via {} from {}", c.relation, named(c.from));
    out.push_back({named(c.id), static_cast<std::int64_t>(c.tokens), reason});
  }
  return out;
}

}  // namespace okfbench::engine
