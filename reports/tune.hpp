#pragma once
// Choosing a configuration: among the configurations of a sweep, the ones
// that meet a quality target (e.g. evidence_recall>=0.9), cheapest first, and
// the Pareto front of cost against the target metric. What `okfbench tune`
// prints after running (or reusing) the sweep.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/summary.hpp"

namespace okfbench::reports {

enum class Comparator { at_least, at_most };

struct TuneTarget {
  std::string metric;
  Comparator comparator = Comparator::at_least;
  double value = 0.0;
  std::string text;  // as given
};

// Parses "METRIC>=VALUE" or "METRIC<=VALUE". Throws UsageError otherwise.
TuneTarget parse_tune_target(std::string_view text);

struct TuneCandidate {
  const SummaryRow* row = nullptr;
  double target_value = 0.0;
  double minimized_value = 0.0;
  bool meets = false;
  bool on_front = false;
};

// A configuration of a group that cannot be judged against the target: its
// target or minimized metric is unknown there, and why (e.g. "no answer
// facts" for facts_correct on a bundle whose questions have none).
struct TuneUnmeasured {
  const SummaryRow* row = nullptr;
  std::string metric;  // the metric it lacks
  std::string reason;
};

// One bundle and question set. Candidates are sorted by the minimized metric
// (then label); rows without a known target or minimized value are listed in
// `unmeasured` instead, and never count as meeting the target.
struct TuneGroup {
  std::string bundle;
  std::string question_set;
  std::vector<TuneCandidate> candidates;
  std::optional<std::size_t> cheapest;  // index of the cheapest candidate that meets the target
  std::vector<TuneUnmeasured> unmeasured;
};

// A configuration that met the target on every group it ran in, with its
// minimized metric averaged over those groups; a group where it ran but could
// not be measured counts as not met.
struct TuneChoice {
  std::string label;
  double mean_minimized = 0.0;
  int groups = 0;
};

struct TuneResult {
  TuneTarget target;
  std::string minimize;
  std::vector<TuneGroup> groups;
  std::vector<TuneChoice> overall;  // cheapest first
  // Whether every group has a configuration that meets the target; `okfbench
  // tune` exits 1 when not (a bundle the target cannot grade included).
  bool met_everywhere() const;
};

// `minimize` must be a lower-is-better built-in metric (input_tokens, cost,
// ...); throws UsageError otherwise, and when the target metric is unknown
// to every row.
TuneResult tune(const Summary& summary, const TuneTarget& target, std::string_view minimize);

// Why `row` has no value for `metric` ("no answer facts", "the judge graded
// no trial", "no trial has a value"), for messages.
std::string missing_metric_reason(const SummaryRow& row, std::string_view metric);

// Per group: a table of candidates (meets target, on the front, cheapest
// marked), the configurations it cannot measure and why ("demo cannot be
// graded on facts_correct: no answer facts"), then the configurations that
// meet the target everywhere, or that none does.
std::string tune_markdown(const TuneResult& result);

}  // namespace okfbench::reports
