#pragma once
// Pricing a run: the table it is priced with, the check that a cost cap can
// be kept, and the spend of stored trials (their paths, and their judges
// apart).
#include <cstddef>
#include <vector>

#include "engine/spec.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"

namespace okfbench::engine {

// The pricing of this run before any manifest: the table, a spec's own
// prices, and a labelled model priced as the model it names.
reports::PricingTable run_pricing(const ExperimentSpec& spec);

// A cost cap is only a cap when every model that spends money has a price:
// throws UsageError for an unpriced provider model under a cap unless
// allow_unpriced, and otherwise warns.
void check_prices(const ExperimentSpec& spec, const reports::PricingTable& pricing, bool allow_unpriced);

// What the judge of a trial cost; 0 without a judge or a price for it. The
// cost cap counts it (it is money spent), reports never add it to the path.
double judge_spend(const reports::TrialRecord& r, const reports::PricingTable& pricing);
double judge_sum(const std::vector<reports::TrialRecord>& records, const reports::PricingTable& pricing);

// The priced spend of `records` (their paths; judges apart, judge_sum);
// `unpriced` counts the trials whose cost is unknown.
double priced_sum(const std::vector<reports::TrialRecord>& records, const reports::PricingTable& pricing, std::size_t* unpriced);

}  // namespace okfbench::engine
