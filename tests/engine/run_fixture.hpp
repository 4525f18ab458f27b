#pragma once
// A small generated-bundle experiment spec, shared by the runner and merge tests.
#include <fmt/format.h>

#include <filesystem>
#include <string>

#include "engine/runner.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {

// Writes DIR/spec.yaml: one generated bundle, 2 context and 2 agent
// configurations, sim with the openai cache model; `extra` is appended.
inline std::filesystem::path write_spec(const std::filesystem::path& dir, std::size_t concepts, std::size_t questions,
                                        const std::string& extra = "") {
  const std::filesystem::path spec = dir / "spec.yaml";
  test::write_file(spec, fmt::format(R"(name: small
seed: 3
concurrency: 2
cache_dir: {}
bundles:
  - generate: {{concepts: {}, questions: {}}}
paths:
  context: {{budget_tokens: [300, 1000], k: 3, hops: 1}}
  agent:
    tools: [[search, open], [browse, search, open, follow, history, remember]]
    max_turns: 6
models: [sim]
cache_models: [openai]
{})",
                                     (dir / "cache").string(), concepts, questions, extra));
  return spec;
}

inline RunOptions quiet(const std::filesystem::path& out) {
  RunOptions o;
  o.out_dir = out;
  o.progress = Progress::quiet;
  return o;
}

}  // namespace okfbench::engine
