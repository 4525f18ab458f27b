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
#include "reports/writers.hpp"

namespace okfbench::cli {
namespace {

struct CompareArgs {
  std::string base_dir;
  std::string candidate_dir;
  std::vector<std::string> thresholds;
  std::string junit;
  std::string pricing;
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

int run_compare(const CompareArgs& args) {
  bool base_log = std::filesystem::is_regular_file(args.base_dir);
  if (base_log != std::filesystem::is_regular_file(args.candidate_dir))
    throw UsageError(fmt::format("compare {} {}: give two run folders or two session logs, not one of each",
                                 args.base_dir, args.candidate_dir));
  if (base_log) return compare_sessions(args);
  reports::CompareOptions options;
  for (const auto& t : args.thresholds) options.thresholds.push_back(reports::parse_threshold(t));
  options.seed = args.seed;
  options.permutations = args.permutations;
  options.bootstrap_resamples = args.permutations;
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
      "Compare two runs per configuration and metric (exit 1 when a --threshold is crossed), or two MCP session logs");
  cmd->add_option("BASE_DIR", args->base_dir, "Output folder of the base run, or a session log of okfbench mcp")->required();
  cmd->add_option("CAND_DIR", args->candidate_dir, "Output folder of the candidate run, or a session log")->required();
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
