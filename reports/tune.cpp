#include "reports/tune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "reports/format.hpp"
#include "reports/pareto.hpp"

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
  TuneGroup g{bundle, qs, {}, std::nullopt};
  for (const auto& row : s.rows) {
    if (row.bundle != bundle || row.question_set != qs) continue;
    auto tv = row_metric(row, target.metric);
    auto mv = row_metric(row, minimize);
    if (tv && mv) g.candidates.push_back({&row, *tv, *mv, meets(target, *tv), false});
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
  }
  std::vector<TuneChoice> out;
  for (const auto& [label, t] : tallies) {
    if (!t.failed) out.push_back({label, t.sum / t.groups, t.groups});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TuneChoice& a, const TuneChoice& b) { return a.mean_minimized < b.mean_minimized; });
  return out;
}

std::string minimized_text(std::string_view minimize, double v) {
  return minimize == "cost" ? format_dollars(v) : format_count(v);
}

}  // namespace

TuneResult tune(const Summary& summary, const TuneTarget& target, std::string_view minimize) {
  MetricInfo info = metric_info(minimize);
  bool builtin = std::any_of(builtin_metrics().begin(), builtin_metrics().end(),
                             [&](const MetricInfo& m) { return m.name == minimize; });
  if (!builtin || info.direction != Direction::lower_is_better) {
    throw UsageError(fmt::format("--minimize {}: use a cost-like metric: input_tokens, cost, model_calls, "
                                 "resent_tokens, output_tokens, tool_calls or tool_bytes",
                                 minimize));
  }
  bool known = std::any_of(summary.rows.begin(), summary.rows.end(),
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
    out += fmt::format("### {} ({})\n\n| configuration | {} | {} | meets {} | Pareto front |\n|---|--:|--:|:-:|:-:|\n",
                       markdown_text(g.bundle), markdown_text(g.question_set), r.minimize, r.target.metric,
                       r.target.text);
    for (std::size_t i = 0; i < g.candidates.size(); ++i) {
      const auto& c = g.candidates[i];
      std::string label = g.cheapest == i ? "**" + markdown_text(c.row->label) + "** (cheapest)" : markdown_text(c.row->label);
      out += fmt::format("| {} | {} | {:.4f} | {} | {} |\n", label, minimized_text(r.minimize, c.minimized_value),
                         c.target_value, c.meets ? "yes" : "no", c.on_front ? "yes" : "");
    }
    if (!g.cheapest) out += fmt::format("\nNo configuration meets {} here.\n", r.target.text);
    out += "\n";
  }
  if (r.overall.empty()) {
    out += fmt::format("No configuration meets {} on every bundle.\n", r.target.text);
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
