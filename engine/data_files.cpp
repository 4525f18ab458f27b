#include "engine/data_files.hpp"

#include <cstdlib>

#include "retrieval/data_home.hpp"

namespace okfbench::engine {

std::filesystem::path default_experiment() { return retrieval::data_home() / "experiments" / "default.yaml"; }

std::filesystem::path default_pricing_path() {
  if (const char* env = std::getenv("OKFBENCH_PRICING"); env && *env) return env;
  return retrieval::data_home() / "pricing.yaml";
}

reports::PricingTable load_default_pricing() { return reports::PricingTable::load(default_pricing_path()); }

}  // namespace okfbench::engine
