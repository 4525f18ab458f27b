#pragma once
// What a run writes besides the records: manifest.json (what ran, on what,
// priced how; resume checks it) and the reports.
#include <filesystem>
#include <vector>

#include "engine/run_bundles.hpp"
#include "engine/spec.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"

namespace okfbench::engine {

// The content hashes of what the run reads: every bundle folder, its question
// set, the tokenizer vocabulary and the pricing table.
std::vector<reports::InputHash> input_hashes(const std::vector<LoadedBundle>& bundles, const std::filesystem::path& pricing_file);

// A new manifest for the spec: date, host, git SHA, build, models with their
// endpoints and prices, seeds and `inputs`.
reports::RunManifest make_manifest(const ExperimentSpec& spec, const reports::PricingTable& pricing,
                                   std::vector<reports::InputHash> inputs);

// The manifest of the folder. Resuming keeps the stored one: another spec, or
// the same spec over bundles, questions or a vocabulary whose content
// changed, is refused (InputError); prices that changed are kept as they were
// recorded (with a warning) so the run is never re-priced halfway.
reports::RunManifest open_manifest(const reports::RunManifest& fresh, const std::filesystem::path& dir,
                                   const reports::PricingTable& pricing);

// A run folder when --out is not given: CACHE/runs/NAME under the documented
// cache folder (core/files.hpp, user_cache_dir), never the working directory;
// NAME is the UTC time when empty. InputError when no cache folder is known.
std::filesystem::path default_out_dir(const std::string& name = {});

}  // namespace okfbench::engine
