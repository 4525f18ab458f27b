// The summary as JSON, for scripts and dashboards.
#include <nlohmann/json.hpp>

#include "reports/writers.hpp"

namespace okfbench::reports {

namespace {

using nlohmann::json;

json mean_json(const MeanValue& v) {
  return json{{"mean", v.mean ? json(*v.mean) : json(nullptr)}, {"known", v.known}, {"unknown", v.unknown}};
}

json row_json(const SummaryRow& r) {
  json turns = json::array();
  for (const auto& t : r.per_turn) {
    turns.push_back({{"turn", t.turn},
                     {"trials", t.trials},
                     {"new_tokens", t.new_tokens},
                     {"resent_uncached_tokens", t.resent_uncached_tokens},
                     {"cached_tokens", t.cached_tokens}});
  }
  json measures = json::object();
  for (const auto& [name, value] : r.measures) measures[name] = mean_json(value);
  return json{{"bundle", r.bundle},
              {"concept_count", r.concept_count},
              {"question_set", r.question_set},
              {"label", r.label},
              {"config", r.config},
              {"trials", r.trials},
              {"errors", r.errors},
              {"input_tokens", mean_json(r.input_tokens)},
              {"model_calls", mean_json(r.model_calls)},
              {"resent_tokens", mean_json(r.resent_tokens)},
              {"resent_share", r.resent_share ? json(*r.resent_share) : json(nullptr)},
              {"cached_tokens", mean_json(r.cached_tokens)},
              {"output_tokens", mean_json(r.output_tokens)},
              {"tool_calls", mean_json(r.tool_calls)},
              {"tool_bytes", mean_json(r.tool_bytes)},
              {"tool_bytes_by_tool", r.tool_bytes_by_tool},
              {"evidence_recall", mean_json(r.evidence_recall)},
              {"cost_usd", mean_json(r.cost)},
              {"cost_cache_unknown_turns", r.cost_cache_unknown_turns},
              {"one_shot_ratio", r.one_shot_ratio ? json(*r.one_shot_ratio) : json(nullptr)},
              {"measures", measures},
              {"per_turn", turns}};
}

}  // namespace

std::string json_report(const RunManifest& manifest, const Summary& summary) {
  json rows = json::array();
  for (const auto& r : summary.rows) rows.push_back(row_json(r));
  json out{{"schema_version", kSchemaVersion},
           {"report", "okfbench-summary"},
           {"manifest", manifest},
           {"pricing_note", summary.priced_as_note},
           {"rows", rows}};
  return out.dump(2) + "\n";
}

}  // namespace okfbench::reports
