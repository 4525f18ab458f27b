#pragma once
// Aggregation of trial records into one row per (bundle, question set, path
// configuration): the headline table that `okfbench run` prints and every
// writer starts from.
//
// Per trial:
//   input tokens   sum of turn input_tokens (a context trial without model
//                  calls counts its pack, context_tokens)
//   model calls    number of turns
//   resent tokens  sum of turn inputs minus the largest one (the definition
//                  of the seed's run.summary()["resent_input_tokens"]); the
//                  row's resent share is sum(resent) / sum(input)
//   tool bytes     sum of tool-call result bytes
// Rows report means over trials whose value is known, and how many trials
// had the value unknown (a provider that did not report it). Trials with an
// error are counted in `errors` and left out of every mean.
// The one-shot ratio of an agent row divides its mean input tokens by those
// of the context row of the same bundle, question set and model (the
// smallest such context label when there are several).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/pricing.hpp"
#include "reports/record.hpp"

namespace okfbench::reports {

// The quantities compare, tune and the writers know by name. Measures the
// runner stored per trial (TrialRecord::measures) are also metrics, by their
// own names.
enum class Direction { lower_is_better, higher_is_better };

struct MetricInfo {
  std::string name;
  std::string help;
  Direction direction = Direction::lower_is_better;
};

// Built-in metrics in display order: input_tokens, model_calls,
// resent_tokens, cached_tokens, output_tokens, tool_calls, tool_bytes,
// evidence_recall, cost.
const std::vector<MetricInfo>& builtin_metrics();
// The info of a built-in metric, or of a stored measure (higher is better).
MetricInfo metric_info(std::string_view name);

// One trial's value of a metric; nullopt when unknown (or the trial failed).
std::optional<double> trial_metric(const TrialRecord& record, std::string_view metric, const PricingTable& pricing);

struct MeanValue {
  std::optional<double> mean;
  int known = 0;    // trials that had the value
  int unknown = 0;  // trials (without error) that did not
};

// Mean tokens of turn `index` across a row's trials, split so the three
// parts sum to the turn's input: cached, re-sent but not cached, new. When a
// turn lacks new_input_tokens, new = input minus the previous turn's input;
// an unknown cached count counts as re-sent, not cached.
struct TurnSplit {
  int turn = 0;  // 1-based
  double new_tokens = 0;
  double resent_uncached_tokens = 0;
  double cached_tokens = 0;
  int trials = 0;  // trials that reached this turn with a known input count
};

struct SummaryRow {
  std::string bundle;
  std::int64_t concept_count = 0;
  std::string question_set;
  PathConfig config;  // repeat index 0
  std::string label;  // config.label()
  int trials = 0;
  int errors = 0;
  MeanValue input_tokens;
  MeanValue model_calls;
  MeanValue resent_tokens;
  std::optional<double> resent_share;
  MeanValue cached_tokens;
  MeanValue output_tokens;
  MeanValue tool_calls;
  MeanValue tool_bytes;
  MeanValue evidence_recall;
  MeanValue cost;
  int cost_cache_unknown_turns = 0;  // turns priced as if nothing was cached
  std::optional<double> one_shot_ratio;   // agent rows: input tokens / context row's
  std::map<std::string, double> tool_bytes_by_tool;  // mean bytes per trial, per tool
  std::map<std::string, MeanValue> measures;         // stored measures, by name
  std::vector<TurnSplit> per_turn;
};

struct Summary {
  std::vector<SummaryRow> rows;  // by concept count, bundle, question set, kind (context first), label
  std::string priced_as_note;    // e.g. "sim priced as gpt-4.1-mini"; empty when no alias was used
};

Summary summarize(const std::vector<TrialRecord>& records, const PricingTable& pricing);

// A row's mean of a built-in metric or stored measure by name; nullopt when
// unknown or when the row has no such metric.
std::optional<double> row_metric(const SummaryRow& row, std::string_view metric);

// The headline table as GitHub Markdown (columns: bundle, concepts, path,
// input tokens, model calls, resent, cached, tool bytes, evidence recall,
// cost, x one-shot), followed by the pricing note when there is one.
std::string headline_markdown(const Summary& summary);

}  // namespace okfbench::reports
