// Evaluation speed: trec_eval's all_trec measures on the FTS5 Cranfield run
// (225 queries x 100 documents, from $OKFBENCH_DATA/trec_eval), the two
// regression measures on a synthetic 300-query x 1,000-document run (the shape
// of a SciFact top-1000 run), reading a run file, and the paired statistics
// over 300 questions with the defaults (10,000 permutations / resamples).
//
//   build/tests/bench/bench_measures
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "reports/measures.hpp"
#include "reports/statistics.hpp"
#include "reports/trec.hpp"
#include "tests/support/test_support.hpp"

namespace {

using namespace okfbench::reports;

const std::filesystem::path kTrecDir = okfbench::test::data_root() / "trec_eval";

void BM_EvaluateAllTrecCranfield(benchmark::State& state) {
  const Qrels qrels = read_qrels(kTrecDir / "cran.qrels");
  const Run run = read_run(kTrecDir / "run.fts5");
  const std::vector<std::string> measures = {"all_trec"};
  for (auto _ : state) {
    Evaluation ev = evaluate(qrels, run, measures, {.missing = MissingQueries::count_as_zero});
    benchmark::DoNotOptimize(ev);
  }
  state.counters["queries"] = static_cast<double>(qrels.queries.size());
}
BENCHMARK(BM_EvaluateAllTrecCranfield)->Unit(benchmark::kMillisecond);

// 300 queries, each with 5 relevant documents (grades 1-2) and 1,000 retrieved, seeded.
std::pair<Qrels, Run> synthetic(std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  Qrels qrels;
  Run run;
  run.tag = "synthetic";
  for (int q = 0; q < 300; ++q) {
    const std::string qid = std::to_string(q);
    for (int j = 0; j < 5; ++j) {  // distinct ids: j picks a block of 200 ids, every other one
      const auto doc = q * 1000 + j * 200 + static_cast<int>(gen() % 100) * 2;
      qrels.add(qid, "doc" + std::to_string(doc), 1 + static_cast<int>(gen() % 2));
    }
    for (int d = 0; d < 1000; ++d) run.add(qid, "doc" + std::to_string(q * 1000 + d), 1000.0 - d);
  }
  return {qrels, run};
}

void BM_EvaluateNdcg10Recall100Synthetic(benchmark::State& state) {
  const auto [qrels, run] = synthetic(1);
  const std::vector<std::string> measures = {"ndcg_cut.10", "recall.100"};
  for (auto _ : state) {
    Evaluation ev = evaluate(qrels, run, measures, {.missing = MissingQueries::count_as_zero});
    benchmark::DoNotOptimize(ev);
  }
  state.counters["retrieved"] = 300'000;
}
BENCHMARK(BM_EvaluateNdcg10Recall100Synthetic)->Unit(benchmark::kMillisecond);

void BM_ReadRunFile(benchmark::State& state) {
  for (auto _ : state) {
    Run run = read_run(kTrecDir / "run.fts5");
    benchmark::DoNotOptimize(run);
  }
  state.counters["lines"] = 22'500;
}
BENCHMARK(BM_ReadRunFile)->Unit(benchmark::kMillisecond);

std::pair<std::vector<double>, std::vector<double>> paired_scores() {
  std::mt19937_64 gen(2);
  std::vector<double> base, cand;
  for (int i = 0; i < 300; ++i) {
    base.push_back(static_cast<double>(gen() % 1000) / 1000.0);
    cand.push_back(static_cast<double>(gen() % 1000) / 1000.0);
  }
  return {base, cand};
}

void BM_RandomizationTest300(benchmark::State& state) {
  const auto [base, cand] = paired_scores();
  for (auto _ : state) benchmark::DoNotOptimize(paired_randomization_test(base, cand));
}
BENCHMARK(BM_RandomizationTest300)->Unit(benchmark::kMillisecond);

void BM_BootstrapInterval300(benchmark::State& state) {
  const auto [base, cand] = paired_scores();
  for (auto _ : state) benchmark::DoNotOptimize(paired_bootstrap_interval(base, cand));
}
BENCHMARK(BM_BootstrapInterval300)->Unit(benchmark::kMillisecond);

void BM_PairedTTest300(benchmark::State& state) {
  const auto [base, cand] = paired_scores();
  for (auto _ : state) benchmark::DoNotOptimize(paired_t_test(base, cand));
}
BENCHMARK(BM_PairedTTest300)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
