// okfbench tune: run (or reuse) a sweep and print the cheapest configurations
// that meet a quality target, with the Pareto front.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "engine/data_files.hpp"
#include "engine/run_files.hpp"
#include "engine/runner.hpp"
#include "engine/spec.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "reports/summary.hpp"
#include "reports/tune.hpp"

namespace okfbench::cli {
namespace {

struct TuneArgs {
  std::string spec;
  std::string target;
  std::string minimize = "cost";
  std::string out;
  std::vector<std::string> overrides;
  std::string pricing;
  bool quiet = false;
};

int run_tune(const TuneArgs& args) {
  const reports::TuneTarget target = reports::parse_tune_target(args.target);
  const engine::ExperimentSpec spec = engine::load_spec(args.spec, args.overrides);
  const auto pricing =
      args.pricing.empty() ? engine::load_default_pricing() : reports::PricingTable::load(args.pricing);
  engine::RunOptions options;
  // Keyed by the spec hash, so tuning the same sweep again reuses every stored trial.
  options.out_dir = args.out;
  if (args.out.empty()) options.out_dir = engine::default_out_dir("tune-" + spec.hash);
  options.progress = args.quiet ? engine::Progress::quiet : engine::Progress::automatic;
  // A sweep above its cap is tuned over the trials stored when the cap stops it
  // (round-robin, so every configuration has some); the runner logs the forecast.
  options.allow_over_forecast = true;
  const engine::RunResult run = engine::run_experiment(spec, options);
  std::fprintf(stderr, "sweep in %s: %zu trials, %zu run now (%zu failed), %zu reused\n", run.out_dir.string().c_str(),
               run.planned, run.ran, run.failed, run.already_stored);
  if (run.stopped_at_cost_cap) {
    std::fprintf(stderr, "okfbench: the sweep stopped at the cost cap; tuning over the trials stored so far\n");
  }
  const reports::StoredRun stored = reports::read_run_dir(run.out_dir);
  const reports::Summary summary = reports::summarize(stored.records, pricing);
  const reports::TuneResult result = reports::tune(summary, target, args.minimize);
  std::printf("# okfbench tune: %s, minimizing %s\n\n", target.text.c_str(), args.minimize.c_str());
  std::fputs(reports::tune_markdown(result).c_str(), stdout);
  if (!summary.priced_as_note.empty()) std::printf("\nCost: %s.\n", summary.priced_as_note.c_str());
  // A bundle where no configuration meets the target (or none could be graded on it) fails the tune.
  return result.met_everywhere() ? 0 : 1;
}

}  // namespace

void add_tune_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Run (or reuse) a sweep and print the cheapest configurations meeting a target; exit 1 if none does");
  cmd->add_option("SPEC", args->spec, "Experiment spec YAML whose paths list the values to sweep")->required();
  cmd->add_option("--target", args->target, "METRIC>=VALUE or METRIC<=VALUE, e.g. evidence_recall>=0.9")->required();
  cmd->add_option("--minimize", args->minimize, "input_tokens or cost (or another cost-like metric)")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Sweep folder (default: $XDG_CACHE_HOME/okfbench/runs/tune-<spec hash>, reused when it exists)");
  cmd->add_option("--set", args->overrides, "Override a spec value: KEY=VALUE, e.g. paths.context.budget_tokens=[500,1000]");
  cmd->add_option("--pricing", args->pricing, "Pricing table (default: share/okfbench/pricing.yaml or $OKFBENCH_PRICING)");
  cmd->add_flag("--quiet", args->quiet, "No progress output while the sweep runs");
  cmd->callback([args, &action] { action = [args] { return run_tune(*args); }; });
}

}  // namespace okfbench::cli
