// okfbench report: rebuild every report of a run from its stored results.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "engine/data_files.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "reports/report_files.hpp"
#include "reports/session.hpp"
#include "reports/summary.hpp"
#include "reports/verdict.hpp"
#include "reports/transcript.hpp"

namespace okfbench::cli {
namespace {

struct ReportArgs {
  std::string run_dir;
  std::string formats = "md,html,json,csv,junit";
  std::string out_dir;  // default: the run directory
  std::string pricing;  // default: share/okfbench/pricing.yaml
};

int run_report(const ReportArgs& args) {
  if (std::filesystem::is_regular_file(args.run_dir)) {  // a session log of `okfbench mcp`
    reports::SessionSummary summary = reports::summarize_session(reports::read_session_log(args.run_dir));
    std::fputs(reports::session_markdown(summary, args.run_dir).c_str(), stdout);
    return 0;
  }
  auto formats = reports::parse_report_formats(args.formats);
  reports::StoredRun run = reports::read_run_dir(args.run_dir);
  // A stored run keeps the prices it was made with; --pricing re-prices it, and says what changed.
  reports::PricingTable pricing = reports::with_recorded_prices(engine::load_default_pricing(), run.manifest.prices);
  if (!args.pricing.empty()) {
    pricing = reports::PricingTable::load(args.pricing);
    const auto repriced = reports::repriced_models(pricing, run.manifest.prices);
    if (!repriced.empty()) {
      std::fprintf(stderr, "okfbench: note: %s prices %s differently from the prices the run recorded in manifest.json\n",
                   args.pricing.c_str(), fmt::format("{}", fmt::join(repriced, ", ")).c_str());
    }
  }
  std::filesystem::path out = args.out_dir.empty() ? args.run_dir : args.out_dir;
  const std::optional<reports::TranscriptSet> transcripts = reports::read_run_transcripts(args.run_dir);
  auto written = reports::write_report_files(run.manifest, run.records, transcripts ? &*transcripts : nullptr, pricing, formats, out);
  std::fputs(reports::headline_with_verdict(run.records, reports::summarize(run.records, pricing, run.manifest.baseline), pricing)
                 .c_str(),
             stdout);
  for (const auto& path : written) std::fprintf(stderr, "wrote %s\n", path.string().c_str());
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Rebuild the reports of a run from its results.jsonl and manifest.json (no trial is re-run), or summarise an MCP "
      "session log");
  cmd->add_option("RUN_DIR", args->run_dir, "Output folder of `okfbench run`, or a session log of `okfbench mcp`")->required();
  cmd->add_option("--format", args->formats, "Comma-separated: md, html, json, csv, junit")->capture_default_str();
  cmd->add_option("--out", args->out_dir, "Folder for the report files (default: RUN_DIR)");
  cmd->add_option("--pricing", args->pricing, "Re-price with this table (default: the prices recorded in manifest.json, then share/okfbench/pricing.yaml or $OKFBENCH_PRICING)");
  cmd->callback([args, &action] { action = [args] { return run_report(*args); }; });
}

}  // namespace okfbench::cli
