#include "engine/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "engine/data_files.hpp"
#include "core/file_lock.hpp"
#include "engine/forecast.hpp"
#include "engine/judge.hpp"
#include "engine/pacer.hpp"
#include "engine/progress.hpp"
#include "engine/run_bundles.hpp"
#include "engine/run_common.hpp"
#include "engine/run_files.hpp"
#include "engine/run_plan.hpp"
#include "engine/run_pricing.hpp"
#include "engine/spend.hpp"
#include "engine/store.hpp"
#include "engine/trial.hpp"
#include "reports/transcript.hpp"
#include "reports/pricing.hpp"
#include "core/error.hpp"
#include "core/saturate.hpp"
#include "retrieval/tokens.hpp"

// The runner by job: run_plan.* plans the trials, trial.* runs one,
// run_pricing.* prices them, store.* and run_files.* write them, progress.*
// draws progress; this file runs the pool and joins them.
namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- the pool
// A trial to run: a new one, or a stored failure to run again.
struct Todo {
  std::size_t trial = 0;  // index into the planned trials
  int runs_before = 0;    // 0 for a new trial
};

struct RunState {
  RunState(const ExperimentSpec& spec_, const RunOptions& options_, std::vector<LoadedBundle>& bundles_,
           const std::vector<PlannedTrial>& trials_, ResultStore& store_, const reports::PricingTable& pricing_,
           const retrieval::TokenCounter& counter_, std::size_t to_run)
      : spec(spec_), options(options_), trials(trials_), store(store_), pricing(pricing_),
        pacer(spec_.requests_per_minute, spec_.tokens_per_minute,
              options_.pacing_clock ? *options_.pacing_clock : system_pacing_clock()),
        progress(options_.progress, to_run), setup{spec_, options_, bundles_, counter_, pacer, {}, {}, {}, {}, {}, {}} {}
  const ExperimentSpec& spec;
  const RunOptions& options;
  const std::vector<PlannedTrial>& trials;
  ResultStore& store;
  const reports::PricingTable& pricing;
  Pacer pacer;
  ProgressReport progress;
  TrialSetup setup;
  std::unique_ptr<reports::TranscriptWriter> transcripts;  // null with --transcripts none
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;  // guards the figures below
  std::size_t done = 0;
  std::size_t failed = 0;
  std::size_t unpriced = 0;
  double spent = 0;          // counted against the cap: earlier runs' spend and this one's
  double session_spent = 0;  // this run's trials
  double session_judge = 0;  // and their judges
  std::int64_t tokens = 0;
  std::exception_ptr fatal;  // a failure to store a result: the run stops and rethrows it
};

// Whether the run keeps this trial's transcript.
bool keeps_transcript(const RunState& s, const reports::TrialRecord& r) {
  if (!s.transcripts) return false;
  return s.options.transcripts == TranscriptMode::all || !r.error.empty();
}

// The transcript is written before the record: a kill between the two
// leaves a transcript without a record, which the next open drops and the
// resumed run writes again with its trial.
void record_finished(RunState& s, TrialOutcome outcome, int runs_before) {
  reports::TrialRecord& r = outcome.record;
  if (keeps_transcript(s, r)) s.transcripts->add(outcome.transcript, outcome.prompts);
  if (runs_before > 0) {
    r.runs = runs_before + 1;
    s.store.replace(r);
  } else {
    s.store.add(r);
  }
  const auto cost = reports::trial_cost(r, s.pricing);
  const double judged = judge_spend(r, s.pricing);
  std::lock_guard lock(s.mutex);
  ++s.done;
  if (!r.error.empty()) ++s.failed;
  s.spent += judged;
  s.session_judge += judged;
  if (cost.dollars) {
    s.spent += *cost.dollars;
    s.session_spent += *cost.dollars;
  } else {
    ++s.unpriced;
  }
  for (const auto& turn : r.turns) s.tokens = saturating_add(s.tokens, turn.input_tokens.value_or(0));
  if (s.spec.cost_cap_usd && s.spent >= *s.spec.cost_cap_usd) s.stop = true;
  s.progress.update(s.done, s.tokens);
}

// Runs trials until none are left or the run stops. A failure to store a
// result (a full disk) stops every worker; run_experiment rethrows it.
void worker(RunState& s, const std::vector<Todo>& todo) {
  try {
    for (std::size_t i = s.next++; i < todo.size() && !s.stop; i = s.next++) {
      record_finished(s, run_trial(s.setup, s.trials[todo[i].trial]), todo[i].runs_before);
    }
  } catch (...) {
    std::lock_guard lock(s.mutex);
    if (!s.fatal) s.fatal = std::current_exception();
    s.stop = true;
  }
}

// Whether a stored record is a failure that this run should try again.
bool run_again(const reports::TrialRecord& r, const RunOptions& options) {
  if (r.error.empty()) return false;
  if (options.retry_failed) return true;
  return r.error_class == "transient" && r.runs < kMaxTrialRuns;
}


std::vector<FailureGroup> group_failures(const std::vector<reports::TrialRecord>& records) {
  std::map<std::pair<std::string, std::string>, std::size_t> counts;
  for (const auto& r : records) {
    if (!r.error.empty()) ++counts[{r.error_class.empty() ? "permanent" : r.error_class, r.error}];
  }
  std::vector<FailureGroup> out;
  for (const auto& [key, count] : counts) out.push_back({key.second, key.first, count});
  std::stable_sort(out.begin(), out.end(), [](const FailureGroup& a, const FailureGroup& b) { return a.count > b.count; });
  return out;
}


}  // namespace

RunResult run_experiment(const ExperimentSpec& spec, const RunOptions& options) {
  const auto start = Clock::now();
  RunResult result;
  result.out_dir = options.out_dir.empty() && options.mode == Mode::run ? default_out_dir() : options.out_dir;
  // Checked before any bundle is built, so a run that cannot go ahead says so at once:
  // prices under a cap, every provider model's key and URL, the folder's lock.
  reports::PricingTable pricing = run_pricing(spec);
  std::optional<FileLock> lock;
  std::map<std::string, agents::Endpoint> endpoints;
  if (options.mode == Mode::run) {
    check_prices(spec, pricing, options.allow_unpriced);
    endpoints = resolve_endpoints(spec);
    std::error_code ec;
    fs::create_directories(result.out_dir, ec);
    if (ec) throw InputError(fmt::format("cannot create the output folder {}: {}", result.out_dir.string(), ec.message()));
    lock = FileLock::acquire(result.out_dir / "okfbench.lock", FileLock::Wait::no,
                             "another okfbench run or merge is writing this folder; wait for it to finish or pass another --out");
  }
  std::vector<LoadedBundle> bundles;
  for (const auto& source : spec.bundles) bundles.push_back(load_bundle(spec, source, options.git, options.index_cache));
  const std::vector<PlannedTrial> trials = plan_trials(spec, bundles, options.shard);
  result.planned = trials.size();
  if (options.mode == Mode::dry_run) {
    result.setup_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.trials = trials;
    return result;
  }
  reports::RunManifest fresh = make_manifest(spec, pricing, input_hashes(bundles, default_pricing_path()));
  const bool starts_folder = !fs::exists(result.out_dir / "manifest.json");
  if (options.forecast && starts_folder) {
    log_line("forecasting the spend with sim first (engine/README.md, \"Forecast\"; --no-forecast skips it)");
    fresh.forecast = forecast_run(spec, options);
    // Before the manifest is written, so a refused folder can start again with another spec.
    check_forecast_cap(*fresh.forecast, spec, options.allow_over_forecast);
  }
  const reports::RunManifest manifest = open_manifest(fresh, result.out_dir, pricing);
  if (options.forecast && !starts_folder && manifest.forecast) {
    check_forecast_cap(*manifest.forecast, spec, options.allow_over_forecast);
  }
  const std::string started = utc_now("%Y-%m-%dT%H:%M:%SZ");
  pricing = reports::with_recorded_prices(std::move(pricing), manifest.prices);
  result.setup_seconds = std::chrono::duration<double>(Clock::now() - start).count();

  ResultStore store = ResultStore::open(result.out_dir);
  const std::vector<reports::TrialRecord> stored_records = store.records();
  const std::vector<reports::TrialRecord> superseded = store.superseded();
  std::map<std::string, const reports::TrialRecord*> stored;
  for (const auto& r : stored_records) stored.emplace(r.trial_key, &r);
  std::vector<Todo> todo;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const auto it = stored.find(trials[i].key);
    if (it == stored.end()) {
      todo.push_back({i, 0});
    } else if (run_again(*it->second, options)) {
      todo.push_back({i, it->second->runs});
      ++result.retried;
    }
  }
  result.already_stored = trials.size() - (todo.size() - result.retried);
  const auto counter = retrieval::make_counter(kCounter);
  RunState state(spec, options, bundles, trials, store, pricing, *counter, todo.size());
  std::optional<JudgeSettings> judge;
  if (spec.judge) judge = JudgeSettings{spec.judge->model, spec.judge->votes, cache_folder(spec) / "judge-responses.sqlite"};
  state.setup.graders = make_graders(spec.graders, judge);
  prepare_models(state.setup, std::move(endpoints));
  if (options.transcripts != TranscriptMode::none) {
    std::set<std::string> keys;
    for (const auto& r : stored_records) keys.insert(r.trial_key);
    state.transcripts = reports::TranscriptWriter::open(result.out_dir, keys);
  }
  // Spend so far counts against the cap: the trials' and their judges',
  // failed runs that were replaced included.
  for (const auto* records : {&stored_records, &superseded}) {
    state.spent += priced_sum(*records, pricing, nullptr) + judge_sum(*records, pricing);
  }
  if (spec.cost_cap_usd && state.spent >= *spec.cost_cap_usd) state.stop = true;
  log_line(fmt::format("{} trials planned, {} already stored in {}, {} to run ({} of them failed before) on {} worker(s)",
                       trials.size(), result.already_stored, result.out_dir.string(), todo.size(), result.retried,
                       spec.concurrency));
  const auto pool_start = Clock::now();
  {
    std::vector<std::jthread> pool;
    const unsigned workers = std::max(1u, std::min<unsigned>(spec.concurrency, static_cast<unsigned>(std::max<std::size_t>(1, todo.size()))));
    for (unsigned w = 0; w < workers; ++w) pool.emplace_back([&state, &todo] { worker(state, todo); });
  }
  if (state.fatal) std::rethrow_exception(state.fatal);
  store.flush_jsonl();
  result.trial_seconds = std::chrono::duration<double>(Clock::now() - pool_start).count();
  result.ran = state.done;
  result.failed = state.failed;
  result.stopped_at_cost_cap = state.stop && state.done < todo.size();
  result.not_run = todo.size() - state.done;
  const std::vector<reports::TrialRecord> records = store.records();
  const std::vector<reports::TrialRecord> replaced = store.superseded();
  result.superseded_usd = priced_sum(replaced, pricing, nullptr);
  result.spent_usd = priced_sum(records, pricing, &result.unpriced) + result.superseded_usd;
  result.judge_spent_usd = judge_sum(records, pricing) + judge_sum(replaced, pricing);
  result.session_usd = state.session_spent;
  result.session_judge_usd = state.session_judge;
  result.failures = group_failures(records);
  for (const auto& r : records) {
    if (r.error.empty()) continue;
    ++result.failures_remaining;
    if (r.error_class == "transient" && r.runs < kMaxTrialRuns) ++result.retryable;
  }
  result.headline = write_run_reports(manifest, records, pricing, result.out_dir);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  record_spend(result.out_dir, result, spec, started);
  return result;
}

}  // namespace okfbench::engine
