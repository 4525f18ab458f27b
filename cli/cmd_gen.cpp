// okfbench gen: write a generated OKF bundle and its question set.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "datasets/generator.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"

namespace okfbench::cli {
namespace {

struct GenArgs {
  datasets::GeneratorOptions options;
  std::string out;
  std::string questions_path;  // "" = OUT/questions.yaml
};

int run_gen(const GenArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  const auto summary = datasets::generate_bundle(args.options, args.out);
  const std::filesystem::path questions =
      args.questions_path.empty() ? std::filesystem::path(args.out) / "questions.yaml" : std::filesystem::path(args.questions_path);
  write_atomically(questions, datasets::questions_to_yaml(summary.questions, args.options));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s\n", fmt::format("wrote {} concepts ({} links, {} broken), {} directories, {} files, {:.1f} MB to {} in {:.2f} s",
                                  summary.concepts, summary.links, summary.broken_links, summary.directories,
                                  summary.files, static_cast<double>(summary.bytes) / 1e6, args.out, seconds)
                          .c_str());
  std::printf("%s\n", fmt::format("wrote {} questions to {}", summary.questions.size(), questions.string()).c_str());
  return 0;
}

}  // namespace

void add_gen_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<GenArgs>();
  CLI::App* cmd = app.add_subcommand("gen", "Generate a realistic OKF bundle of any size with a question set");
  cmd->add_option("--concepts", args->options.concepts, "Number of concepts")
      ->required()
      ->check(number_in(engine::limits::concepts));
  cmd->add_option("--seed", args->options.seed, "Seed; the same seed gives byte-identical output")
      ->check(number_in(engine::limits::seed))
      ->capture_default_str();
  cmd->add_option("--layers", args->options.layers, "Top-level directories, 1..8 (default: from the size)")
      ->check(number_in(engine::limits::Int{1, engine::limits::layers.max}));
  cmd->add_option("--questions", args->options.questions, "Number of questions (default: min(concepts, 20))")
      ->check(number_in(engine::limits::generated_questions));
  cmd->add_option("--questions-out", args->questions_path, "Where to write the question set (default: OUT/questions.yaml)");
  cmd->add_option("--threads", args->options.threads, "Writer threads (default: all cores)")
      ->check(number_in(engine::limits::threads));
  cmd->add_option("--out", args->out, "Output folder (new or empty)")->required();
  cmd->callback([args, &action] { action = [args] { return run_gen(*args); }; });
}

}  // namespace okfbench::cli
