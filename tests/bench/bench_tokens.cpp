// Token counting speed: SciFact text (title + abstract of all 5,183 docs) with
// both encodings, the two pre-tokenizers, and the merge on long pieces.
//   build-*/tests/bench/bench_tokens [--benchmark_filter=Count]
// Rates are bytes of text per CPU second, single-threaded, after one warm-up
// pass (the per-thread piece cache is part of the design: a sweep counts the
// same kind of text over and over). Google Benchmark's "M/s" is 2^20 bytes/s.
#include <benchmark/benchmark.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "retrieval/bpe.hpp"
#include "tests/support/test_support.hpp"

namespace {

using okfbench::retrieval::BpeEncoding;
using okfbench::retrieval::Splitter;

const std::vector<std::string>& scifact_texts() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    std::ifstream in(okfbench::test::data_root() / "collections" / "scifact" / "corpus.jsonl");
    for (std::string line; std::getline(in, line);) {
      auto doc = nlohmann::json::parse(line);
      out.push_back(doc.at("title").get<std::string>() + "\n" + doc.at("text").get<std::string>());
    }
    return out;
  }();
  return texts;
}

std::int64_t total_bytes(const std::vector<std::string>& texts) {
  std::int64_t bytes = 0;
  for (const auto& t : texts) bytes += static_cast<std::int64_t>(t.size());
  return bytes;
}

bool have_scifact(benchmark::State& state) {
  if (!scifact_texts().empty()) return true;
  state.SkipWithError("SciFact corpus not found: set OKFBENCH_DATA");
  return false;
}

void BM_Count(benchmark::State& state, const char* encoding) {
  if (!have_scifact(state)) return;
  const BpeEncoding& enc = BpeEncoding::get(encoding);
  std::size_t tokens = 0;
  for (const auto& text : scifact_texts()) tokens += enc.count(text);  // warm the piece cache: steady state
  for (auto _ : state) {
    tokens = 0;
    for (const auto& text : scifact_texts()) tokens += enc.count(text);
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(state.iterations() * total_bytes(scifact_texts()));
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK_CAPTURE(BM_Count, o200k_base, "o200k_base")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Count, cl100k_base, "cl100k_base")->Unit(benchmark::kMillisecond);

void BM_Encode(benchmark::State& state, const char* encoding) {
  if (!have_scifact(state)) return;
  const BpeEncoding& enc = BpeEncoding::get(encoding);
  for (const auto& text : scifact_texts()) benchmark::DoNotOptimize(enc.encode_ordinary(text));  // warm-up
  for (auto _ : state) {
    for (const auto& text : scifact_texts()) benchmark::DoNotOptimize(enc.encode_ordinary(text));
  }
  state.SetBytesProcessed(state.iterations() * total_bytes(scifact_texts()));
}
BENCHMARK_CAPTURE(BM_Encode, o200k_base, "o200k_base")->Unit(benchmark::kMillisecond);

void BM_Split(benchmark::State& state, Splitter splitter) {
  if (!have_scifact(state)) return;
  const BpeEncoding& enc = BpeEncoding::get("o200k_base");
  for (auto _ : state) {
    for (const auto& text : scifact_texts()) benchmark::DoNotOptimize(enc.split(text, splitter));
  }
  state.SetBytesProcessed(state.iterations() * total_bytes(scifact_texts()));
}
BENCHMARK_CAPTURE(BM_Split, scanner, Splitter::scanner)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Split, pcre2, Splitter::pcre2)->Unit(benchmark::kMillisecond);

// One piece of N copies of a letter: the heap merge keeps this O(N log N).
void BM_LongRunOfOneLetter(benchmark::State& state) {
  const BpeEncoding& enc = BpeEncoding::get("o200k_base");
  const std::string text(static_cast<std::size_t>(state.range(0)), 'a');
  for (auto _ : state) benchmark::DoNotOptimize(enc.encode_ordinary(text));
  state.SetBytesProcessed(state.iterations() * state.range(0));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_LongRunOfOneLetter)->RangeMultiplier(4)->Range(1 << 10, 100'000)->Complexity()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
