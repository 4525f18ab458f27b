#pragma once
// The files okfbench ships, found in retrieval::data_home() (an install's
// share/okfbench, or the build tree's staged copy; never the source tree).
#include <filesystem>

#include "reports/pricing.hpp"

namespace okfbench::engine {

// The experiment `okfbench run` runs with no spec: experiments/default.yaml.
std::filesystem::path default_experiment();

// The pricing table: $OKFBENCH_PRICING if set, else pricing.yaml.
std::filesystem::path default_pricing_path();
reports::PricingTable load_default_pricing();

}  // namespace okfbench::engine
