// The summary as JSON, for scripts and dashboards.
#include <nlohmann/json.hpp>

#include "reports/writers.hpp"
#include "core/json_text.hpp"

namespace okfbench::reports {

namespace {

using nlohmann::json;

json mean_json(const MeanValue& v) {
  return json{{"mean", v.mean ? json(*v.mean) : json(nullptr)}, {"known", v.known}, {"unknown", v.unknown}};
}

json opt_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// Dollars to the micro-dollar (core/json_text.hpp), not to the last bit of a sum of prices.
json opt_dollars(const std::optional<double>& v) { return v ? json(json_dollars(*v)) : json(nullptr); }

json mean_dollars(const MeanValue& v) {
  json out = mean_json(v);
  out["mean"] = opt_dollars(v.mean);
  return out;
}

json grades_json(const SummaryRow& r) {
  json out = json::object();
  for (const auto& [name, g] : r.grades) {
    out[name] = {{"graded", g.graded},
                 {"not_graded", g.not_graded},
                 {"judge_errors", g.judge_errors},
                 {"correct", g.correct},
                 {"mean_score", opt_json(g.mean_score)},
                 {"share_correct", opt_json(g.share_correct)}};
  }
  return out;
}

json pass_rates_json(const SummaryRow& r) {
  json out = json::array();
  for (const auto& q : r.pass_rates) {
    out.push_back({{"question_id", q.question_id},
                   {"repeats", q.repeats},
                   {"correct", q.correct},
                   {"pass_rate", q.pass_rate},
                   {"score_sd", opt_json(q.score_sd)},
                   {"scores", q.scores},
                   {"flaky", q.flaky()}});
  }
  return out;
}

json judge_json(const SummaryRow& r) {
  if (r.judge.trials == 0) return nullptr;
  auto count = [](const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); };
  return {{"model", r.judge.model},
          {"trials", r.judge.trials},
          {"calls", r.judge.calls},
          {"cache_hits", r.judge.cache_hits},
          {"input_tokens", count(r.judge.input_tokens)},
          {"output_tokens", count(r.judge.output_tokens)},
          {"cost_usd", opt_dollars(r.judge.dollars)},
          {"agreement_with_facts",
           {{"pairs", r.judge_facts.pairs}, {"share", opt_json(r.judge_facts.share)}, {"kappa", opt_json(r.judge_facts.kappa)}}}};
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
              {"cost_usd", mean_dollars(r.cost)},
              {"cost_cache_unknown_turns", r.cost_cache_unknown_turns},
              {"baseline", r.baseline_label.empty() ? json(nullptr) : json(r.baseline_label)},
              {"baseline_reason", r.baseline_reason},
              {"one_shot_ratio", r.one_shot_ratio ? json(*r.one_shot_ratio) : json(nullptr)},
              {"cost_ratio", opt_json(r.cost_ratio)},
              {"measures", measures},
              {"per_turn", turns},
              {"grades", grades_json(r)},
              {"cost_per_correct_usd", opt_dollars(r.cost_per_correct)},
              {"equal_quality_ratio", opt_json(r.equal_quality_ratio)},
              {"repeats", r.repeats},
              {"pass_rates", pass_rates_json(r)},
              {"judge", judge_json(r)}};
}

json ratio_json(const RatioVerdict& r) {
  return {{"pairs", r.pairs}, {"ratio", opt_json(r.ratio)}, {"low", opt_json(r.low)}, {"high", opt_json(r.high)},
          {"measurable", r.measurable()}};
}

json difference_json(const DifferenceVerdict& d) {
  return {{"pairs", d.pairs},          {"baseline", opt_json(d.baseline)}, {"candidate", opt_json(d.candidate)},
          {"difference", opt_json(d.difference)}, {"low", opt_json(d.low)},  {"high", opt_json(d.high)},
          {"p_value", opt_json(d.p_value)},       {"significant", d.significant}};
}

json verdict_json(const PairedVerdict& v, const std::map<std::string, std::string>& names) {
  const auto& c = v.correct;
  return {{"bundle", v.bundle},
          {"question_set", v.question_set},
          {"baseline", v.baseline_label},
          {"candidate", v.candidate_label},
          {"baseline_reason", v.baseline_reason},
          {"pairs", v.pairs},
          {"questions", v.questions},
          {"unpaired", v.unpaired},
          {"input_tokens", ratio_json(v.input_tokens)},
          {"cost", ratio_json(v.cost)},
          {"correct",
           {{"pairs", c.pairs}, {"baseline", opt_json(c.baseline)}, {"candidate", opt_json(c.candidate)},
            {"difference", opt_json(c.difference)}, {"baseline_only", c.baseline_only},
            {"candidate_only", c.candidate_only}, {"mcnemar_p", opt_json(c.p_value)}, {"significant", c.significant}}},
          {"answer_score", difference_json(v.score)},
          {"evidence_recall", difference_json(v.recall)},
          {"answer_facts", v.answer_facts},
          {"line", verdict_line(v, names)}};
}

}  // namespace

std::string json_report(const RunManifest& manifest, const Summary& summary, const std::vector<PairedVerdict>& verdicts) {
  json rows = json::array();
  for (const auto& r : summary.rows) rows.push_back(row_json(r));
  json verdict_list = json::array();
  for (const auto& v : verdicts) verdict_list.push_back(verdict_json(v, summary.names));
  json out{{"schema_version", kSchemaVersion},
           {"report", "okfbench-summary"},
           {"manifest", manifest},
           {"pricing_note", summary.priced_as_note},
           {"judge_note", summary.judge_note},
           {"rows", rows},
           {"verdicts", verdict_list}};
  return json_text(out, 2) + "\n";
}

}  // namespace okfbench::reports
