// Search speed: index build (wall and process CPU time, all threads) and
// query latency (p50/p99 counters, in
// microseconds of wall time per query) on SciFact and on a 100,000-document
// collection made by replicating SciFact with new ids; SciFact bundle load
// rate. Needs the reference data ($OKFBENCH_DATA); converts SciFact into the
// build tree once.
//
//   build/tests/bench/bench_search --benchmark_min_time=2s
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "datasets/convert.hpp"
#include "datasets/questions.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/search.hpp"
#include "tests/support/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using okfbench::retrieval::Bundle;
using okfbench::retrieval::Document;
using okfbench::retrieval::IndexConfig;
using okfbench::retrieval::SearchIndex;
using okfbench::retrieval::SearchOptions;

struct Corpus {
  std::vector<std::string> ids, titles, texts;
};

const Corpus& scifact_corpus() {
  static const Corpus corpus = [] {
    Corpus c;
    std::ifstream in(okfbench::test::data_root() / "collections/scifact/corpus.jsonl");
    for (std::string line; std::getline(in, line);) {
      auto doc = nlohmann::json::parse(line);
      c.ids.push_back(doc["_id"].get<std::string>());
      c.titles.push_back(doc["title"].get<std::string>());
      c.texts.push_back(doc["text"].get<std::string>());
    }
    return c;
  }();
  return corpus;
}

// SciFact documents repeated with new ids until there are `n`.
struct Replicated {
  std::vector<std::string> ids;
  std::vector<Document> docs;
};

const Replicated& replicated(std::size_t n) {
  static Replicated r = [n] {
    const Corpus& c = scifact_corpus();
    Replicated out;
    out.ids.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.ids.push_back(c.ids[i % c.ids.size()] + "-r" + std::to_string(i));
    for (std::size_t i = 0; i < n; ++i) {
      Document d;
      d.id = out.ids[i];
      d.title = c.titles[i % c.ids.size()];
      d.body = c.texts[i % c.ids.size()];
      out.docs.push_back(d);
    }
    return out;
  }();
  return r;
}

std::vector<Document> scifact_documents() {
  const Corpus& c = scifact_corpus();
  std::vector<Document> docs(c.ids.size());
  for (std::size_t i = 0; i < c.ids.size(); ++i) {
    docs[i].id = c.ids[i];
    docs[i].title = c.titles[i];
    docs[i].body = c.texts[i];
  }
  return docs;
}

const std::vector<std::string>& queries() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    auto set = okfbench::datasets::read_beir(okfbench::test::data_root() / "collections/scifact", "test");
    for (const auto& q : set.questions) out.push_back(q.text);
    return out;
  }();
  return texts;
}

const fs::path& scifact_bundle() {
  static const fs::path path = [] {
    fs::path scratch = okfbench::test::fresh_dir("bench-search");
    fs::path out = scratch.parent_path() / "bench-search-scifact";  // kept between runs
    fs::remove_all(scratch);
    if (!fs::exists(out / "bundle")) {
      fs::remove_all(out);
      okfbench::datasets::convert_beir(okfbench::test::data_root() / "collections/scifact", out);
    }
    return out / "bundle";
  }();
  return path;
}

IndexConfig config_for(int64_t variant) {
  return variant == 0 ? IndexConfig{} : okfbench::retrieval::lucene_flat_config();
}

void set_percentiles(benchmark::State& state, std::vector<double>& micros) {
  if (micros.empty()) return;
  std::sort(micros.begin(), micros.end());
  state.counters["p50_us"] = micros[micros.size() / 2];
  state.counters["p99_us"] = micros[std::min(micros.size() - 1, micros.size() * 99 / 100)];
}

void run_queries(benchmark::State& state, const SearchIndex& index, std::size_t k) {
  const auto& texts = queries();
  SearchOptions options;
  options.limit = k;
  std::vector<double> micros;
  std::size_t i = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    auto hits = index.search(texts[i++ % texts.size()], options);
    micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    benchmark::DoNotOptimize(hits.data());
  }
  set_percentiles(state, micros);
}

// Arg 0: default BM25F; 1: Lucene flat (porter, stop words).
void BM_SciFactBuild(benchmark::State& state) {
  auto docs = scifact_documents();
  for (auto _ : state) {
    auto index = SearchIndex::build(docs, config_for(state.range(0)));
    benchmark::DoNotOptimize(index.stats().postings);
  }
  state.counters["docs_per_s"] = benchmark::Counter(static_cast<double>(docs.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SciFactBuild)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

// Args: config variant, k.
void BM_SciFactQuery(benchmark::State& state) {
  auto docs = scifact_documents();
  auto index = SearchIndex::build(docs, config_for(state.range(0)));
  run_queries(state, index, static_cast<std::size_t>(state.range(1)));
}
BENCHMARK(BM_SciFactQuery)->Args({0, 10})->Args({1, 10})->Args({1, 1000})->Unit(benchmark::kMicrosecond);

void BM_Scale100kBuild(benchmark::State& state) {
  const auto& r = replicated(100000);
  for (auto _ : state) {
    auto index = SearchIndex::build(r.docs, config_for(state.range(0)));
    benchmark::DoNotOptimize(index.stats().postings);
  }
}
BENCHMARK(BM_Scale100kBuild)->Arg(0)->Unit(benchmark::kMillisecond)->Iterations(3)->MeasureProcessCPUTime()->UseRealTime();

void BM_Scale100kQuery(benchmark::State& state) {
  const auto& r = replicated(100000);
  auto index = SearchIndex::build(r.docs, config_for(state.range(0)));
  run_queries(state, index, static_cast<std::size_t>(state.range(1)));
}
BENCHMARK(BM_Scale100kQuery)->Args({0, 10})->Args({0, 1000})->Unit(benchmark::kMicrosecond);

void BM_SciFactBundleLoad(benchmark::State& state) {
  const fs::path& path = scifact_bundle();
  std::size_t concepts = 0;
  for (auto _ : state) {
    Bundle bundle = Bundle::load(path);
    concepts = bundle.concepts().size();
    benchmark::DoNotOptimize(concepts);
  }
  state.counters["concepts"] = static_cast<double>(concepts);
  state.counters["concepts_per_s"] =
      benchmark::Counter(static_cast<double>(concepts), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SciFactBundleLoad)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  if (!okfbench::test::have_data()) {
    std::fprintf(stderr, "bench_search: no reference data at %s (set OKFBENCH_DATA)\n",
                 okfbench::test::data_root().string().c_str());
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
