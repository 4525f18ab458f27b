// okfbench compare: per-configuration deltas between two stored runs with
// significance; exit 1 when a threshold is crossed (for CI gates).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "engine/data_files.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"
#include "reports/compare.hpp"
#include "reports/forecast.hpp"
#include "reports/record.hpp"
#include "reports/session.hpp"
#include "core/files.hpp"
#include "core/error.hpp"
#include "reports/report_files.hpp"
#include "reports/summary.hpp"
#include "reports/verdict.hpp"
#include "reports/writers.hpp"

namespace okfbench::cli {
namespace {

struct CompareArgs {
  std::string base_dir;
  std::string candidate_dir;
  std::vector<std::string> thresholds;
  std::string junit;
  std::string pricing;
  std::string baseline;
  std::string candidate;
  std::uint64_t seed = 42;
  std::size_t permutations = 10'000;
};

// Two runs are compared with one table, and may have read different data (a
// new bundle version is often the point); both are said, never silent.
void warn_about_differences(const CompareArgs& args, const reports::RunManifest& base, const reports::RunManifest& candidate,
                            const reports::PricingTable& pricing) {
  for (const auto& b : base.inputs) {
    for (const auto& c : candidate.inputs) {
      if (b.kind == "pricing" || b.kind != c.kind || b.name != c.name || b.sha256 == c.sha256) continue;
      std::fprintf(stderr, "okfbench: warning: the runs read different content for %s %s (sha256 %s... and %s...)\n",
                   b.kind.c_str(), b.name.c_str(), b.sha256.substr(0, 12).c_str(), c.sha256.substr(0, 12).c_str());
    }
  }
  for (const auto* run : {&base, &candidate}) {
    const auto repriced = reports::repriced_models(pricing, run->prices);
    if (repriced.empty()) continue;
    std::fprintf(stderr, "okfbench: note: %s recorded other prices for %s; both runs are priced with %s here\n",
                 (run == &base ? args.base_dir : args.candidate_dir).c_str(), fmt::format("{}", fmt::join(repriced, ", ")).c_str(),
                 args.pricing.empty() ? "the current pricing table" : args.pricing.c_str());
  }
}

// Two session logs of `okfbench mcp` (files, where runs are folders).
int compare_sessions(const CompareArgs& args) {
  if (!args.thresholds.empty() || !args.junit.empty())
    throw UsageError("--threshold and --junit gate runs; two session logs are compared without them");
  reports::SessionSummary base = reports::summarize_session(reports::read_session_log(args.base_dir));
  reports::SessionSummary candidate = reports::summarize_session(reports::read_session_log(args.candidate_dir));
  std::fputs(reports::session_compare_markdown(base, candidate, args.base_dir, args.candidate_dir).c_str(), stdout);
  return 0;
}

// Two configurations of one run: the verdict, then every metric's table.
int compare_in_run(const CompareArgs& args, const reports::CompareOptions& options) {
  const reports::StoredRun run = reports::read_run_dir(args.base_dir);
  const auto pricing = args.pricing.empty()
                           ? reports::with_recorded_prices(engine::load_default_pricing(), run.manifest.prices)
                           : reports::PricingTable::load(args.pricing);
  const reports::Summary summary = reports::summarize(run.records, pricing, run.manifest.baseline);
  const std::string baseline = reports::resolve_configuration(summary, args.baseline, "--baseline");
  const std::string candidate = reports::resolve_configuration(summary, args.candidate, "--candidate");
  if (baseline == candidate) {
    throw UsageError(fmt::format("--baseline {} and --candidate {} name the same configuration ({})", args.baseline,
                                 args.candidate, baseline));
  }
  const reports::Comparison c = reports::compare_within_run(run.records, pricing, baseline, candidate, options);
  reports::VerdictOptions verdict_options;
  verdict_options.seed = args.seed;
  const auto verdicts = reports::verdicts_between(run.records, summary, pricing, baseline, candidate, verdict_options);
  std::printf("# okfbench compare\n\nrun: %s (git %s, %s)\nbaseline: %s\ncandidate: %s\n\n", args.base_dir.c_str(),
              run.manifest.git_sha.c_str(), run.manifest.date.c_str(), baseline.c_str(), candidate.c_str());
  std::fputs(reports::verdict_markdown(verdicts, summary.names).c_str(), stdout);
  std::fputs(reports::compare_markdown(c).c_str(), stdout);
  if (!args.junit.empty()) {
    write_atomically(args.junit, reports::junit_for_comparison(c));
    std::fprintf(stderr, "wrote %s\n", args.junit.c_str());
  }
  return c.any_crossed() ? 1 : 0;
}

int run_compare(const CompareArgs& args) {
  const bool in_run = !args.baseline.empty() || !args.candidate.empty();
  if (in_run && (args.baseline.empty() || args.candidate.empty()))
    throw UsageError("--baseline and --candidate go together: compare RUN_DIR --baseline LABEL --candidate LABEL");
  if (in_run && !args.candidate_dir.empty())
    throw UsageError(fmt::format("compare {} {}: --baseline and --candidate compare two configurations inside one run; "
                                 "give one run folder",
                                 args.base_dir, args.candidate_dir));
  if (!in_run && args.candidate_dir.empty())
    throw UsageError(fmt::format("compare {}: give a second run folder, or --baseline LABEL --candidate LABEL to compare "
                                 "two configurations of this run",
                                 args.base_dir));
  if (in_run && !std::filesystem::is_directory(args.base_dir))
    throw UsageError(fmt::format("compare {}: --baseline and --candidate need a run folder", args.base_dir));
  reports::CompareOptions options;
  for (const auto& t : args.thresholds) options.thresholds.push_back(reports::parse_threshold(t));
  options.seed = args.seed;
  options.permutations = args.permutations;
  options.bootstrap_resamples = args.permutations;
  if (in_run) return compare_in_run(args, options);
  bool base_log = std::filesystem::is_regular_file(args.base_dir);
  if (base_log != std::filesystem::is_regular_file(args.candidate_dir))
    throw UsageError(fmt::format("compare {} {}: give two run folders or two session logs, not one of each",
                                 args.base_dir, args.candidate_dir));
  if (base_log) return compare_sessions(args);
  auto base = reports::read_run_dir(args.base_dir);
  auto candidate = reports::read_run_dir(args.candidate_dir);
  auto pricing = args.pricing.empty() ? engine::load_default_pricing() : reports::PricingTable::load(args.pricing);
  warn_about_differences(args, base.manifest, candidate.manifest, pricing);
  reports::Comparison c = reports::compare_runs(base.records, candidate.records, pricing, options);
  std::printf("# okfbench compare\n\nbase: %s (git %s, %s)\ncandidate: %s (git %s, %s)\n\n", args.base_dir.c_str(),
              base.manifest.git_sha.c_str(), base.manifest.date.c_str(), args.candidate_dir.c_str(),
              candidate.manifest.git_sha.c_str(), candidate.manifest.date.c_str());
  std::fputs(reports::forecast_compare_line(reports::check_forecast(base.manifest, base.records, pricing),
                                            reports::check_forecast(candidate.manifest, candidate.records, pricing))
                 .c_str(),
             stdout);
  std::fputs(reports::compare_markdown(c).c_str(), stdout);
  if (!args.junit.empty()) {
    write_atomically(args.junit, reports::junit_for_comparison(c));
    std::fprintf(stderr, "wrote %s\n", args.junit.c_str());
  }
  return c.any_crossed() ? 1 : 0;
}

}  // namespace

void add_compare_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare two runs per configuration and metric (exit 1 when a --threshold is crossed), two configurations of one "
      "run (--baseline, --candidate), or two MCP session logs");
  cmd->add_option("BASE_DIR", args->base_dir, "Output folder of the base run, or a session log of okfbench mcp")->required();
  cmd->add_option("CAND_DIR", args->candidate_dir, "Output folder of the candidate run, or a session log (not with --baseline)");
  cmd->add_option("--baseline", args->baseline,
                  "Inside one run: the baseline configuration, by short name (one-shot) or full label");
  cmd->add_option("--candidate", args->candidate, "Inside one run: the configuration compared with --baseline");
  cmd->add_option("--threshold", args->thresholds,
                  "METRIC=AMOUNT or METRIC=AMOUNT%: largest worsening allowed (repeatable), "
                  "e.g. evidence_recall=0.05, input_tokens=10%");
  cmd->add_option("--junit", args->junit, "Also write the threshold checks as JUnit XML to this file");
  cmd->add_option("--pricing", args->pricing, "Pricing table (default: share/okfbench/pricing.yaml or $OKFBENCH_PRICING)");
  cmd->add_option("--seed", args->seed, "Seed of the randomization test and the bootstrap")
      ->check(number_in(engine::limits::seed))
      ->capture_default_str();
  cmd->add_option("--permutations", args->permutations, "Permutations (and bootstrap resamples)")
      ->capture_default_str()
      ->check(number_in(engine::limits::permutations));
  cmd->callback([args, &action] { action = [args] { return run_compare(*args); }; });
}

}  // namespace okfbench::cli
