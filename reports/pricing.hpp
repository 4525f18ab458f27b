#pragma once
// A dated table of model list prices (datasets/pricing.yaml), the prices a
// spec gives its own models, and the cost of a trial's model calls.
//
// Which price a model name gets (PricingTable::find), first match wins:
//   1. a price set for exactly this name (a spec's `price:`, or the prices a
//      stored run recorded in its manifest);
//   2. the name reduced to the provider's model id: a provider prefix
//      "openai:" or "anthropic:" is dropped, then a gateway prefix up to the
//      last "/" ("openai:openrouter/anthropic/claude-sonnet-4-5" -> "claude-sonnet-4-5");
//   3. an alias of the table (`aliases:`, e.g. sim -> gpt-4.1-mini,
//      claude-sonnet-4.5 -> claude-sonnet-4-5);
//   4. a row of that exact name;
//   5. a row followed by a date: "-YYYY-MM-DD" or "-YYYYMMDD"
//      (gpt-4o-mini-2024-07-18, claude-sonnet-4-5-20250929). Nothing else
//      matches, so "gpt-4o-audio-preview" is not priced as "gpt-4o".
// A model that matches nothing has no price: its cost is unknown ("n/a"),
// never a guess.
//
// A context trial without model calls is priced as one call whose input is its
// pack (context_tokens) and whose output is empty; a failed trial is priced by
// the calls it completed (none: $0, since a failed request is not billed).
//
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/record.hpp"

namespace okfbench::reports {

struct PricingAlias {
  std::string model;      // e.g. "sim"
  std::string priced_as;  // a row of the table
};

class PricingTable {
 public:
  // Reads datasets/pricing.yaml (or any file in its format). Throws InputError
  // naming the file, line and field of a bad entry.
  static PricingTable load(const std::filesystem::path& path);

  // Prices the model named exactly `model` with `price` (rule 1 above),
  // replacing an earlier set_price of the same name.
  void set_price(const std::string& model, const ModelPrice& price);

  // The row a model name is priced with (see pricing.yaml for the matching
  // rules), or nullptr when the model has no price.
  const ModelPrice* find(std::string_view model) const;

  const std::vector<ModelPrice>& rows() const { return rows_; }
  const std::vector<PricingAlias>& aliases() const { return aliases_; }

 private:
  const ModelPrice* find_row(std::string_view model) const;
  std::vector<ModelPrice> rows_;
  std::vector<PricingAlias> aliases_;
  std::vector<PricedModel> exact_;  // set_price, in the order set
};

// The provider's model id of a model name (rule 2 above): "openai:vendor/gpt-4o-mini" -> "gpt-4o-mini".
std::string_view provider_model_id(std::string_view model);

// The prices of a stored run: `table` with every model of `recorded` priced
// exactly as recorded, so a report rebuilt later is not re-priced by a table
// that changed since.
PricingTable with_recorded_prices(PricingTable table, const std::vector<PricedModel>& recorded);

// The models of `recorded` that `table` prices differently (for a warning
// when a run is reported or resumed with another table).
std::vector<std::string> repriced_models(const PricingTable& table, const std::vector<PricedModel>& recorded);

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
