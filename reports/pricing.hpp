#pragma once
// A dated table of model list prices (datasets/pricing.yaml) and the cost of a
// trial's model calls under it.
//
// A context trial without model calls is priced as one call whose input is its
// pack (context_tokens) and whose output is empty. A model named the way specs
// name a provider's model ("openai:gpt-4.1-mini") is priced by the model name.
//
// cost = (input - cached - cache_write) * input_price
//      + cached * cached_input_price + cache_write * cache_write_price
//      + output * output_price,            all prices per million tokens.
// input_tokens includes cached and cache-write tokens (DESIGN.md agents/
// "Usage normalisation"), so they are subtracted before pricing the rest.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/record.hpp"

namespace okfbench::reports {

struct ModelPrice {
  std::string model;
  double input = 0.0;         // dollars per million uncached input tokens
  double cached_input = 0.0;  // dollars per million input tokens served from cache
  double cache_write = 0.0;   // dollars per million input tokens written to cache
  double output = 0.0;        // dollars per million output tokens
  std::string source;
  std::string as_of;  // date the price was read at `source`, YYYY-MM-DD
};

struct PricingAlias {
  std::string model;      // e.g. "sim"
  std::string priced_as;  // a row of the table
};

class PricingTable {
 public:
  // Reads datasets/pricing.yaml (or any file in its format). Throws InputError
  // naming the file, line and field of a bad entry.
  static PricingTable load(const std::filesystem::path& path);
  // The table shipped with okfbench: $OKFBENCH_PRICING if set, else
  // <source tree>/datasets/pricing.yaml.
  static PricingTable load_default();

  // The row a model name is priced with (see pricing.yaml for the matching
  // rules), or nullptr when the model has no price.
  const ModelPrice* find(std::string_view model) const;

  const std::vector<ModelPrice>& rows() const { return rows_; }
  const std::vector<PricingAlias>& aliases() const { return aliases_; }

 private:
  const ModelPrice* find_row(std::string_view model) const;
  std::vector<ModelPrice> rows_;
  std::vector<PricingAlias> aliases_;
};

struct TrialCost {
  std::optional<double> dollars;  // unknown when the model has no price or a turn's input/output is unknown
  // Turns whose cached or cache-write count was unknown; they were priced as
  // if nothing was cached (the upper bound).
  int turns_cache_unknown = 0;
};

TrialCost trial_cost(const TrialRecord& record, const PricingTable& pricing);

// Dollars of a judge's charged calls (reports/record.hpp JudgeUsage) under the
// judge model's price, by the same formula; nullopt when the judge model has
// no price or its input or output count is unknown. Never part of trial_cost.
std::optional<double> judge_cost(const JudgeUsage& usage, const PricingTable& pricing);

}  // namespace okfbench::reports
