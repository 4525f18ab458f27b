#pragma once
// run --dry-run's forecast: what a run will spend, before it spends anything.
//
// Every trial of the plan (this shard's) is run with sim, offline, into a
// temporary folder that is removed afterwards: a sim model as itself, so its
// forecast is exact; any other model as sim with the profile the spec's
// `forecast: {MODEL: PROFILE.yaml}` names for it (okfbench calibrate fits
// one), else with the default profile, and each row says which. A provider
// model's trials are planned as the run plans them (cache "provider", one
// per configuration), so each row's label is the run's; sim runs them with
// the openai cache model for openai: models (that provider caches without
// being asked) and none for others. Dollars use
// the run's own prices for the model's label; the judge is left out.
//
// The 80% interval of a profiled row is the 10th to 90th percentile of the
// row's total over 1,000 bootstrap resamples of its trials (seeded by the
// spec's seed): how far the total moves for other questions of the same
// kind. It does not hold how far the profile is from the model; calibrate's
// held-out check measures that. An exact row's interval is its value; the
// total's resamples every profiled row together.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/runner.hpp"
#include "engine/spec.hpp"
#include "reports/forecast.hpp"
#include "reports/record.hpp"

namespace okfbench::engine {

// The figures (reports/record.hpp; a run keeps them in manifest.json).
using reports::ForecastInterval;
using reports::ForecastRow;
using Forecast = reports::RunForecast;

// What --dry-run prints for `spec` under `options` (its shard; its git
// options), and what a run records in its manifest when it starts a folder.
// Throws what run_experiment throws for an unusable spec.
Forecast forecast_run(const ExperimentSpec& spec, const RunOptions& options);

// The forecast with each planned trial's own forecast spend (by trial key),
// which --dry-run lists beside the trial: the list and the table come from
// the one sim run, so their totals agree.
struct PlanForecast {
  Forecast forecast;
  std::map<std::string, reports::Spend> trials;
};
PlanForecast forecast_plan(const ExperimentSpec& spec, const RunOptions& options);

// Whether the forecast dollars are above the spec's cost_cap_usd (false
// without a cap, or when the forecast has no price).
bool above_cost_cap(const Forecast& forecast, const ExperimentSpec& spec);

// A forecast above the cap would stop the run part-way: refused (UsageError
// giving the forecast, the cap and the flags) unless `allow_over_forecast`.
void check_forecast_cap(const Forecast& forecast, const ExperimentSpec& spec, bool allow_over_forecast);

// --dry-run's text: the planned trials, each with its forecast input tokens
// ("-" without a forecast), then the forecast table with aligned columns
// and dollars as "$0.239720", and how the forecast stands to the cost cap.
// `forecast` is null with --no-forecast.
std::string dry_run_text(const std::vector<PlannedTrial>& trials, const PlanForecast* forecast, const ExperimentSpec& spec);

// --dry-run --json: the forecast (counts as integers, dollars to 1e-6) and,
// under a cap, cost_cap_usd and over_cost_cap.
nlohmann::json dry_run_json(const Forecast& forecast, const ExperimentSpec& spec);

}  // namespace okfbench::engine
