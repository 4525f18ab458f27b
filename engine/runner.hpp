#pragma once
// The experiment runner: materialises a spec's bundles, expands the spec into
// trials, runs them on a thread pool and stores each one as it finishes.
//
//   okfbench run [SPEC] [--out DIR] [--set KEY=VALUE]... [--dry-run] [--shard K/N]
//                [--allow-unpriced] [--retry-failed] [--cache-db FILE] [--record DIR]
//
// Bundles: `path` bundles are used in place; `generate` and `convert` bundles
// are written once into the spec's cache_dir (keyed by what determines their
// content) and reused by later runs. Each is built in a temporary folder and
// published by rename under CACHE/.NAME.lock, so concurrent shards wait for
// one build instead of reading a half-written bundle.
//
// Trials, round-robin over the report's rows: round i takes the i-th trial
// (questions in order, then again for each repeat) of every bundle and, for
// each bundle, of every path configuration (context configurations first,
// then agent ones; each crossed with models and cache models), so a run
// stopped by its cost cap has a sample of every row. A trial's key is stable_hash of its bundle identity, question (id, text and
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
//   Its model calls share a deadline (the model's trial_deadline_seconds):
//   no HTTP attempt starts after it and each attempt is cut to end by it.
//   Every HTTP attempt, retries included, and every sim call waits for the
//   run's pacer (engine/pacer.hpp).
//
// Resume: an output folder remembers its spec hash in manifest.json. Running
// the same spec with the same --out again skips every stored trial; a
// different spec, or the same spec over bundles, question sets or a
// vocabulary whose content changed, is refused. Failed trials: a transient
// failure (network, timeout, HTTP 429/5xx, the trial deadline) is run again
// by each resume until the trial has run kMaxTrialRuns times; a permanent one
// (another 4xx, an unusable reply, a missing cassette) only with
// --retry-failed, which re-runs every failed trial. The record a re-run
// replaces moves to the store's `superseded` table and its spend still
// counts.
//
// Spend: spend.hpp prints it for this session and in total and records it
// in DIR/spend.json. The cost cap stops new trials once the priced spend of stored
// trials (superseded runs included) and of their judges reaches it (reports
// keep the judge's spend apart from the path's); trials already running still
// finish and are stored; running again with a higher cap continues. Every
// model that calls a provider must have a price when there is a cap (the
// pricing table by name, see reports/pricing.hpp, or the spec's `price:`),
// else the run refuses to start (UsageError) unless allow_unpriced. The
// prices are recorded in manifest.json when the run starts and a resume keeps
// them.
//
// One folder, one process: the run holds DIR/okfbench.lock (flock) from
// start to end; a second run or merge on the folder refuses, naming the
// holder.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/git_source.hpp"
#include "engine/pacer.hpp"
#include "engine/spec.hpp"
#include "engine/transcripts.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"

namespace okfbench::engine {

struct Shard {
  std::size_t index = 1;  // 1-based K of K/N
  std::size_t count = 1;  // N
};

// Parses "K/N" (1 <= K <= N). Throws UsageError otherwise.
Shard parse_shard(std::string_view text);

enum class Progress { automatic, bar, lines, quiet };
enum class Mode { run, dry_run };

// A trial that keeps failing transiently runs at most this often: its first
// run and three resumes.
inline constexpr int kMaxTrialRuns = 4;

struct RunOptions {
  std::filesystem::path out_dir;  // "" = default_out_dir() (engine/run_files.hpp)
  Mode mode = Mode::run;
  Shard shard;
  Progress progress = Progress::automatic;
  bool allow_unpriced = false;  // run with a cost cap although a provider model has no price
  bool retry_failed = false;    // re-run every stored failure, permanent ones and exhausted ones too
  // The response cache (agents::CachingModel) for provider models; "" = none.
  std::filesystem::path cache_db;
  // Writes one cassette per trial, RECORD_DIR/<trial key>.jsonl; "" = none.
  // A model entry with `replay: RECORD_DIR` answers from them.
  std::filesystem::path record_dir;
  PacingClock* pacing_clock = nullptr;  // nullptr = the system clock; tests pass a fake one
  // Which trials keep their conversation in DIR/transcripts.jsonl.zst.
  TranscriptMode transcripts = TranscriptMode::all;
  // How the spec's git bundles are checked out: --refresh, --git-timeout, --git-cache.
  GitOptions git;
  // The index cache folder (--index-cache, --no-index-cache); none when empty.
  std::filesystem::path index_cache;
  // A run that starts a folder first forecasts its spend (engine/forecast.hpp,
  // the plan run offline with sim) and records it in manifest.json; a
  // forecast above cost_cap_usd (this one, or on resume the recorded one) is
  // refused before any trial unless allow_over_forecast. false (--no-forecast)
  // makes no forecast and checks none: the manifest has none, and a run that
  // the cap will stop part-way starts anyway.
  bool forecast = true;
  bool allow_over_forecast = false;
};

// Stored failures with one message, for the end-of-run summary.
struct FailureGroup {
  std::string message;
  std::string error_class;  // transient or permanent
  std::size_t count = 0;
};

// One planned trial (what --dry-run lists).
struct PlannedTrial {
  std::string key;
  std::size_t bundle = 0;  // index into the materialised bundles
  std::string bundle_name;
  std::string question_id;
  reports::PathConfig config;
};

struct RunResult {
  std::filesystem::path out_dir;
  std::size_t planned = 0;        // trials in this shard
  std::size_t already_stored = 0; // skipped because a previous run stored them
  std::size_t ran = 0;            // stored by this run
  std::size_t failed = 0;         // of those, trials with an error
  std::size_t retried = 0;        // of those run now, stored failures run again
  bool stopped_at_cost_cap = false;
  std::size_t not_run = 0;        // trials this run had to run but never started (the cost cap)
  double spent_usd = 0;           // priced spend of every stored trial, superseded runs included
  double session_usd = 0;         // of that, the trials this call ran (the rest was spent by earlier runs)
  double session_judge_usd = 0;   // their judges' priced spend
  double superseded_usd = 0;      // of that, failed runs that were run again
  double judge_spent_usd = 0;     // priced spend of their judge, apart (the cost cap counts both)
  std::size_t failures_remaining = 0;  // stored trials with an error after this run
  std::size_t retryable = 0;           // of those, transient ones a resume would run again
  std::vector<FailureGroup> failures;  // the remaining failures by class and message, most frequent first
  std::size_t unpriced = 0;       // stored trials whose cost is unknown (not counted in spent_usd)
  double seconds = 0;               // the whole call
  double setup_seconds = 0;         // generating, converting, loading and indexing bundles
  double trial_seconds = 0;         // running the trials (wall time of the pool)
  std::vector<PlannedTrial> trials;          // dry run: the planned trials
  std::string headline;  // the headline table (Markdown), empty for a dry run
};

// Runs (or, with Mode::dry_run, plans) the experiment. Logs and progress go to
// stderr. Throws InputError / UsageError for unusable specs, bundles or
// folders.
RunResult run_experiment(const ExperimentSpec& spec, const RunOptions& options);

// Writes report.md, report.html (the explorer) and report.json of a run
// folder (as `run` and `merge` leave it) and returns the headline table.
std::string write_run_reports(const reports::RunManifest& manifest, const std::vector<reports::TrialRecord>& records,
                              const reports::PricingTable& pricing, const std::filesystem::path& dir);

}  // namespace okfbench::engine
