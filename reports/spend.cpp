#include "reports/spend.hpp"

#include <algorithm>
#include <vector>

namespace okfbench::reports {

namespace {

// One call's input dollars by origin, the cheapest tokens (cached) charged
// to the parts that come first.
void add_input(std::map<std::string, double>& out, const TurnRecord& t, const ModelPrice& price) {
  double attributed = 0;
  for (const auto& p : t.attribution) attributed += static_cast<double>(p.tokens);
  if (attributed <= 0) return;
  const auto input = static_cast<double>(*t.input_tokens);
  const double scale = input / attributed;
  double cached = std::min(static_cast<double>(t.cached_tokens.value_or(0)), input);
  double written = std::min(static_cast<double>(t.cache_write_tokens.value_or(0)), input - cached);
  for (const auto& p : t.attribution) {
    double tokens = static_cast<double>(p.tokens) * scale;
    const double from_cache = std::min(tokens, cached);
    cached -= from_cache;
    tokens -= from_cache;
    const double to_cache = std::min(tokens, written);
    written -= to_cache;
    tokens -= to_cache;
    out[p.origin] += (from_cache * price.cached_input + to_cache * price.cache_write + tokens * price.input) / 1e6;
  }
}

}  // namespace

std::optional<std::map<std::string, double>> spend_by_origin(const TrialRecord& record, const PricingTable& pricing) {
  const ModelPrice* price = pricing.find(record.config.model);
  if (!price || record.turns.empty()) return std::nullopt;
  std::map<std::string, double> out;
  for (const auto& t : record.turns) {
    if (!t.input_tokens || !t.output_tokens || t.attribution.empty()) return std::nullopt;
    add_input(out, t, *price);
    out["output"] += static_cast<double>(*t.output_tokens) * price->output / 1e6;
  }
  return out;
}

std::string origin_group(std::string_view origin) {
  if (origin.starts_with("pack:")) return "pack";
  return std::string(origin);
}

std::optional<std::int64_t> attribution_difference(const TrialRecord& record) {
  std::int64_t difference = 0;
  for (const auto& t : record.turns) {
    if (!t.input_tokens || t.attribution.empty()) return std::nullopt;
    difference += *t.input_tokens;
    for (const auto& p : t.attribution) difference -= p.tokens;
  }
  return difference;
}

std::vector<SpendShare> spend_shares(const std::map<std::string, double>& by_origin) {
  double total = 0;
  std::map<std::string, double> groups;
  for (const auto& [origin, dollars] : by_origin) {
    total += dollars;
    groups[origin_group(origin)] += dollars;
  }
  std::vector<SpendShare> out;
  for (const auto& [group, dollars] : groups) out.push_back({group, dollars, total > 0 ? std::optional(dollars / total) : std::nullopt});
  std::stable_sort(out.begin(), out.end(), [](const SpendShare& a, const SpendShare& b) { return a.dollars > b.dollars; });
  return out;
}

}  // namespace okfbench::reports
