// okfbench convert smart|cranfield|beir|markdown SRC --out DIR: a collection
// or a markdown tree becomes an OKF bundle (DIR/NAME) and a question set
// (DIR/questions.yaml).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "datasets/convert.hpp"

namespace okfbench::cli {
namespace {

struct ConvertArgs {
  std::string format;
  std::string src;
  std::string out;
  std::string name;
  std::string docs, queries, qrels;
  std::string grades = "auto";
  std::string split = "test";
  bool json = false;
};

datasets::SmartGrades grades_of(const std::string& text) {
  if (text == "cranfield") return datasets::SmartGrades::cranfield;
  if (text == "as-written") return datasets::SmartGrades::as_written;
  return datasets::SmartGrades::automatic;
}

void print_json(const datasets::ConvertResult& r) {
  nlohmann::ordered_json out = {{"name", r.name},
                                {"bundle", r.bundle.string()},
                                {"concepts", r.documents},
                                {"renamed", r.renamed},
                                {"links", r.links},
                                {"questions", r.questions.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.questions.string())},
                                {"question_count", r.question_count},
                                {"queries_by_position", r.queries_by_position},
                                {"warnings", nlohmann::ordered_json::array()}};
  for (const auto& w : r.warnings) out["warnings"].push_back({{"message", w.message}, {"count", w.count}, {"examples", w.examples}});
  std::printf("%s\n", out.dump(2).c_str());
}

void print_text(const datasets::ConvertResult& r) {
  std::printf("bundle: %s (%zu concepts, %zu renamed to safe ids, %zu links)\n", r.bundle.string().c_str(), r.documents,
              r.renamed, r.links);
  if (!r.questions.empty()) {
    std::printf("questions: %s (%s, %zu questions%s)\n", r.questions.string().c_str(), r.name.c_str(), r.question_count,
                r.queries_by_position ? ", queries numbered by position as the qrels number them" : "");
  }
  // One line per kind of problem, however often it occurred (--json lists places).
  for (const auto& w : r.warnings) {
    std::fprintf(stderr, "warning: %zu time%s: %s (first at %s)\n", w.count, w.count == 1 ? "" : "s", w.message.c_str(),
                 w.examples.empty() ? "?" : w.examples.front().c_str());
  }
}

int run_convert(const ConvertArgs& args) {
  datasets::ConvertOptions options{.name = args.name,
                                   .folder = {},
                                   .docs = args.docs,
                                   .queries = args.queries,
                                   .qrels = args.qrels,
                                   .grades = grades_of(args.grades),
                                   .split = args.split};
  const bool smart = args.format == "smart" || args.format == "cranfield";
  if (!smart && (!args.docs.empty() || !args.queries.empty() || !args.qrels.empty() || args.grades != "auto")) {
    throw UsageError("--docs, --queries, --qrels and --grades are for `convert smart`");
  }
  datasets::ConvertResult result;
  if (smart) {
    result = datasets::convert_smart(args.src, args.out, options);
  } else if (args.format == "beir") {
    result = datasets::convert_beir(args.src, args.out, options);
  } else {
    result = datasets::convert_markdown(args.src, args.out, options);
  }
  if (args.json) print_json(result);
  else print_text(result);
  return 0;
}

}  // namespace

void add_convert_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app.add_subcommand("convert", "Convert an IR collection or a markdown tree into an OKF bundle");
  cmd->add_option("format", args->format, "smart (cranfield is another name for it), beir or markdown")
      ->required()
      ->check(CLI::IsMember({"smart", "cranfield", "beir", "markdown"}));
  cmd->add_option("src", args->src, "Source directory (e.g. collections/scifact)")->required();
  cmd->add_option("--out", args->out, "Output directory: writes OUT/NAME (the bundle) and OUT/questions.yaml")->required();
  cmd->add_option("--name", args->name, "Bundle and question set name (default: the source folder's name)");
  cmd->add_option("--docs", args->docs, "smart: the documents file (default: cran.all.1400, *.all, *.all.* in SRC)");
  cmd->add_option("--queries", args->queries, "smart: the queries file (default: *.qry, *.que, query.text, *.queries)");
  cmd->add_option("--qrels", args->qrels, "smart: the qrels file (default: cranqrel, qrels.text, *.rel, *.qrels)");
  cmd->add_option("--grades", args->grades,
                  "smart: a 3-column qrels' third column: cranfield (grade = 5 - code, -1 -> 0), as-written, or auto "
                  "(cranfield for a file named cranqrel)")
      ->check(CLI::IsMember({"auto", "cranfield", "as-written"}))
      ->capture_default_str();
  cmd->add_option("--split", args->split, "BEIR qrels split (qrels/SPLIT.tsv)")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print the result as JSON, with every warning's count and first places");
  cmd->callback([args, &action] { action = [args] { return run_convert(*args); }; });
}

}  // namespace okfbench::cli
