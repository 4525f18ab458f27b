#pragma once
// Planning: a spec and its loaded bundles expanded into trials (the order and
// the keys runner.hpp describes), cut to one shard.
#include <string>
#include <vector>

#include "datasets/questions.hpp"
#include "engine/run_bundles.hpp"
#include "engine/runner.hpp"
#include "engine/spec.hpp"
#include "reports/record.hpp"

namespace okfbench::engine {

// The spec's path configurations crossed with its models and cache models:
// context configurations first, then agent ones, then external ones (with
// the models runs_external admits only). Throws InputError when no agent
// tool list fits a surface.
std::vector<reports::PathConfig> path_configs(const ExperimentSpec& spec);

// A model an external agent is run with: one that calls a provider (its
// endpoint is the proxy's upstream), or sim standing in for one in the forecast.
bool runs_external(const ModelSpec& m);

// The stable key of one trial (see runner.hpp).
std::string trial_key(const ExperimentSpec& spec, const LoadedBundle& b, const datasets::Question& q,
                      const reports::PathConfig& c);

// Every trial of `shard`, in plan order: round-robin over (bundle,
// configuration), so a run stopped early holds a sample of every row (see
// runner.hpp). Throws InputError when the whole plan holds more than
// limits::planned_trials.
std::vector<PlannedTrial> plan_trials(const ExperimentSpec& spec, const std::vector<LoadedBundle>& bundles,
                                      const Shard& shard);

}  // namespace okfbench::engine
