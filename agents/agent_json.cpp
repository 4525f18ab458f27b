#include "agents/agent_json.hpp"

#include <nlohmann/json.hpp>

namespace okfbench::agents {
namespace {

nlohmann::json count(const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json counts(const std::vector<std::optional<std::int64_t>>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& v : values) out.push_back(count(v));
  return out;
}

nlohmann::json access_json(const KnowledgeAccess& a) {
  return {{"tool", a.tool},   {"bundle", a.bundle}, {"found", a.found},          {"query", a.query},
          {"path", a.path},   {"hits", count(a.hits)}, {"body_chars", count(a.body_chars)}};
}
}  // namespace

void to_json(nlohmann::json& out, const Usage& u) {
  out = {{"input_tokens", count(u.input_tokens)},
         {"cached_input_tokens", count(u.cached_input_tokens)},
         {"cache_write_tokens", count(u.cache_write_tokens)},
         {"output_tokens", count(u.output_tokens)}};
}

void to_json(nlohmann::json& out, const AgentToolCall& c) {
  out = {{"turn", c.turn},           {"name", c.name},   {"arguments", c.arguments},
         {"result_bytes", c.result_bytes}, {"error", c.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.error)},
         {"repeated", c.repeated}};
  if (c.access) out["access"] = access_json(*c.access);
}

void to_json(nlohmann::json& out, const AgentTurn& t) {
  out = nlohmann::json(t.usage);
  out["turn"] = t.turn;
  out["tool_calls"] = t.tool_calls;
  out["dropped_tool_calls"] = t.dropped_tool_calls;
}

void to_json(nlohmann::json& out, const RunSummary& s) {
  out = {{"turns", s.turns},
         {"tool_calls", s.tool_calls},
         {"errors", s.errors},
         {"repeated_calls", s.repeated_calls},
         {"dropped_tool_calls", s.dropped_tool_calls},
         {"result_bytes", s.result_bytes},
         {"bytes_by_tool", s.bytes_by_tool},
         {"calls_by_tool", s.calls_by_tool},
         {"input_per_turn", counts(s.input_per_turn)},
         {"schema_tokens", count(s.schema_tokens)},
         {"usage", nlohmann::json(s.usage)}};
}

void to_json(nlohmann::json& out, const AgentRun& run) {
  out = {{"answer", run.answer},
         {"stop", to_string(run.stop)},
         {"error", run.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.error)},
         {"failure", run.stop == AgentStop::model_error ? nlohmann::json(to_string(run.failure)) : nlohmann::json(nullptr)},
         {"turns", run.turns},
         {"tool_calls", run.tool_calls},
         {"schema_tokens_per_call", count(run.schema_tokens_per_call)},
         {"summary", nlohmann::json(summary(run))}};
}

}  // namespace okfbench::agents
