// Speed of rebuilding reports from stored results: parsing results.jsonl,
// aggregating records into summary rows, and writing Markdown and HTML.
//   cmake -S . -B build -DOKFBENCH_BUILD_BENCHMARKS=ON && cmake --build build --target bench_reports
//   build/tests/bench/bench_reports
#include <benchmark/benchmark.h>

#include "reports/html.hpp"
#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "reports/summary.hpp"
#include "reports/writers.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::reports {
namespace {

// `n` trials spread over 5 bundle sizes and 3 configurations (one context, two
// agent), shaped like the default experiment's records.
std::vector<TrialRecord> synthetic_records(std::size_t n) {
  std::vector<TrialRecord> records;
  records.reserve(n);
  const std::int64_t sizes[] = {10, 100, 1000, 10000, 100000};
  for (std::size_t i = 0; i < n; ++i) {
    TrialRecord r;
    std::int64_t size = sizes[i % 5];
    r.trial_key = "k" + std::to_string(i);
    r.bundle = "gen-" + std::to_string(size);
    r.concept_count = size;
    r.question_set = "q";
    r.question_id = "q" + std::to_string(i / 15);
    r.config.model = "sim";
    r.config.cache_model = "openai";
    r.evidence_recall = static_cast<double>(i % 7) / 6.0;
    r.measures = {{"citation_recall", 0.5}};
    if (i % 3 == 0) {
      r.config.kind = PathKind::context;
      r.config.budget_tokens = 2000;
      TurnRecord t;
      t.input_tokens = 2000;
      t.cached_tokens = 0;
      t.output_tokens = 60;
      r.turns = {t};
      for (int p = 0; p < 8; ++p) r.packed.push_back({"layer/concept-" + std::to_string(p), 200, "seed"});
    } else {
      r.config.kind = PathKind::agent;
      r.config.tools = i % 3 == 1 ? std::vector<std::string>{"search", "open"}
                                  : std::vector<std::string>{"browse", "search", "open", "follow", "history", "remember"};
      r.config.max_turns = 12;
      for (int turn = 0; turn < 4; ++turn) {
        TurnRecord t;
        t.input_tokens = 1100 + 600 * turn;
        t.cached_tokens = turn > 1 ? 1024 : 0;
        t.output_tokens = 40;
        t.tool_calls.push_back({turn == 0 ? "search" : "open", R"({"concept_id":"layer/concept-1"})", 900, "", false, std::nullopt});
        r.turns.push_back(t);
      }
    }
    records.push_back(std::move(r));
  }
  return records;
}

const PricingTable& pricing() {
  static const PricingTable table = PricingTable::load(test::source_dir() / "datasets" / "pricing.yaml");
  return table;
}

void BM_ParseResultsJsonl(benchmark::State& state) {
  auto records = synthetic_records(static_cast<std::size_t>(state.range(0)));
  auto dir = test::fresh_dir("bench_reports");
  std::string text;
  for (const auto& r : records) text += to_jsonl_line(r) + "\n";
  test::write_file(dir / "results.jsonl", text);
  for (auto _ : state) benchmark::DoNotOptimize(read_results_jsonl(dir / "results.jsonl"));
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BM_ParseResultsJsonl)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_Summarize(benchmark::State& state) {
  auto records = synthetic_records(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(summarize(records, pricing()));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Summarize)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_MarkdownReport(benchmark::State& state) {
  auto records = synthetic_records(static_cast<std::size_t>(state.range(0)));
  Summary s = summarize(records, pricing());
  RunManifest m;
  for (auto _ : state) benchmark::DoNotOptimize(markdown_report(m, s, records, pricing()));
}
BENCHMARK(BM_MarkdownReport)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_HtmlReport(benchmark::State& state) {
  auto records = synthetic_records(static_cast<std::size_t>(state.range(0)));
  Summary s = summarize(records, pricing());
  RunManifest m;
  for (auto _ : state) benchmark::DoNotOptimize(html_report(m, s, records, nullptr, pricing()));
}
BENCHMARK(BM_HtmlReport)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace okfbench::reports
BENCHMARK_MAIN();
