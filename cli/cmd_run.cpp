// okfbench run: run an experiment spec (default: experiments/default.yaml of the data folder, retrieval/data_home.hpp).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "engine/auto_shard.hpp"
#include "engine/bundle_source.hpp"
#include "cli/commands.hpp"
#include "engine/data_files.hpp"
#include "engine/forecast.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"
#include "engine/runner.hpp"
#include "engine/spend.hpp"
#include "engine/spec.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"

namespace okfbench::cli {
namespace {

struct RunArgs {
  std::string spec;
  std::string out;
  std::vector<std::string> overrides;
  bool dry_run = false;
  bool json = false;
  std::string shard;
  std::optional<std::size_t> shards;
  std::string progress = "auto";
  std::string transcripts = "all";
  bool allow_unpriced = false;
  bool allow_over_forecast = false;
  bool no_forecast = false;
  bool retry_failed = false;
  std::string cache_db;
  std::string record;
  engine::SourceFlags git;  // --refresh, --git-timeout, --git-cache (ref and subdir are in the spec)
};

// How many failures remain and why, grouped by message; the most frequent first.
void print_failures(const engine::RunResult& result) {
  constexpr std::size_t kShown = 10;
  std::size_t transient = 0;
  for (const auto& group : result.failures) {
    if (group.error_class == "transient") transient += group.count;
  }
  std::fprintf(stderr, "okfbench: %zu trial(s) failed (%zu transient, %zu permanent):\n", result.failures_remaining, transient,
               result.failures_remaining - transient);
  for (std::size_t i = 0; i < result.failures.size() && i < kShown; ++i) {
    const auto& group = result.failures[i];
    std::fprintf(stderr, "  %zu x %s: %s\n", group.count, group.error_class.c_str(), group.message.c_str());
  }
  if (result.failures.size() > kShown) std::fprintf(stderr, "  ... and %zu other messages\n", result.failures.size() - kShown);
  if (result.retryable > 0) {
    std::fprintf(stderr, "okfbench: run again with --out %s to retry the %zu transient failure(s) (a trial runs at most %d times)\n",
                 result.out_dir.string().c_str(), result.retryable, engine::kMaxTrialRuns);
  }
  std::fprintf(stderr, "okfbench: --retry-failed re-runs every failed trial, permanent ones included\n");
}

engine::Progress parse_progress(const std::string& text) {
  if (text == "auto") return engine::Progress::automatic;
  if (text == "bar") return engine::Progress::bar;
  if (text == "lines") return engine::Progress::lines;
  if (text == "quiet") return engine::Progress::quiet;
  throw UsageError(fmt::format("--progress {}: use auto, bar, lines or quiet", text));
}

int run(const RunArgs& args) {
  if (args.json && !args.dry_run) throw UsageError("--json goes with --dry-run (a run writes report.json)");
  if (args.json && args.no_forecast) throw UsageError("--json prints the forecast; drop --no-forecast");
  const std::string spec_path =
      args.spec.empty() ? engine::default_experiment().string() : args.spec;
  const engine::ExperimentSpec spec = engine::load_spec(spec_path, args.overrides);
  engine::RunOptions options;
  options.out_dir = args.out;
  options.mode = args.dry_run ? engine::Mode::dry_run : engine::Mode::run;
  options.progress = parse_progress(args.progress);
  if (args.shards && args.shard != "auto") throw UsageError("--shards N goes with --shard auto (a Kubernetes Indexed Job)");
  if (args.shard == "auto") {
    options.shard = engine::shard_from_environment([](const char* name) { return std::getenv(name); }, args.shards);
  } else if (!args.shard.empty()) {
    options.shard = engine::parse_shard(args.shard);
  }
  options.allow_unpriced = args.allow_unpriced;
  options.allow_over_forecast = args.allow_over_forecast;
  options.forecast = !args.no_forecast;
  options.retry_failed = args.retry_failed;
  options.cache_db = args.cache_db;
  options.record_dir = args.record;
  options.transcripts = engine::parse_transcript_mode(args.transcripts);
  options.git = args.git.options();
  options.index_cache = args.git.index_cache_dir();
  const engine::RunResult result = engine::run_experiment(spec, options);
  if (args.dry_run) {
    std::optional<engine::PlanForecast> forecast;
    if (options.forecast) forecast = engine::forecast_plan(spec, options);
    if (args.json) {
      std::printf("%s\n", json_text(engine::dry_run_json(forecast->forecast, spec), 2).c_str());
    } else {
      std::fputs(engine::dry_run_text(result.trials, forecast ? &*forecast : nullptr, spec).c_str(), stdout);
    }
    return 0;
  }
  std::fputs(result.headline.c_str(), stdout);
  std::printf("\n%s\n", engine::spend_line(result).c_str());
  std::printf("wrote report.md, report.html, report.json, results.sqlite, results.jsonl%s, spend.json and manifest.json to %s\n",
              options.transcripts == engine::TranscriptMode::none ? "" : ", transcripts.jsonl.zst",
              result.out_dir.string().c_str());
  if (result.failures_remaining > 0) print_failures(result);
  if (result.stopped_at_cost_cap) {
    std::fprintf(stderr,
                 "okfbench: stopped at the cost cap of $%g (spent $%.6f in all) with %zu trials not run; raise cost_cap_usd "
                 "(--set cost_cap_usd=N) and run again with --out %s to continue\n",
                 spec.cost_cap_usd.value_or(0), result.spent_usd, result.not_run, result.out_dir.string().c_str());
    return 1;
  }
  return result.failures_remaining > 0 ? 1 : 0;
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run an experiment spec: context() against the agent loop over bundles and questions");
  cmd->add_option("spec", args->spec, "Experiment spec YAML (default: experiments/default.yaml in share/okfbench beside the program)");
  cmd->add_option("--out", args->out, "Output folder; run again with the same folder to resume (default: $XDG_CACHE_HOME/okfbench/runs/<UTC time>)");
  cmd->add_option("--set", args->overrides, "Override a spec value: KEY=VALUE, e.g. paths.context.budget_tokens=500")
      ->allow_extra_args(false);
  cmd->add_flag("--dry-run", args->dry_run,
                "List the trials and forecast the spend (tokens, calls, dollars with 80% intervals) with sim; call no provider");
  cmd->add_flag("--json", args->json, "With --dry-run: print the forecast as JSON (configurations and total)");
  cmd->add_option("--shard", args->shard,
                  "Run only slice K of N (K/N), e.g. 1/4; auto takes it from a Slurm job array or, with --shards N, "
                  "a Kubernetes Indexed Job");
  cmd->add_option("--shards", args->shards, "With --shard auto: N, the Indexed Job's completions")
      ->check(number_in(IntegerRange<std::size_t>{1, engine::limits::planned_trials}));
  cmd->add_option("--progress", args->progress, "auto (a bar on a terminal, lines otherwise), bar, lines or quiet");
  cmd->add_flag("--allow-over-forecast", args->allow_over_forecast,
                "Start although the forecast spend is above cost_cap_usd (the run stops when the cap is reached)");
  cmd->add_flag("--no-forecast", args->no_forecast,
                "Skip the forecast pass (a second sim run of the plan): no forecast in manifest.json or --dry-run, "
                "and none checked against cost_cap_usd");
  cmd->add_flag("--allow-unpriced", args->allow_unpriced,
                "Run with a cost cap although a provider model has no price (its spend is not counted)");
  cmd->add_flag("--retry-failed", args->retry_failed, "Run every stored failed trial again, permanent failures included");
  cmd->add_option("--cache-db", args->cache_db, "SQLite response cache for provider models (a hit costs nothing)");
  cmd->add_option("--record", args->record,
                  "Write one cassette per trial into this folder (DIR/<trial key>.jsonl); a model with replay: DIR answers from them");
  cmd->add_option("--transcripts", args->transcripts,
                  "Which trials keep their conversation in DIR/transcripts.jsonl.zst: all, errors or none")
      ->check(CLI::IsMember({"all", "errors", "none"}))
      ->capture_default_str();
  add_source_cache_flags(*cmd, args->git);
  cmd->callback([args, &action] { action = [args] { return run(*args); }; });
}

}  // namespace okfbench::cli
