// okfbench tokens: count (or list) the tokens of a file or of stdin.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "retrieval/tokens.hpp"

namespace okfbench::cli {
namespace {

struct TokensArgs {
  std::string encoding = "o200k_base";
  std::string input = "-";
  bool ids = false;
  bool json = false;
};

std::string read_input(const std::string& input) {
  if (input == "-") {
    std::ostringstream buffer;
    buffer << std::cin.rdbuf();
    return buffer.str();
  }
  std::ifstream in(input, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read {}: check the path (use - for stdin)", input));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int run_tokens(const TokensArgs& args) {
  const auto counter = retrieval::make_counter(args.encoding);  // UsageError for an unknown name
  const auto* bpe = dynamic_cast<const retrieval::BpeCounter*>(counter.get());
  if (args.ids && !bpe) throw UsageError("--ids needs a BPE encoding (o200k_base or cl100k_base), not heuristic");
  const std::string text = read_input(args.input);
  std::vector<retrieval::TokenId> ids;
  if (args.ids) ids = bpe->encoding().encode_ordinary(text);
  const std::size_t count = args.ids ? ids.size() : counter->count(text);
  if (args.json) {
    nlohmann::json out = {{"encoding", counter->name()}, {"bytes", text.size()}, {"tokens", count}};
    if (args.ids) out["ids"] = ids;
    std::printf("%s\n", json_text(out).c_str());
  } else if (args.ids) {
    std::printf("%s\n", fmt::format("{}", fmt::join(ids, " ")).c_str());
  } else {
    std::printf("%zu\n", count);
  }
  return 0;
}

}  // namespace

void add_tokens_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<TokensArgs>();
  CLI::App* cmd = app.add_subcommand("tokens", "Count the tokens of a file or stdin (special-token strings count as text)");
  cmd->add_option("--encoding", args->encoding, "o200k_base, cl100k_base or heuristic (ceil(bytes/4))")
      ->capture_default_str();
  cmd->add_flag("--ids", args->ids, "Print the token ids (space-separated) instead of the count");
  cmd->add_flag("--json", args->json, "Print {encoding, bytes, tokens[, ids]} as JSON");
  cmd->add_option("input", args->input, "File to read, or - for stdin")->capture_default_str();
  cmd->callback([args, &action] { action = [args] { return run_tokens(*args); }; });
}

}  // namespace okfbench::cli
