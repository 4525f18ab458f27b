// Cost of the sim model's per-call accounting as a conversation grows: each
// call re-counts only messages it has not seen (per-block token cache), so a
// call on an N-message conversation costs hashing N messages plus tokenizing
// the new ones. BM_SimCountFresh shows what counting everything each call costs.
#include <benchmark/benchmark.h>

#include <string>

#include "agents/sim_model.hpp"
#include "retrieval/tokens.hpp"

namespace {
using namespace okfbench::agents;

ChatRequest conversation(int tool_results) {
  ChatRequest r;
  r.messages.push_back({Role::system, std::string(2000, 's'), {}, {}, {}});
  r.messages.push_back({Role::user, "How do I triage a slow query after a data load?", {}, {}, {}});
  for (int i = 0; i < tool_results; ++i) {
    r.messages.push_back({Role::assistant, "", {{"c" + std::to_string(i), "open", "{\"concept_id\":\"x\"}"}}, {}, {}});
    std::string body;
    for (int w = 0; w < 600; ++w) body += "word" + std::to_string((i * 7919 + w) % 1000) + ' ';
    r.messages.push_back({Role::tool, body, {}, "c" + std::to_string(i), "open"});
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
  state.SetLabel(std::to_string(r.messages.size()) + " messages");
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
