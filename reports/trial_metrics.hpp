#pragma once
// Every per-trial metric, defined once: a registry like the measures
// (reports/measures.hpp), one record each (name, help, direction, compute),
// read by the summary, compare, tune and the CSV writer. Graders' scores are
// metrics too, by the grader's name ("facts") and with "_correct" (1 when
// correct, 0 when not); measures the runner stored per trial
// (TrialRecord::measures) by their own names.
//
// The definitions the metrics share:
//   new input of a turn    input tokens not sent in any earlier turn of the
//                          trial: the record's new_input_tokens, else the
//                          growth over the previous turn's input (the whole
//                          input on the first turn), kept within [0, input]
//   re-sent input of a turn  input minus new input (the conversation prefix
//                          the API made the trial send again)
//   reached concepts       the concepts whose text reached the model: on the
//                          context path the packed ones, on the agent path the
//                          ones whose body was opened; evidence recall is the
//                          share of the relevant concepts among them
// A trial's token metric is unknown (nullopt) when a turn it sums is unknown;
// every metric is unknown for a failed trial.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/measures.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"

namespace okfbench::reports {

// "facts_correct": the grader's name with this suffix is its 0/1 metric.
inline constexpr std::string_view kCorrectSuffix = "_correct";

enum class Direction { lower_is_better, higher_is_better };

struct MetricInfo {
  std::string name;
  std::string help;
  Direction direction = Direction::lower_is_better;
};

struct TrialMetric {
  MetricInfo info;
  // The trial's value; nullopt when unknown. Called only for finished trials.
  std::function<std::optional<double>(const TrialRecord&, const PricingTable&)> compute;
};

// The built-in metrics in display order: input_tokens, new_input_tokens,
// model_calls, resent_tokens, cached_tokens, output_tokens, tool_calls,
// tool_bytes, empty_read_share, evidence_recall, cost, schema_share.
const std::vector<TrialMetric>& trial_metrics();
// Their infos, in the same order.
const std::vector<MetricInfo>& builtin_metrics();
// The info of a built-in metric, a grader metric or a stored measure (higher is better).
MetricInfo metric_info(std::string_view name);

// One trial's value of a metric; nullopt when unknown (or the trial failed).
std::optional<double> trial_metric(const TrialRecord& record, std::string_view metric, const PricingTable& pricing);

// The shared definitions above. `turn` is 0-based; out of range is nullopt.
std::optional<std::int64_t> turn_new_input(const TrialRecord& record, std::size_t turn);
std::optional<std::int64_t> turn_resent_input(const TrialRecord& record, std::size_t turn);
// Sums over the trial's turns (a context trial without model calls counts its
// pack as input, nothing re-sent).
std::optional<double> input_tokens(const TrialRecord& record);
std::optional<double> resent_tokens(const TrialRecord& record);
// The reached concepts, in the order they reached the model.
std::vector<std::string> reached_ids(const TrialRecord& record);
// Evidence recall of the trial against `relevant` (nullopt without relevant concepts).
std::optional<double> trial_evidence_recall(const TrialRecord& record, const Judgments& relevant);

}  // namespace okfbench::reports
