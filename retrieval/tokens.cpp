#include "retrieval/tokens.hpp"

#include "core/error.hpp"

namespace okfbench::retrieval {

std::vector<std::string> counter_names() {
  std::vector<std::string> names;
  for (const auto& spec : encoding_specs()) names.push_back(spec.name);
  names.emplace_back("heuristic");
  return names;
}

std::unique_ptr<TokenCounter> make_counter(std::string_view name) {
  if (name == "heuristic") return std::make_unique<HeuristicCounter>();
  for (const auto& spec : encoding_specs()) {
    if (spec.name == name) return std::make_unique<BpeCounter>(BpeEncoding::get(name));
  }
  throw UsageError("unknown token counter \"" + std::string(name) +
                   "\": use o200k_base, cl100k_base or heuristic");
}

}  // namespace okfbench::retrieval
