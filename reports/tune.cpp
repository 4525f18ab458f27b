#include "reports/tune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "reports/format.hpp"
#include "reports/graders.hpp"
#include "reports/pareto.hpp"
#include "reports/trial_metrics.hpp"

namespace okfbench::reports {

TuneTarget parse_tune_target(std::string_view text) {
  TuneTarget t;
  t.text = std::string(text);
  auto at = text.find(">=");
  t.comparator = Comparator::at_least;
  if (at == std::string_view::npos) {
    at = text.find("<=");
    t.comparator = Comparator::at_most;
  }
  auto bad = [&](std::string_view why) {
    return UsageError(fmt::format("--target '{}': {}; expected METRIC>=VALUE or METRIC<=VALUE, e.g. evidence_recall>=0.9",
                                  text, why));
  };
  if (at == std::string_view::npos || at == 0) throw bad("no metric and comparison");
  t.metric = std::string(text.substr(0, at));
  std::string_view value = text.substr(at + 2);
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), t.value);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || !std::isfinite(t.value)) {
    throw bad("the value is not a number");
  }
  return t;
}

namespace {

bool meets(const TuneTarget& t, double v) {
  return t.comparator == Comparator::at_least ? v >= t.value - 1e-12 : v <= t.value + 1e-12;
}

TuneGroup build_group(const Summary& s, const std::string& bundle, const std::string& qs, const TuneTarget& target,
                      std::string_view minimize) {
  TuneGroup g{bundle, qs, {}, std::nullopt, {}};
  for (const auto& row : s.rows) {
    if (row.bundle != bundle || row.question_set != qs) continue;
    auto tv = row_metric(row, target.metric);
    auto mv = row_metric(row, minimize);
    if (tv && mv) g.candidates.push_back({&row, *tv, *mv, meets(target, *tv), false});
    else if (!tv) g.unmeasured.push_back({&row, target.metric, missing_metric_reason(row, target.metric)});
    else g.unmeasured.push_back({&row, std::string(minimize), missing_metric_reason(row, minimize)});
  }
  std::stable_sort(g.candidates.begin(), g.candidates.end(), [](const TuneCandidate& a, const TuneCandidate& b) {
    return a.minimized_value != b.minimized_value ? a.minimized_value < b.minimized_value : a.row->label < b.row->label;
  });
  std::vector<CostQuality> points;
  double sign = target.comparator == Comparator::at_least ? 1.0 : -1.0;  // quality is higher-is-better
  for (const auto& c : g.candidates) points.push_back({c.minimized_value, sign * c.target_value});
  for (std::size_t i : pareto_front(points)) g.candidates[i].on_front = true;
  for (std::size_t i = 0; i < g.candidates.size() && !g.cheapest; ++i) {
    if (g.candidates[i].meets) g.cheapest = i;
  }
  return g;
}

std::vector<TuneChoice> overall_choices(const std::vector<TuneGroup>& groups) {
  struct Tally {
    double sum = 0;
    int groups = 0;
    bool failed = false;
  };
  std::map<std::string, Tally> tallies;
  for (const auto& g : groups) {
    for (const auto& c : g.candidates) {
      Tally& t = tallies[c.row->label];
      t.failed = t.failed || !c.meets;
      t.sum += c.minimized_value;
      ++t.groups;
    }
    for (const auto& u : g.unmeasured) tallies[u.row->label].failed = true;  // unknown is not met
  }
  std::vector<TuneChoice> out;
  for (const auto& [label, t] : tallies) {
    if (!t.failed) out.push_back({label, t.sum / t.groups, t.groups});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TuneChoice& a, const TuneChoice& b) { return a.mean_minimized < b.mean_minimized; });
  return out;
}

// "demo cannot be graded on facts_correct: no answer facts" when no
// configuration could be measured, else one line per configuration.
std::string unmeasured_text(const TuneGroup& g) {
  if (g.unmeasured.empty()) return "";
  const auto& first = g.unmeasured.front();
  const bool same = std::all_of(g.unmeasured.begin(), g.unmeasured.end(), [&](const TuneUnmeasured& u) {
    return u.metric == first.metric && u.reason == first.reason;
  });
  if (g.candidates.empty() && same) {
    return fmt::format("{} cannot be graded on {}: {}.\n", markdown_text(g.bundle), markdown_text(first.metric),
                       markdown_text(first.reason));
  }
  std::string out = "\n";
  for (const auto& u : g.unmeasured) {
    out += fmt::format("- {} cannot be graded on {} here: {}\n", markdown_text(u.row->label), markdown_text(u.metric),
                       markdown_text(u.reason));
  }
  return out;
}

std::string minimized_text(std::string_view minimize, double v) {
  return minimize == "cost" ? format_dollars(v) : format_count(v);
}

}  // namespace

bool TuneResult::met_everywhere() const {
  return !groups.empty() && std::all_of(groups.begin(), groups.end(), [](const TuneGroup& g) { return g.cheapest.has_value(); });
}

std::string missing_metric_reason(const SummaryRow& row, std::string_view metric) {
  std::string_view grader = metric;
  if (grader.ends_with(kCorrectSuffix)) grader.remove_suffix(kCorrectSuffix.size());
  if (auto g = row.grades.find(std::string(grader)); g != row.grades.end()) {
    if (g->second.graded > 0) return "no trial has a value";
    if (grader == "facts" && g->second.not_graded > 0) return "no answer facts";
    if (g->second.judge_errors > 0) return fmt::format("every {} grade was a judge error", grader);
    return fmt::format("{} graded no trial", grader);
  }
  const bool grader_name = std::find(grader_names().begin(), grader_names().end(), std::string(grader)) != grader_names().end();
  if (grader_name) return fmt::format("the {} grader did not run", grader);
  if (row.errors == row.trials) return "every trial failed";
  if (metric == "cost") return "no price for its model";
  return "no trial has a value";
}

TuneResult tune(const Summary& summary, const TuneTarget& target, std::string_view minimize) {
  MetricInfo info = metric_info(minimize);
  bool builtin = std::any_of(builtin_metrics().begin(), builtin_metrics().end(),
                             [&](const MetricInfo& m) { return m.name == minimize; });
  if (!builtin || info.direction != Direction::lower_is_better) {
    throw UsageError(fmt::format("--minimize {}: use a cost-like metric: input_tokens, cost, model_calls, "
                                 "resent_tokens, output_tokens, tool_calls or tool_bytes",
                                 minimize));
  }
  // A grader's metric is known even where no trial could be graded on it: each bundle then says why.
  std::string_view grader = target.metric;
  if (grader.ends_with(kCorrectSuffix)) grader.remove_suffix(kCorrectSuffix.size());
  const auto& graders = grader_names();
  bool known = std::find(graders.begin(), graders.end(), std::string(grader)) != graders.end() ||
               std::any_of(builtin_metrics().begin(), builtin_metrics().end(),
                           [&](const MetricInfo& m) { return m.name == target.metric; }) ||
               std::any_of(summary.rows.begin(), summary.rows.end(),
                           [&](const SummaryRow& r) { return row_metric(r, target.metric).has_value(); });
  if (!known) {
    throw UsageError(fmt::format("--target {}: no configuration has a value for '{}'", target.text, target.metric));
  }
  TuneResult result{target, std::string(minimize), {}, {}};
  std::vector<std::pair<std::string, std::string>> seen;
  for (const auto& row : summary.rows) {
    std::pair<std::string, std::string> key{row.bundle, row.question_set};
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    result.groups.push_back(build_group(summary, row.bundle, row.question_set, target, minimize));
  }
  result.overall = overall_choices(result.groups);
  return result;
}

std::string tune_markdown(const TuneResult& r) {
  std::string out;
  for (const auto& g : r.groups) {
    out += fmt::format("### {} ({})\n\n", markdown_text(g.bundle), markdown_text(g.question_set));
    if (!g.candidates.empty()) {
      out += fmt::format("| configuration | {} | {} | meets {} | Pareto front |\n|---|--:|--:|:-:|:-:|\n", r.minimize,
                         r.target.metric, r.target.text);
    }
    for (std::size_t i = 0; i < g.candidates.size(); ++i) {
      const auto& c = g.candidates[i];
      std::string label = g.cheapest == i ? "**" + markdown_text(c.row->label) + "** (cheapest)" : markdown_text(c.row->label);
      out += fmt::format("| {} | {} | {:.4f} | {} | {} |\n", label, minimized_text(r.minimize, c.minimized_value),
                         c.target_value, c.meets ? "yes" : "no", c.on_front ? "yes" : "");
    }
    out += unmeasured_text(g);
    if (!g.cheapest) out += fmt::format("\nNo configuration meets {} here.\n", r.target.text);
    out += "\n";
  }
  if (r.overall.empty() || !r.met_everywhere()) {
    out += fmt::format("No configuration meets {} on every bundle.\n", r.target.text);
    if (r.overall.empty()) return out;
    out += fmt::format("\nConfigurations that meet {} wherever they could be measured (not on every bundle):\n\n",
                       r.target.text);
    for (const auto& c : r.overall) {
      out += fmt::format("- {}: {} over {} bundle(s)\n", markdown_text(c.label), minimized_text(r.minimize, c.mean_minimized),
                         c.groups);
    }
    return out;
  }
  out += fmt::format("Configurations that meet {} on every bundle, cheapest first (mean {}):\n\n", r.target.text,
                     r.minimize);
  for (const auto& c : r.overall) {
    out += fmt::format("- {}: {} over {} bundle(s)\n", markdown_text(c.label), minimized_text(r.minimize, c.mean_minimized), c.groups);
  }
  return out;
}

}  // namespace okfbench::reports
