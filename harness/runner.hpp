#pragma once
// The experiment runner: materialises a spec's bundles, expands the spec into
// trials, runs them on a thread pool and stores each one as it finishes.
//
//   okfbench run [SPEC] [--out DIR] [--set KEY=VALUE]... [--dry-run] [--shard K/N]
//
// Bundles: `path` bundles are used in place; `generate` and `convert` bundles
// are written once into the spec's cache_dir (keyed by what determines their
// content) and reused by later runs.
//
// Trials, in this order: bundle, question, path configuration (context
// configurations first, then agent ones), model, cache model, repeat. A
// trial's key is stable_hash of its bundle identity, question (id, text and
// judgments), configuration label, model, cache model, repeat index and the
// spec seed, so an unchanged trial keeps its key across runs and specs.
//
// One trial:
//   context  pack_context() with the configuration, then one model call with
//            the pack and the question (no tools). Evidence: the packed ids.
//   agent    run_agent() over BundleTools with the configured surface and
//            tools. Evidence: the concepts whose body was opened. remember()
//            is offered (its schema is paid for) but answers with an error,
//            because every trial of a bundle shares one copy of it.
//   Each trial gets its own model instance, so sim's simulated prompt cache
//   holds what that trial sent and results do not depend on scheduling.
//
// Resume: an output folder remembers its spec hash in manifest.json. Running
// the same spec with the same --out again skips every stored trial; a
// different spec is refused. The cost cap stops new trials once the priced
// spend of stored trials reaches it (trials already running still finish and
// are stored); running again with a higher cap continues. The cap counts what
// the judge (graders) spent as well, though reports keep it apart.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/spec.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"

namespace okfbench::harness {

struct Shard {
  std::size_t index = 1;  // 1-based K of K/N
  std::size_t count = 1;  // N
};

// Parses "K/N" (1 <= K <= N). Throws UsageError otherwise.
Shard parse_shard(std::string_view text);

enum class Progress { automatic, bar, lines, quiet };
enum class Mode { run, dry_run };

struct RunOptions {
  std::filesystem::path out_dir;  // "" = okfbench-out/<UTC timestamp>
  Mode mode = Mode::run;
  Shard shard;
  Progress progress = Progress::automatic;
};

// One planned trial (what --dry-run lists).
struct PlannedTrial {
  std::string key;
  std::size_t bundle = 0;  // index into the materialised bundles
  std::string bundle_name;
  std::string question_id;
  reports::PathConfig config;
  std::int64_t estimated_input_tokens = 0;
};

struct RunResult {
  std::filesystem::path out_dir;
  std::size_t planned = 0;        // trials in this shard
  std::size_t already_stored = 0; // skipped because a previous run stored them
  std::size_t ran = 0;            // stored by this run
  std::size_t failed = 0;         // of those, trials with an error
  bool stopped_at_cost_cap = false;
  double spent_usd = 0;           // priced spend of every stored trial
  double judge_spent_usd = 0;     // priced spend of their judge, apart (the cost cap counts both)
  std::size_t unpriced = 0;       // stored trials whose cost is unknown (not counted in spent_usd)
  double seconds = 0;               // the whole call
  double setup_seconds = 0;         // generating, converting, loading and indexing bundles
  double trial_seconds = 0;         // running the trials (wall time of the pool)
  std::int64_t estimated_input_tokens = 0;  // dry run: the sum over planned trials
  std::vector<PlannedTrial> trials;          // dry run: the planned trials
  std::string headline;  // the headline table (Markdown), empty for a dry run
};

// Runs (or, with Mode::dry_run, plans) the experiment. Logs and progress go to
// stderr. Throws InputError / UsageError for unusable specs, bundles or
// folders.
RunResult run_experiment(const ExperimentSpec& spec, const RunOptions& options);

// The estimate --dry-run prints for one trial: context trials pay their budget
// plus the prompt around it; agent trials pay the tool schemas and system
// prompt every turn plus what the loop accumulates (constants calibrated on
// the default experiment with sim, see docs/runner.md).
std::int64_t estimate_input_tokens(const reports::PathConfig& config);

// Writes report.md and report.json of a run folder (as `run` and `merge`
// leave it) and returns the headline table.
std::string write_run_reports(const reports::RunManifest& manifest, const std::vector<reports::TrialRecord>& records,
                              const reports::PricingTable& pricing, const std::filesystem::path& dir);

}  // namespace okfbench::harness
