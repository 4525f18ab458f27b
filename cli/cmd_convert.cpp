// okfbench convert cranfield|beir|markdown SRC --out DIR: a collection or a
// markdown tree becomes an OKF bundle (DIR/bundle) and a question set
// (DIR/questions.yaml).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "datasets/convert.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"

namespace okfbench::cli {
namespace {

struct ConvertArgs {
  std::string format;
  std::string src;
  std::string out;
  std::string split = "test";
};

int run_convert(const ConvertArgs& args) {
  datasets::ConvertResult result;
  if (args.format == "cranfield") {
    result = datasets::convert_cranfield(args.src, args.out);
  } else if (args.format == "beir") {
    result = datasets::convert_beir(args.src, args.out, args.split);
  } else if (args.format == "markdown") {
    result = datasets::convert_markdown(args.src, args.out);
  } else {
    throw UsageError("unknown format '" + args.format + "': use cranfield, beir or markdown");
  }
  std::printf("bundle: %s (%zu concepts, %zu renamed to safe ids", result.bundle.string().c_str(),
              result.documents, result.renamed);
  if (args.format == "markdown") std::printf(", %zu see-also links", result.links);
  std::printf(")\n");
  if (!result.questions.empty()) {
    std::printf("questions: %s (%zu questions)\n", result.questions.string().c_str(), result.question_count);
  }
  return 0;
}

}  // namespace

void add_convert_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd = app.add_subcommand("convert", "Convert an IR collection or a markdown tree into an OKF bundle");
  cmd->add_option("format", args->format, "cranfield, beir or markdown")
      ->required()
      ->check(CLI::IsMember({"cranfield", "beir", "markdown"}));
  cmd->add_option("src", args->src, "Source directory (e.g. collections/scifact)")->required();
  cmd->add_option("--out", args->out, "Output directory: writes OUT/bundle and OUT/questions.yaml")->required();
  cmd->add_option("--split", args->split, "BEIR qrels split (qrels/SPLIT.tsv)")->capture_default_str();
  cmd->callback([args, &action] { action = [args] { return run_convert(*args); }; });
}

}  // namespace okfbench::cli
