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

// One bundle and question set. Candidates are sorted by the minimized metric
// (then label); rows without a known target or minimized value are left out.
struct TuneGroup {
  std::string bundle;
  std::string question_set;
  std::vector<TuneCandidate> candidates;
  std::optional<std::size_t> cheapest;  // index of the cheapest candidate that meets the target
};

// A configuration that met the target on every group it ran in, with its
// minimized metric averaged over those groups.
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
};

// `minimize` must be a lower-is-better built-in metric (input_tokens, cost,
// ...); throws UsageError otherwise, and when the target metric is unknown
// to every row.
TuneResult tune(const Summary& summary, const TuneTarget& target, std::string_view minimize);

// Per group: a table of candidates (meets target, on the front, cheapest
// marked), then the configurations that meet the target everywhere.
std::string tune_markdown(const TuneResult& result);

}  // namespace okfbench::reports
