#include "reports/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "reports/format.hpp"
#include "reports/graders.hpp"
#include "reports/statistics.hpp"
#include "reports/summary.hpp"

namespace okfbench::reports {

bool Comparison::any_crossed() const {
  return std::any_of(checks.begin(), checks.end(), [](const ThresholdCheck& c) { return c.crossed; });
}

Threshold parse_threshold(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return UsageError(fmt::format("--threshold '{}': {}; expected METRIC=AMOUNT or METRIC=AMOUNT% "
                                  "(for example evidence_recall=0.05 or input_tokens=10%)",
                                  text, why));
  };
  auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) throw bad("no metric name before '='");
  Threshold t;
  t.text = std::string(text);
  t.metric = std::string(text.substr(0, eq));
  std::string_view amount = text.substr(eq + 1);
  if (!amount.empty() && amount.back() == '%') {
    t.kind = AmountKind::percent;
    amount.remove_suffix(1);
  }
  if (!amount.empty() && (amount.front() == '+' || amount.front() == '-')) amount.remove_prefix(1);
  auto [end, ec] = std::from_chars(amount.data(), amount.data() + amount.size(), t.amount);
  if (amount.empty() || ec != std::errc() || end != amount.data() + amount.size() || !std::isfinite(t.amount)) {
    throw bad("the amount is not a number");
  }
  return t;
}

namespace {

using ConfigKey = std::tuple<std::string, std::string, std::string>;  // bundle, question set, label
using PairKey = std::pair<std::string, int>;                           // question id, repeat

std::map<ConfigKey, std::map<PairKey, const TrialRecord*>> index_by_config(const std::vector<TrialRecord>& records) {
  std::map<ConfigKey, std::map<PairKey, const TrialRecord*>> index;
  for (const auto& r : records) {
    index[{r.bundle, r.question_set, r.config.label()}][{r.question_id, r.config.repeat}] = &r;
  }
  return index;
}

std::string config_name(const ConfigKey& key) {
  return fmt::format("{} / {} / {}", std::get<0>(key), std::get<1>(key), std::get<2>(key));
}

// Metrics present in either run: built-ins, then graders (score and
// "_correct") in registry order, then stored measures by name.
std::vector<std::string> metric_names(const std::vector<TrialRecord>& base, const std::vector<TrialRecord>& cand) {
  std::vector<std::string> names;
  for (const auto& m : builtin_metrics()) names.push_back(m.name);
  std::set<std::string> stored, graded;
  for (const auto* records : {&base, &cand}) {
    for (const auto& r : *records) {
      for (const auto& m : r.measures) stored.insert(m.name);
      for (const auto& g : r.grades) graded.insert(g.grader);
    }
  }
  for (const auto& g : grader_names()) {
    if (!graded.count(g)) continue;
    names.push_back(g);
    names.push_back(g + "_correct");
    stored.erase(g);  // a schema 1 "answered" measure is the same metric
  }
  names.insert(names.end(), stored.begin(), stored.end());
  return names;
}

std::optional<MetricComparison> compare_metric(const std::map<PairKey, const TrialRecord*>& base,
                                               const std::map<PairKey, const TrialRecord*>& cand,
                                               const std::string& metric, const PricingTable& pricing,
                                               const CompareOptions& options) {
  std::vector<double> b, c;
  for (const auto& [key, base_record] : base) {
    auto it = cand.find(key);
    if (it == cand.end()) continue;
    auto bv = trial_metric(*base_record, metric, pricing);
    auto cv = trial_metric(*it->second, metric, pricing);
    if (!bv || !cv) continue;
    b.push_back(*bv);
    c.push_back(*cv);
  }
  if (b.empty()) return std::nullopt;
  MetricComparison m;
  m.metric = metric;
  m.pairs = b.size();
  for (std::size_t i = 0; i < b.size(); ++i) {
    m.base_mean += b[i];
    m.candidate_mean += c[i];
  }
  m.base_mean /= static_cast<double>(b.size());
  m.candidate_mean /= static_cast<double>(b.size());
  m.delta = m.candidate_mean - m.base_mean;
  if (b.size() >= 2) {
    Randomization r = paired_randomization_test(b, c, {options.permutations, options.seed});
    Interval ci = paired_bootstrap_interval(b, c, {options.bootstrap_resamples, 0.95, options.seed});
    m.p_value = r.p_value;
    m.ci_low = ci.low;
    m.ci_high = ci.high;
    m.significant = r.p_value < options.significance;
  }
  return m;
}

// Worsening of `delta` in the metric's direction, in the threshold's units.
double worsening(const MetricComparison& m, const Threshold& t) {
  double worse = metric_info(m.metric).direction == Direction::lower_is_better ? m.delta : -m.delta;
  if (t.kind == AmountKind::absolute) return worse;
  if (m.base_mean == 0.0) return worse > 0 ? INFINITY : 0.0;
  return worse / std::fabs(m.base_mean) * 100.0;
}

std::string amount_text(const Threshold& t) {
  return t.kind == AmountKind::percent ? fmt::format("{:g}%", t.amount) : fmt::format("{:g}", t.amount);
}

ThresholdCheck check(const Threshold& t, const ConfigKey& key, const ConfigComparison* config) {
  ThresholdCheck out{t, std::get<0>(key), std::get<1>(key), std::get<2>(key), std::nullopt, false, ""};
  const MetricComparison* m = nullptr;
  if (config) {
    for (const auto& candidate : config->metrics) {
      if (candidate.metric == t.metric) m = &candidate;
    }
  }
  if (!config) {
    out.crossed = true;
    out.message = fmt::format("{}: {}: configuration missing from the candidate run", t.text, config_name(key));
    return out;
  }
  if (!m) {
    out.message = fmt::format("{}: {}: no paired values, not checked", t.text, config_name(key));
    return out;
  }
  out.delta = m->delta;
  double worse = worsening(*m, t);
  out.crossed = worse > t.amount + 1e-12;
  out.message = fmt::format("{}: {}: {} -> {} (delta {:+.6g}), allowed worsening {}", t.text, config_name(key),
                            fmt::format("{:.6g}", m->base_mean), fmt::format("{:.6g}", m->candidate_mean), m->delta,
                            amount_text(t));
  return out;
}

void require_known_metrics(const std::vector<Threshold>& thresholds, const std::vector<std::string>& names) {
  for (const auto& t : thresholds) {
    if (std::find(names.begin(), names.end(), t.metric) == names.end()) {
      throw UsageError(fmt::format("--threshold '{}': neither run has a metric named '{}'; known metrics: {}", t.text,
                                   t.metric, fmt::join(names, ", ")));
    }
  }
}

// One configuration's metrics, base trials against candidate trials, and its
// threshold checks, added to `out`.
void add_config(Comparison& out, const ConfigKey& key, const std::map<PairKey, const TrialRecord*>& base,
                const std::map<PairKey, const TrialRecord*>& candidate, const std::vector<std::string>& names,
                const PricingTable& pricing, const CompareOptions& options) {
  ConfigComparison config{std::get<0>(key), std::get<1>(key), std::get<2>(key), {}};
  for (const auto& metric : names) {
    if (auto m = compare_metric(base, candidate, metric, pricing, options)) config.metrics.push_back(*m);
  }
  for (const auto& t : options.thresholds) out.checks.push_back(check(t, key, &config));
  out.configs.push_back(std::move(config));
}

}  // namespace

Comparison compare_runs(const std::vector<TrialRecord>& base, const std::vector<TrialRecord>& candidate,
                        const PricingTable& pricing, const CompareOptions& options) {
  auto names = metric_names(base, candidate);
  require_known_metrics(options.thresholds, names);
  auto base_index = index_by_config(base);
  auto cand_index = index_by_config(candidate);
  Comparison out;
  for (const auto& [key, cand_trials] : cand_index) {
    if (!base_index.count(key)) out.only_in_candidate.push_back(config_name(key));
  }
  for (const auto& [key, base_trials] : base_index) {
    auto it = cand_index.find(key);
    if (it == cand_index.end()) {
      out.only_in_base.push_back(config_name(key));
      for (const auto& t : options.thresholds) out.checks.push_back(check(t, key, nullptr));
      continue;
    }
    add_config(out, key, base_trials, it->second, names, pricing, options);
  }
  if (out.configs.empty()) {
    // A gate that compared nothing must not pass quietly.
    throw InputError(fmt::format("the runs share no configuration (bundle / question set / label): base has {}, "
                                 "candidate has {}; compare runs of the same spec",
                                 base_index.size(), cand_index.size()));
  }
  return out;
}

Comparison compare_within_run(const std::vector<TrialRecord>& records, const PricingTable& pricing,
                              const std::string& baseline_label, const std::string& candidate_label,
                              const CompareOptions& options) {
  auto names = metric_names(records, records);
  require_known_metrics(options.thresholds, names);
  auto index = index_by_config(records);
  Comparison out;
  for (const auto& [key, base_trials] : index) {
    if (std::get<2>(key) != baseline_label) continue;
    auto it = index.find({std::get<0>(key), std::get<1>(key), candidate_label});
    if (it == index.end()) continue;
    const ConfigKey pair_key{std::get<0>(key), std::get<1>(key), candidate_label + " against " + baseline_label};
    add_config(out, pair_key, base_trials, it->second, names, pricing, options);
  }
  if (out.configs.empty()) {
    throw InputError(fmt::format("'{}' and '{}' never ran on the same bundle and question set in this run, so there are "
                                 "no pairs to compare",
                                 baseline_label, candidate_label));
  }
  return out;
}

namespace {

enum class Sign { plain, explicit_sign };

bool is_token_or_byte_count(const std::string& metric) {
  return metric == "input_tokens" || metric == "new_input_tokens" || metric == "resent_tokens" || metric == "cached_tokens" ||
         metric == "output_tokens" || metric == "tool_bytes";
}

std::string value_text(const std::string& metric, double v, Sign sign = Sign::plain) {
  std::string prefix = sign == Sign::explicit_sign ? (v < 0 ? "-" : "+") : (v < 0 ? "-" : "");
  double magnitude = std::fabs(v);
  if (metric == "cost") return prefix + format_dollars(magnitude);
  if (is_token_or_byte_count(metric)) return prefix + format_count(magnitude);
  if (metric == "model_calls" || metric == "tool_calls") return prefix + fmt::format("{:.2f}", magnitude);
  return prefix + fmt::format("{:.4f}", magnitude);
}

std::string delta_text(const MetricComparison& m) {
  std::string text = value_text(m.metric, m.delta, Sign::explicit_sign);
  if (m.base_mean != 0.0) text += fmt::format(" ({:+.1f}%)", m.delta / std::fabs(m.base_mean) * 100.0);
  return text;
}

std::string interval_text(const MetricComparison& m) {
  if (!m.ci_low) return "n/a";
  return fmt::format("[{}, {}]", value_text(m.metric, *m.ci_low, Sign::explicit_sign),
                     value_text(m.metric, *m.ci_high, Sign::explicit_sign));
}

std::string p_text(const MetricComparison& m) {
  if (!m.p_value) return "n/a";
  return fmt::format("{:.4f}{}", *m.p_value, m.significant ? " *" : "");
}

}  // namespace

std::string compare_markdown(const Comparison& c) {
  std::string out;
  for (const auto& config : c.configs) {
    out += fmt::format("### {} / {} / {}\n\n", markdown_text(config.bundle), markdown_text(config.question_set),
                      markdown_text(config.label));
    out += "| metric | pairs | base | candidate | delta | 95% CI of delta | p |\n";
    out += "|---|--:|--:|--:|--:|--:|--:|\n";
    for (const auto& m : config.metrics) {
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", m.metric, m.pairs, value_text(m.metric, m.base_mean),
                         value_text(m.metric, m.candidate_mean), delta_text(m), interval_text(m), p_text(m));
    }
    out += "\n";
  }
  if (!c.configs.empty()) {
    out += "p: paired randomization test (sign flips); * marks p < 0.05. CI: paired bootstrap over questions.\n\n";
  }
  for (const auto& name : c.only_in_base) out += "Only in base: " + markdown_text(name) + "\n";
  for (const auto& name : c.only_in_candidate) out += "Only in candidate: " + markdown_text(name) + "\n";
  if (!c.only_in_base.empty() || !c.only_in_candidate.empty()) out += "\n";
  for (const auto& check : c.checks) out += fmt::format("[{}] {}\n", check.crossed ? "FAIL" : "OK", markdown_text(check.message));
  if (!c.checks.empty()) {
    out += c.any_crossed() ? "\nRESULT: a threshold was crossed\n" : "\nRESULT: all thresholds held\n";
  }
  return out;
}

}  // namespace okfbench::reports
