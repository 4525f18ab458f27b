// okfbench run: run an experiment spec (default: datasets/experiments/default.yaml).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "harness/commands.hpp"
#include "harness/runner.hpp"
#include "harness/spec.hpp"
#include "retrieval/error.hpp"

namespace okfbench::cli {
namespace {

struct RunArgs {
  std::string spec;
  std::string out;
  std::vector<std::string> overrides;
  bool dry_run = false;
  std::string shard;
  std::string progress = "auto";
};

harness::Progress parse_progress(const std::string& text) {
  if (text == "auto") return harness::Progress::automatic;
  if (text == "bar") return harness::Progress::bar;
  if (text == "lines") return harness::Progress::lines;
  if (text == "quiet") return harness::Progress::quiet;
  throw UsageError(fmt::format("--progress {}: use auto, bar, lines or quiet", text));
}

void print_dry_run(const harness::RunResult& result) {
  std::printf("%-16s  %-14s  %-12s  %10s  %s\n", "trial key", "bundle", "question", "~input", "configuration");
  for (const auto& t : result.trials) {
    std::printf("%-16s  %-14s  %-12s  %10lld  %s\n", t.key.c_str(), t.bundle_name.c_str(), t.question_id.c_str(),
                static_cast<long long>(t.estimated_input_tokens), t.config.label().c_str());
  }
  std::printf("%zu trials, about %lld input tokens in all (an estimate; see docs/runner.md)\n", result.planned,
              static_cast<long long>(result.estimated_input_tokens));
}

int run(const RunArgs& args) {
  const std::string spec_path =
      args.spec.empty() ? std::string(OKFBENCH_SOURCE_DIR) + "/datasets/experiments/default.yaml" : args.spec;
  const harness::ExperimentSpec spec = harness::load_spec(spec_path, args.overrides);
  harness::RunOptions options;
  options.out_dir = args.out;
  options.mode = args.dry_run ? harness::Mode::dry_run : harness::Mode::run;
  options.progress = parse_progress(args.progress);
  if (!args.shard.empty()) options.shard = harness::parse_shard(args.shard);
  const harness::RunResult result = harness::run_experiment(spec, options);
  if (args.dry_run) {
    print_dry_run(result);
    return 0;
  }
  std::fputs(result.headline.c_str(), stdout);
  std::printf("\n%zu trials planned: %zu run now (%zu failed), %zu stored before; spent $%.4f", result.planned, result.ran,
              result.failed, result.already_stored, result.spent_usd);
  if (result.unpriced > 0) std::printf(" (%zu trials without a price)", result.unpriced);
  if (result.judge_spent_usd > 0) std::printf(" and $%.4f on the judge", result.judge_spent_usd);
  std::printf("; %.1f s\n", result.seconds);
  std::printf("wrote report.md, report.json, results.sqlite, results.jsonl and manifest.json to %s\n",
              result.out_dir.string().c_str());
  if (result.stopped_at_cost_cap) {
    std::fprintf(stderr,
                 "okfbench: stopped at the cost cap of $%.2f with %zu trials not run; raise cost_cap_usd "
                 "(--set cost_cap_usd=N) and run again with --out %s to continue\n",
                 spec.cost_cap_usd.value_or(0), result.planned - result.already_stored - result.ran,
                 result.out_dir.string().c_str());
    return 1;
  }
  return result.failed > 0 ? 1 : 0;
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run an experiment spec: context() against the agent loop over bundles and questions");
  cmd->add_option("spec", args->spec, "Experiment spec YAML (default: datasets/experiments/default.yaml)");
  cmd->add_option("--out", args->out, "Output folder; run again with the same folder to resume (default: okfbench-out/<UTC time>)");
  cmd->add_option("--set", args->overrides, "Override a spec value: KEY=VALUE, e.g. paths.context.budget_tokens=500")
      ->allow_extra_args(false);
  cmd->add_flag("--dry-run", args->dry_run, "List the trials and the estimated input tokens; run nothing");
  cmd->add_option("--shard", args->shard, "Run only slice K of N (K/N), e.g. 1/4");
  cmd->add_option("--progress", args->progress, "auto (a bar on a terminal, lines otherwise), bar, lines or quiet");
  cmd->callback([args, &action] { action = [args] { return run(*args); }; });
}

}  // namespace okfbench::cli
