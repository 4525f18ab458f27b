// okfbench trec-eval: evaluate a TREC run file against qrels as trec_eval
// does, with byte-identical output for the measures implemented in
// reports/measures.hpp, so it can stand in for trec_eval in a pipeline.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "datasets/questions.hpp"
#include "cli/commands.hpp"
#include "engine/number_option.hpp"
#include "reports/measures.hpp"
#include "reports/trec.hpp"
#include "core/error.hpp"

namespace okfbench::cli {
namespace {

struct TrecEvalArgs {
  std::string qrels;
  std::string run;
  bool per_query = false;
  bool complete = false;
  int relevance_level = 1;
  std::vector<std::string> measures;
  bool list = false;
};

int list_measures() {
  for (const reports::Measure& m : reports::all_measures()) {
    const std::string params = m.default_params.empty() ? "" : fmt::format(" (default .{})", m.default_params);
    std::printf("%s\n", fmt::format("{:<22} {}{}", m.name, m.help, params).c_str());
  }
  std::printf("%s\n", "Sets: official, set, all_trec (every measure above).");
  return 0;
}

int run_trec_eval(const TrecEvalArgs& args) {
  if (args.list) return list_measures();
  if (args.qrels.empty() || args.run.empty()) throw UsageError("trec-eval needs QRELS and RUN files");
  reports::parse_measures(args.measures);  // a wrong -m is a usage error before any file is read
  const reports::Qrels qrels = reports::read_qrels(args.qrels);
  const reports::Run run = reports::read_run(args.run);
  reports::EvalOptions options;
  options.missing = args.complete ? reports::MissingQueries::count_as_zero : reports::MissingQueries::ignore;
  options.relevance_level = args.relevance_level;
  const reports::Evaluation ev = reports::evaluate(qrels, run, args.measures, options);
  const std::string out =
      reports::format_trec_eval(ev, args.per_query ? reports::QueryLines::include : reports::QueryLines::omit);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

void add_trec_eval_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<TrecEvalArgs>();
  CLI::App* cmd = app.add_subcommand(
      "trec-eval", "Evaluate a TREC run against qrels with trec_eval's measures and output (trec_eval 10.0 compatible)");
  cmd->add_option("qrels", args->qrels, "Qrels file: qid iter docno gain");
  cmd->add_option("run", args->run, "Run file: qid Q0 docno rank score tag");
  cmd->add_flag("-q", args->per_query, "Also print each query's values (before the 'all' lines)");
  cmd->add_flag("-c", args->complete, "Average over every query in the qrels; a query without results scores 0");
  cmd->add_option("-m", args->measures,
                  "Measure, measure.params or set (official, set, all_trec); repeatable. Default: official")
      ->allow_extra_args(false);
  cmd->add_option("-l", args->relevance_level, "Minimum gain counted as relevant")
      ->check(number_in(datasets::kGrades))
      ->capture_default_str();
  cmd->add_flag("--list-measures", args->list, "List the implemented measures and exit");
  cmd->callback([args, &action] { action = [args] { return run_trec_eval(*args); }; });
}

}  // namespace okfbench::cli
