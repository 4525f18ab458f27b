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
#include <optional>
#include <string>
#include <vector>

#include "engine/runner.hpp"
#include "engine/spec.hpp"
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

}  // namespace okfbench::engine
