// context() latency on the SciFact bundle (5,183 concepts, converted from
// BEIR with `okfbench convert beir`'s converter), budget 2,000 tokens counted
// with o200k_base, over the 1,109 SciFact queries in turn. Index build and
// bundle load are outside the timed loop. Reports p50/p90/p99 per call in
// wall-clock time and p50/p99 in thread CPU time.
//   build-*/tests/bench/bench_context
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "datasets/convert.hpp"
#include "retrieval/context.hpp"
#include "retrieval/tokens.hpp"
#include "tests/support/test_support.hpp"

namespace {

using namespace okfbench::retrieval;

struct Corpus {
  Bundle bundle;
  SearchIndex index;
  std::vector<std::string> queries;
};

const Corpus* scifact() {
  static const std::optional<Corpus> corpus = []() -> std::optional<Corpus> {
    const auto src = okfbench::test::data_root() / "collections" / "scifact";
    if (!std::filesystem::exists(src / "corpus.jsonl")) return std::nullopt;
    const auto out = okfbench::test::fresh_dir("bench-context-scifact");
    const auto converted = okfbench::datasets::convert_beir(src, out);
    Bundle bundle = Bundle::load(converted.bundle);
    SearchIndex index = SearchIndex::build(bundle);
    std::vector<std::string> queries;
    std::ifstream in(src / "queries.jsonl");
    for (std::string line; std::getline(in, line);) queries.push_back(nlohmann::json::parse(line).at("text"));
    return Corpus{std::move(bundle), std::move(index), std::move(queries)};
  }();
  return corpus ? &*corpus : nullptr;
}

double thread_cpu_micros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

void BM_ContextScifact(benchmark::State& state, PackStrategy strategy) {
  const Corpus* corpus = scifact();
  if (!corpus) {
    state.SkipWithError("SciFact not found: set OKFBENCH_DATA");
    return;
  }
  auto counter = make_counter("o200k_base");
  ContextOptions options;
  options.budget_tokens = 2000;
  options.counter = counter.get();
  options.strategy = strategy;
  std::vector<double> micros, cpu_micros;  // wall clock (what a caller waits) and CPU time (robust on a busy machine)
  std::size_t next = 0, tokens = 0;
  for (auto _ : state) {
    const std::string& query = corpus->queries[next++ % corpus->queries.size()];
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_micros();
    ContextPack pack = pack_context(corpus->bundle, corpus->index, query, options);
    cpu_micros.push_back(thread_cpu_micros() - cpu_start);
    micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    tokens += pack.tokens;
    benchmark::DoNotOptimize(pack);
  }
  state.counters["p50_us"] = percentile(micros, 0.50);
  state.counters["p90_us"] = percentile(micros, 0.90);
  state.counters["p99_us"] = percentile(micros, 0.99);
  state.counters["p50_cpu_us"] = percentile(cpu_micros, 0.50);
  state.counters["p99_cpu_us"] = percentile(cpu_micros, 0.99);
  state.counters["pack_tokens"] = static_cast<double>(tokens) / static_cast<double>(std::max<std::size_t>(1, micros.size()));
}
BENCHMARK_CAPTURE(BM_ContextScifact, grafito, PackStrategy::grafito)->Unit(benchmark::kMicrosecond)->Iterations(1109);
BENCHMARK_CAPTURE(BM_ContextScifact, weaver, PackStrategy::weaver)->Unit(benchmark::kMillisecond)->Iterations(20);

}  // namespace

BENCHMARK_MAIN();
