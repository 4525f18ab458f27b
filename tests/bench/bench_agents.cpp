// Cost of the sim model's per-call accounting as a conversation grows: each
// call re-counts only messages it has not seen (per-block token cache), so a
// call on an N-message conversation costs hashing N messages plus tokenizing
// the new ones. BM_SimCountFresh shows what counting everything each call costs.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <iterator>
#include <string>

#include "agents/sim_model.hpp"
#include "retrieval/tokens.hpp"

namespace {
using namespace okfbench::agents;

// Strings are built with fmt, not `"c" + std::to_string(i)`: GCC 12 inlines
// that operator+ into a memcpy it then wrongly flags with -Wrestrict (an
// error under OKFBENCH_WERROR).
ChatRequest conversation(int tool_results) {
  ChatRequest r;
  r.messages.push_back({Role::system, std::string(2000, 's'), {}, {}, {}});
  r.messages.push_back({Role::user, "How do I triage a slow query after a data load?", {}, {}, {}});
  for (int i = 0; i < tool_results; ++i) {
    const std::string call_id = fmt::format("c{}", i);
    r.messages.push_back({Role::assistant, "", {{call_id, "open", "{\"concept_id\":\"x\"}"}}, {}, {}});
    std::string body;
    for (int w = 0; w < 600; ++w) fmt::format_to(std::back_inserter(body), "word{} ", (i * 7919 + w) % 1000);
    r.messages.push_back({Role::tool, body, {}, call_id, "open"});
  }
  return r;
}

// One more call on a conversation whose earlier messages the sim has counted.
void BM_SimCallIncremental(benchmark::State& state) {
  auto counter = okfbench::retrieval::make_counter("o200k_base");
  SimModel sim({}, *counter);
  ChatRequest r = conversation(static_cast<int>(state.range(0)));
  sim.blocks(r);  // earlier turns already counted
  for (auto _ : state) benchmark::DoNotOptimize(sim.blocks(r));
  state.SetLabel(fmt::format("{} messages", r.messages.size()));
}
BENCHMARK(BM_SimCallIncremental)->Arg(4)->Arg(16)->Arg(64);

// The same request counted from scratch each time (a fresh model per call).
void BM_SimCountFresh(benchmark::State& state) {
  auto counter = okfbench::retrieval::make_counter("o200k_base");
  ChatRequest r = conversation(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    SimModel sim({}, *counter);
    benchmark::DoNotOptimize(sim.blocks(r));
  }
}
BENCHMARK(BM_SimCountFresh)->Arg(4)->Arg(16)->Arg(64);

}  // namespace

BENCHMARK_MAIN();
