#include "engine/run_pricing.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

#include "engine/data_files.hpp"
#include "engine/run_common.hpp"
#include "core/error.hpp"

namespace okfbench::engine {

reports::PricingTable run_pricing(const ExperimentSpec& spec) {
  reports::PricingTable pricing = load_default_pricing();
  for (const auto& m : spec.models) {
    if (m.price) {
      pricing.set_price(m.label, *m.price);
    } else if (m.label != m.name) {
      if (const reports::ModelPrice* price = pricing.find(m.name)) pricing.set_price(m.label, *price);
    }
  }
  return pricing;
}

// A cost cap is only a cap when every model that spends money has a price.
void check_prices(const ExperimentSpec& spec, const reports::PricingTable& pricing, bool allow_unpriced) {
  std::vector<std::string> unpriced;
  for (const auto& m : spec.models) {
    if (m.calls_provider() && !pricing.find(m.label)) unpriced.push_back(m.label);
  }
  if (spec.judge && spec.judge->model != "sim" && !pricing.find(spec.judge->model)) {
    unpriced.push_back(spec.judge->model + " (the judge)");
  }
  if (unpriced.empty()) return;
  if (spec.cost_cap_usd && !allow_unpriced) {
    throw UsageError(fmt::format("the cost cap of ${} cannot be kept: no price for {} (the pricing table has no row for "
                                 "it); give the model a price: {{input_per_mtok: ..., output_per_mtok: ...}} in the "
                                 "spec, or pass --allow-unpriced to run with its spend uncounted",
                                 *spec.cost_cap_usd, fmt::join(unpriced, ", ")));
  }
  log_line(fmt::format("warning: no price for {}: its trials cost n/a{}", fmt::join(unpriced, ", "),
                       spec.cost_cap_usd ? " and do not count against the cost cap" : ""));
}

double judge_spend(const reports::TrialRecord& r, const reports::PricingTable& pricing) {
  return r.judge_usage ? reports::judge_cost(*r.judge_usage, pricing).value_or(0.0) : 0.0;
}

double judge_sum(const std::vector<reports::TrialRecord>& records, const reports::PricingTable& pricing) {
  double sum = 0;
  for (const auto& r : records) sum += judge_spend(r, pricing);
  return sum;
}

double priced_sum(const std::vector<reports::TrialRecord>& records, const reports::PricingTable& pricing, std::size_t* unpriced) {
  double sum = 0;
  for (const auto& r : records) {
    if (auto cost = reports::trial_cost(r, pricing).dollars) {
      sum += *cost;
    } else if (unpriced) {
      ++*unpriced;
    }
  }
  return sum;
}

}  // namespace okfbench::engine
