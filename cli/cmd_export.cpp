// okfbench export: a run's trials in another tool's format (OTLP JSON traces).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "core/files.hpp"
#include "cli/commands.hpp"
#include "reports/otlp.hpp"
#include "reports/record.hpp"
#include "reports/report_files.hpp"

namespace okfbench::cli {
namespace {

struct ExportArgs {
  std::string run_dir;
  std::string otlp_json;
};

int run_export(const ExportArgs& args) {
  const reports::StoredRun run = reports::read_run_dir(args.run_dir);
  write_atomically(args.otlp_json, reports::otlp_json(run.manifest, run.records));
  std::fprintf(stderr, "wrote %zu trial trace(s) to %s\n", run.records.size(), args.otlp_json.c_str());
  return 0;
}

}  // namespace

void add_export_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a run's trials as OpenTelemetry traces (OTLP JSON: a trace per trial, a span per model and tool call)");
  cmd->add_option("RUN_DIR", args->run_dir, "Output folder of `okfbench run`")->required();
  cmd->add_option("--otlp-json", args->otlp_json, "File to write the traces to, in the OTLP JSON encoding")->required();
  cmd->callback([args, &action] { action = [args] { return run_export(*args); }; });
}

}  // namespace okfbench::cli
