#pragma once
// What every experiment spec that parse_spec() accepts must satisfy, shared
// by fuzz_spec and fuzz_set: the ranges its header documents, and a scratch
// folder laid out like datasets/ so that path: entries can resolve.
#include <cmath>
#include <fstream>
#include <set>
#include <string>

#include "harness/spec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace okfbench::fuzz {

// <scratch>/experiments is the spec's folder; ../bundles/demo holds a
// questions.yaml and questions/demo.yaml sits beside the spec, as in the repo.
inline const std::filesystem::path& spec_dir() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path root = scratch_dir();
    std::filesystem::create_directories(root / "bundles" / "demo");
    std::filesystem::create_directories(root / "experiments" / "questions");
    std::filesystem::create_directories(root / "collections" / "scifact");
    std::ofstream(root / "bundles" / "demo" / "questions.yaml") << "questions: []\n";
    std::ofstream(root / "experiments" / "questions" / "demo.yaml") << "questions: []\n";
    return root / "experiments";
  }();
  return dir;
}

inline void check_spec(const harness::ExperimentSpec& spec) {
  check(spec.repeats >= 1, "repeats below 1 was accepted");
  check(spec.concurrency >= 1 && spec.concurrency <= 256, "concurrency outside 1..256 was accepted");
  check(std::isfinite(spec.requests_per_minute) && spec.requests_per_minute >= 0,
        "requests_per_minute negative or not finite was accepted");
  check(!spec.cost_cap_usd || (std::isfinite(*spec.cost_cap_usd) && *spec.cost_cap_usd > 0),
        "cost_cap_usd not a finite positive number was accepted");
  check(!spec.bundles.empty(), "a spec without bundles was accepted");
  std::set<std::string> names;
  for (const harness::BundleSource& b : spec.bundles) {
    check(names.insert(b.name).second, "two bundles share a name");
    if (b.kind == harness::BundleKind::generated) check(b.concepts >= 1, "a generated bundle of 0 concepts");
  }
  check(spec.context || spec.agent, "a spec without paths was accepted");
  if (spec.context) {
    for (auto v : spec.context->budget_tokens) check(v >= 1, "budget_tokens below 1 was accepted");
    for (int v : spec.context->k) check(v >= 1, "k below 1 was accepted");
    for (int v : spec.context->hops) check(v >= 0, "negative hops were accepted");
  }
  if (spec.agent) {
    for (int v : spec.agent->max_turns) check(v >= 1, "max_turns below 1 was accepted");
    for (const auto& tools : spec.agent->tools) check(!tools.empty(), "an empty tool set was accepted");
  }
  check(!spec.models.empty() && !spec.cache_models.empty(), "a spec without models was accepted");
  check(spec.hash.size() == 16, "the spec hash is not 16 hex digits");
}

}  // namespace okfbench::fuzz
