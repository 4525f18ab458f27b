#pragma once
// What every experiment spec that parse_spec() accepts must satisfy, shared
// by fuzz_spec and fuzz_set: the ranges its header documents, and a scratch
// folder laid out like datasets/ so that path: entries can resolve.
#include <cmath>
#include <fstream>
#include <set>
#include <string>

#include "engine/limits.hpp"
#include "engine/spec.hpp"
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

template <class T, class Range>
bool within(T value, Range range) {
  return value >= range.min && value <= range.max;
}

inline bool within_real(double value, RealRange range) {
  return std::isfinite(value) && value <= range.max && (range.above_min ? value > range.min : value >= range.min);
}

// The ranges engine/spec.hpp documents, from engine/limits.hpp.
inline void check_spec(const engine::ExperimentSpec& spec) {
  namespace limits = engine::limits;
  check(within<std::int64_t>(spec.repeats, limits::repeats), "repeats out of range was accepted");
  check(within<std::int64_t>(spec.concurrency, limits::concurrency), "concurrency out of range was accepted");
  check(within_real(spec.requests_per_minute, limits::requests_per_minute), "requests_per_minute out of range was accepted");
  check(!spec.cost_cap_usd || within_real(*spec.cost_cap_usd, limits::cost_cap_usd), "cost_cap_usd out of range was accepted");
  check(within<std::int64_t>(static_cast<std::int64_t>(spec.max_questions), limits::max_questions),
        "max_questions out of range was accepted");
  check(!spec.bundles.empty(), "a spec without bundles was accepted");
  std::set<std::string> names;
  for (const engine::BundleSource& b : spec.bundles) {
    check(names.insert(b.name).second, "two bundles share a name");
    if (b.kind == engine::BundleKind::generated) {
      check(within<std::int64_t>(static_cast<std::int64_t>(b.concepts), limits::concepts), "generated concepts out of range");
      check(within<std::int64_t>(static_cast<std::int64_t>(b.layers), limits::layers), "generated layers out of range");
    }
  }
  check(spec.context || spec.agent, "a spec without paths was accepted");
  if (spec.context) {
    for (auto v : spec.context->budget_tokens) check(within(v, limits::budget_tokens), "budget_tokens out of range");
    for (int v : spec.context->k) check(within<std::int64_t>(v, limits::k), "k out of range was accepted");
    for (int v : spec.context->hops) check(within<std::int64_t>(v, limits::hops), "hops out of range was accepted");
  }
  if (spec.agent) {
    for (int v : spec.agent->max_turns) check(within<std::int64_t>(v, limits::max_turns), "max_turns out of range");
    for (const auto& tools : spec.agent->tools) check(!tools.empty(), "an empty tool set was accepted");
  }
  if (spec.judge) check(within<std::int64_t>(spec.judge->votes, limits::judge_votes), "judge votes out of range");
  check(!spec.models.empty() && !spec.cache_models.empty(), "a spec without models was accepted");
  check(spec.hash.size() == 16, "the spec hash is not 16 hex digits");
}

}  // namespace okfbench::fuzz
