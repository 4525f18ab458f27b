#pragma once
// A run's forecast (manifest.json `forecast`, made when the run started its
// folder: the plan run offline with sim) against what its stored trials
// spent, per bundle and configuration and in total. report.md, report.html
// and `okfbench compare` show it; a manifest without a forecast (an older
// run, a merged folder whose shards did not all have one) shows nothing.
//
// A trial's spend is the one definition both sides use: the sum of its
// turns' input and output tokens (an unknown count adds 0), its number of
// model calls (turns) and trial_cost's dollars (unknown when it has no price).
// The actual of a configuration sums every stored trial of it, failed ones
// included (they spent too). The error is forecast / actual - 1, shown only
// when every forecast trial is stored (a run stopped at its cost cap, or
// one shard's folder, compares unlike sets).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "reports/pricing.hpp"
#include "reports/record.hpp"

namespace okfbench::reports {

struct Spend {
  double input_tokens = 0, output_tokens = 0, calls = 0;
  std::optional<double> usd = 0.0;  // unknown once any trial has no price
  std::size_t trials = 0;
  void add(const Spend& other);
};

Spend trial_spend(const TrialRecord& record, const PricingTable& pricing);

struct ForecastCheck {
  ForecastRow forecast;
  Spend actual;
  // forecast / actual - 1, when every forecast trial is stored and actual > 0.
  std::optional<double> input_error() const;
  std::optional<double> usd_error() const;
  bool input_within_interval() const;  // low <= actual <= high
};

// One check per forecast row, in its order, then the total (bundle "",
// config "total") over every stored record. Empty without a forecast.
std::vector<ForecastCheck> check_forecast(const RunManifest& manifest, const std::vector<TrialRecord>& records,
                                          const PricingTable& pricing);

// The table's columns and one check's cells, shared by report.md and
// report.html so both show the same values.
const std::vector<std::string>& forecast_columns();
std::vector<std::string> forecast_cells(const ForecastCheck& check);

// report.md's "Forecast against actual" section; "" without checks.
std::string forecast_markdown(const std::vector<ForecastCheck>& checks);

// One line for `okfbench compare`: each side's total forecast against its
// actual input tokens and dollars, for the sides whose manifest has a
// forecast ("" when neither has).
std::string forecast_compare_line(const std::vector<ForecastCheck>& base, const std::vector<ForecastCheck>& candidate);

// The forecast of a folder merged from `shards`: each distinct shard's
// forecast added once, row by row (values, and the bounds, which makes the
// interval at least as wide as an 80% one); nullopt when any has none.
std::optional<RunForecast> merged_forecast(const std::vector<std::optional<RunForecast>>& shards);

}  // namespace okfbench::reports
