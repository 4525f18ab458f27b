#pragma once
// Comparison of two stored runs (base and candidate) per configuration and
// metric, with significance, for pull requests and CI gates.
//
// Trials are paired by (bundle, question set, configuration label, question
// id, repeat index); a metric is compared over the pairs where both trials
// have a known value. For each (configuration, metric):
//   base mean, candidate mean, delta = candidate - base,
//   a paired randomization test (sign flips, seeded, 10,000 permutations)
//   and a paired bootstrap 95% interval of the delta (reports/statistics.hpp).
//
// Thresholds ("measure=amount"): the amount is the largest worsening
// allowed, in the metric's own direction (lower is better for tokens and
// cost, higher for recall and ranking measures). "evidence_recall=0.05"
// fails when recall drops by more than 0.05; "input_tokens=10%" fails when
// input tokens grow by more than 10% of the base mean. The sign of the amount
// is ignored. A threshold is crossed when the mean delta is worse than the
// amount; a configuration present in the base run but missing from the
// candidate crosses every threshold (it cannot be shown not to regress).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/pricing.hpp"
#include "reports/record.hpp"

namespace okfbench::reports {

enum class AmountKind { absolute, percent };

struct Threshold {
  std::string metric;
  double amount = 0.0;  // >= 0
  AmountKind kind = AmountKind::absolute;
  std::string text;  // as given, for messages
};

// Parses "metric=amount" or "metric=amount%". Throws UsageError naming the
// argument and the expected form.
Threshold parse_threshold(std::string_view text);

struct CompareOptions {
  std::vector<Threshold> thresholds;
  std::size_t permutations = 10'000;
  std::size_t bootstrap_resamples = 10'000;
  std::uint64_t seed = 42;
  double significance = 0.05;  // p below this is marked significant
};

struct MetricComparison {
  std::string metric;
  std::size_t pairs = 0;
  double base_mean = 0.0;
  double candidate_mean = 0.0;
  double delta = 0.0;
  std::optional<double> p_value;  // randomization test; none with fewer than 2 pairs
  std::optional<double> ci_low;   // bootstrap interval of the delta
  std::optional<double> ci_high;
  bool significant = false;
};

struct ConfigComparison {
  std::string bundle;
  std::string question_set;
  std::string label;
  std::vector<MetricComparison> metrics;  // built-in metrics first, then stored measures by name
};

struct ThresholdCheck {
  Threshold threshold;
  std::string bundle;
  std::string question_set;
  std::string label;
  std::optional<double> delta;  // none when the configuration is missing from the candidate
  bool crossed = false;
  std::string message;  // one line saying what was checked and the outcome
};

struct Comparison {
  std::vector<ConfigComparison> configs;
  std::vector<std::string> only_in_base;       // "bundle / question set / label"
  std::vector<std::string> only_in_candidate;
  std::vector<ThresholdCheck> checks;
  bool any_crossed() const;
};

// Throws UsageError when a threshold names a metric neither run has, and
// InputError when the runs share no configuration (nothing was compared).
Comparison compare_runs(const std::vector<TrialRecord>& base, const std::vector<TrialRecord>& candidate,
                        const PricingTable& pricing, const CompareOptions& options);

// Two configurations of one run (full labels), paired by (bundle, question
// set, question id, repeat): one ConfigComparison per bundle and question set
// where both ran, its label "CANDIDATE against BASELINE"; thresholds are
// checked as between runs. Throws InputError when they never ran on the same
// bundle and question set.
Comparison compare_within_run(const std::vector<TrialRecord>& records, const PricingTable& pricing,
                              const std::string& baseline_label, const std::string& candidate_label,
                              const CompareOptions& options);

// Markdown: one table per configuration (metric, base, candidate, delta,
// 95% CI, p), then threshold checks as [OK]/[FAIL] lines.
std::string compare_markdown(const Comparison& comparison);

}  // namespace okfbench::reports
