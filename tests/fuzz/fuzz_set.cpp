// `okfbench run --set KEY=VALUE` overrides (engine/spec.hpp): each input
// line is one override, applied to a fixed spec that is valid on its own.
//
// Invariants: a malformed override or a bad value it sets is a UsageError
// naming the --set argument, nothing else: the spec alone is valid, so an
// InputError would blame a line of the file for what a flag did; an
// accepted result is inside the documented ranges (spec_checks.hpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "tests/fuzz/spec_checks.hpp"

namespace {

constexpr const char* kSpec = R"(name: fuzz
seed: 1
repeats: 1
concurrency: 2
cost_cap_usd: 5
bundles:
  - path: ../bundles/demo
    name: demo
    questions: questions/demo.yaml
  - generate: {concepts: [10, 100], questions: 20}
  - convert: {format: beir, source: ../collections/scifact, split: test, concepts: [100]}
paths:
  context: {budget_tokens: 2000, k: 5, hops: 1, strategy: grafito}
  agent:
    surface: grafito
    tools:
      - [browse, search, open, follow, history, remember]
      - [search, open]
    max_turns: 12
models: [sim]
cache_models: [openai]
graders: [facts, citations, answered]
judge: {model: sim, votes: 1}
)";

constexpr std::size_t kMaxOverrides = 8;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace okfbench;
  std::vector<std::string> overrides;
  const std::string_view text = fuzz::as_text(data, size);
  for (std::size_t pos = 0; pos < text.size() && overrides.size() < kMaxOverrides;) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    overrides.emplace_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  engine::ExperimentSpec spec;
  try {
    spec = engine::parse_spec(kSpec, "fuzz.yaml", fuzz::spec_dir(), overrides);
  } catch (const InputError& e) {
    fuzz::check(false, std::string("an override's problem was blamed on the file: ") + e.what());
  } catch (const UsageError& e) {
    fuzz::check(std::string_view(e.what()).starts_with("--set "),
                std::string("an override's problem does not name the --set argument: ") + e.what());
    return 0;
  }
  fuzz::check_spec(spec);
  return 0;
}
