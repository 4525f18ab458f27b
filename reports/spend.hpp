#pragma once
// Where a trial's money went: each call's dollars split by the origin of its
// tokens (TurnRecord::attribution; the origins are listed in
// engine/attribution.hpp), and the output apart.
//
// Per call: the input is priced as reports/pricing.hpp prices it and split
// over the attribution's parts in request order, cached tokens first (a
// prompt cache serves a prefix), then cache writes, then uncached input.
// When the parts do not sum to the provider's input count (a real provider
// counts its own framing), they are scaled to it, so the shares are of what
// was billed; the difference in tokens is attribution_difference(). Output
// tokens are the origin "output".
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/pricing.hpp"
#include "reports/record.hpp"

namespace okfbench::reports {

// Dollars by origin; nullopt when the model has no price or a turn has no
// attribution or an unknown input or output count.
std::optional<std::map<std::string, double>> spend_by_origin(const TrialRecord& record, const PricingTable& pricing);

// The origin's group for a table: "pack:ID" -> "pack"; every other origin is its own group.
std::string origin_group(std::string_view origin);

// One origin group's part of a configuration's spend.
struct SpendShare {
  std::string group;  // origin_group() of the origins summed
  double dollars = 0;
  std::optional<double> share;  // of all the dollars; nullopt when they sum to 0
};

// The groups of `by_origin` (dollars by origin, as SummaryRow::spend_by_origin),
// the biggest first, ties in group name order.
std::vector<SpendShare> spend_shares(const std::map<std::string, double>& by_origin);

// Sum over the trial's turns of input_tokens minus the attribution's sum
// (0 for sim; nullopt when a turn lacks either).
std::optional<std::int64_t> attribution_difference(const TrialRecord& record);

}  // namespace okfbench::reports
