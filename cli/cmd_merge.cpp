// okfbench merge: the folders of a sharded run become one run folder.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "engine/merge.hpp"

namespace okfbench::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> shards;
  std::string out;
};

int run_merge(const MergeArgs& args) {
  std::vector<std::filesystem::path> shards(args.shards.begin(), args.shards.end());
  engine::MergeResult result = engine::merge_runs(shards, args.out);
  std::fputs(result.headline.c_str(), stdout);
  std::printf("\nmerged %zu trials from %zu folders into %s: %zu added, %zu already there; %zu trials in all\n",
              result.read, result.folders, args.out.c_str(), result.added, result.already_stored, result.total);
  std::printf("wrote report.md, report.html, report.json, results.sqlite, results.jsonl and manifest.json to %s\n",
              args.out.c_str());
  return 0;
}

}  // namespace

void add_merge_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Merge the output folders of a sharded run (run --shard K/N) into one run folder");
  cmd->add_option("SHARD_DIR", args->shards, "Output folders of `okfbench run --shard K/N` (same spec)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--out", args->out, "Folder to merge into (created; may be one of the shards)")->required();
  cmd->callback([args, &action] { action = [args] { return run_merge(*args); }; });
}

}  // namespace okfbench::cli
