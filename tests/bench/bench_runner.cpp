// The runner with sim: trials per second for the default experiment and where
// the time goes.
//
//   cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DOKFBENCH_BUILD_BENCHMARKS=ON
//   cmake --build build-bench -j2 --target bench_runner
//   build-bench/tests/bench/bench_runner
//
// BM_DefaultExperiment runs datasets/experiments/default.yaml end to end (bundles
// from a cache inside the build tree, so generation is timed once, by
// BM_Generate) and splits its wall time: setup (load and index the bundles),
// trials (the pool), and inside the trials the share spent in the model (sim:
// its policy, the BPE count of each request, the cache model) and in retrieval
// (context packing, tool calls). The other benchmarks time those parts alone
// on the 10,000-concept generated bundle.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>

#include "agents/agent.hpp"
#include "agents/bundle_tools.hpp"
#include "agents/sim_model.hpp"
#include "datasets/generator.hpp"
#include "engine/runner.hpp"
#include "engine/spec.hpp"
#include "engine/store.hpp"
#include "reports/record.hpp"
#include "retrieval/context.hpp"
#include "retrieval/search.hpp"
#include "retrieval/tokens.hpp"
#include "tests/support/test_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace okfbench;

const fs::path& cache_dir() {
  static const fs::path dir = test::fresh_dir("bench-runner-cache").parent_path() / "bench-runner-bundles";
  return dir;
}

// The default experiment's 10,000-concept bundle (same generator options).
struct Bundle10k {
  fs::path dir;
  std::unique_ptr<retrieval::Bundle> bundle;
  std::unique_ptr<retrieval::SearchIndex> index;
  std::vector<datasets::GeneratedQuestion> questions;
};

Bundle10k& bundle10k() {
  static Bundle10k b = [] {
    Bundle10k out;
    out.dir = test::fresh_dir("bench-runner-10k");
    datasets::GeneratorOptions options;
    options.concepts = 10000;
    options.questions = 20;
    out.questions = datasets::generate_bundle(options, out.dir).questions;
    out.bundle = std::make_unique<retrieval::Bundle>(retrieval::Bundle::load(out.dir));
    out.index = std::make_unique<retrieval::SearchIndex>(retrieval::SearchIndex::build(*out.bundle));
    return out;
  }();
  return b;
}

const retrieval::TokenCounter& counter() {
  static const auto c = retrieval::make_counter("o200k_base");
  return *c;
}

void BM_DefaultExperiment(benchmark::State& state) {
  const fs::path spec_file = test::source_dir() / "datasets" / "experiments" / "default.yaml";
  const auto spec = engine::load_spec(spec_file, {"cache_dir=" + cache_dir().string()});
  engine::RunOptions warm;
  warm.out_dir = test::fresh_dir("bench-runner-warm");
  warm.mode = engine::Mode::dry_run;
  warm.progress = engine::Progress::quiet;
  engine::run_experiment(spec, warm);  // generates the bundles into the cache, untimed
  engine::RunResult result;
  double model_ms = 0, retrieval_ms = 0, trial_ms = 0;
  for (auto _ : state) {
    engine::RunOptions options;
    options.out_dir = test::fresh_dir("bench-runner-out");
    options.progress = engine::Progress::quiet;
    result = engine::run_experiment(spec, options);
    for (const auto& r : reports::read_run_dir(options.out_dir).records) {
      model_ms += r.timings.model_ms.value_or(0);
      retrieval_ms += r.timings.retrieval_ms.value_or(0);
      trial_ms += r.timings.total_ms.value_or(0);
    }
  }
  state.counters["trials"] = static_cast<double>(result.ran);
  state.counters["trials_per_s"] = static_cast<double>(result.ran) / result.trial_seconds;
  state.counters["setup_s"] = result.setup_seconds;
  state.counters["trials_s"] = result.trial_seconds;
  state.counters["reports_s"] = result.seconds - result.setup_seconds - result.trial_seconds;
  state.counters["model_share"] = model_ms / trial_ms;
  state.counters["retrieval_share"] = retrieval_ms / trial_ms;
}
BENCHMARK(BM_DefaultExperiment)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

void BM_Generate(benchmark::State& state) {
  datasets::GeneratorOptions options;
  options.concepts = static_cast<std::size_t>(state.range(0));
  options.threads = 2;
  for (auto _ : state) {
    state.PauseTiming();
    const fs::path out = test::fresh_dir("bench-runner-gen");
    state.ResumeTiming();
    benchmark::DoNotOptimize(datasets::generate_bundle(options, out));
    state.PauseTiming();
    fs::remove_all(out);
    state.ResumeTiming();
  }
  state.counters["concepts_per_s"] = benchmark::Counter(static_cast<double>(state.range(0) * state.iterations()),
                                                        benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Generate)->Arg(10000)->Arg(100000)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

void BM_LoadAndIndex10k(benchmark::State& state) {
  const fs::path dir = bundle10k().dir;
  for (auto _ : state) {
    auto bundle = retrieval::Bundle::load(dir);
    benchmark::DoNotOptimize(retrieval::SearchIndex::build(bundle));
  }
}
BENCHMARK(BM_LoadAndIndex10k)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

// One context trial: pack (budget 2,000) and one sim call with the pack.
void BM_ContextTrial10k(benchmark::State& state) {
  auto& b = bundle10k();
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& q = b.questions[i++ % b.questions.size()];
    retrieval::ContextOptions options;
    options.counter = &counter();
    const auto pack = retrieval::pack_context(*b.bundle, *b.index, q.text, options);
    agents::SimOptions sim_options;
    sim_options.cache = agents::CacheKind::openai;
    agents::SimModel model(sim_options, counter());
    agents::ChatRequest request;
    request.messages.push_back({agents::Role::user, pack.text + "\n\nQuestion: " + q.text, {}, {}, {}});
    benchmark::DoNotOptimize(model.chat(request));
  }
}
BENCHMARK(BM_ContextTrial10k)->Unit(benchmark::kMicrosecond);

// One agent trial with all six tools (BundleTools built once, as each runner worker does).
void BM_AgentTrial10k(benchmark::State& state) {
  auto& b = bundle10k();
  agents::ToolsOptions tools_options;
  tools_options.now = "2026-11-29T00:00:00Z";
  agents::BundleTools tools(*b.bundle, tools_options);
  std::size_t i = 0, turns = 0;
  for (auto _ : state) {
    const auto& q = b.questions[i++ % b.questions.size()];
    agents::SimOptions sim_options;
    sim_options.seed = 1;
    sim_options.cache = agents::CacheKind::openai;
    agents::SimModel model(sim_options, counter());
    agents::AgentOptions options;
    options.counter = &counter();
    const auto run = agents::run_agent(model, tools, q.text, options);
    turns += run.turns.size();
  }
  state.counters["turns_per_trial"] = static_cast<double>(turns) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_AgentTrial10k)->Unit(benchmark::kMicrosecond);

// Sim alone on the requests of recorded agent trials: the full model call
// (policy, token counts, cache model) against the policy alone. The
// difference is what counting the requests costs.
std::vector<std::vector<agents::ChatRequest>>& recorded_trials() {
  static std::vector<std::vector<agents::ChatRequest>> trials = [] {
    struct Recorder : agents::ChatModel {
      agents::ChatModel& inner;
      std::vector<agents::ChatRequest> seen;
      explicit Recorder(agents::ChatModel& m) : inner(m) {}
      agents::ChatResponse chat(const agents::ChatRequest& r) override {
        seen.push_back(r);
        return inner.chat(r);
      }
      std::string name() const override { return inner.name(); }
    };
    auto& b = bundle10k();
    agents::ToolsOptions tools_options;
    tools_options.now = "2026-11-29T00:00:00Z";
    agents::BundleTools tools(*b.bundle, tools_options);
    std::vector<std::vector<agents::ChatRequest>> out;
    for (const auto& q : b.questions) {
      agents::SimOptions sim_options;
      sim_options.seed = 1;
      agents::SimModel sim(sim_options, counter());
      Recorder recorder(sim);
      agents::run_agent(recorder, tools, q.text, {});
      out.push_back(recorder.seen);
    }
    return out;
  }();
  return trials;
}

void BM_SimCallsOfATrial(benchmark::State& state) {
  const auto& trials = recorded_trials();
  std::size_t i = 0;
  for (auto _ : state) {
    agents::SimOptions options;
    options.seed = 1;
    options.cache = agents::CacheKind::openai;
    agents::SimModel model(options, counter());  // fresh: nothing counted yet, as in a trial
    for (const auto& request : trials[i++ % trials.size()]) benchmark::DoNotOptimize(model.chat(request));
  }
}
BENCHMARK(BM_SimCallsOfATrial)->Unit(benchmark::kMicrosecond);

void BM_SimPolicyOfATrial(benchmark::State& state) {
  const auto& trials = recorded_trials();
  agents::SimOptions options;
  options.seed = 1;
  std::size_t i = 0;
  for (auto _ : state) {
    for (const auto& request : trials[i++ % trials.size()]) benchmark::DoNotOptimize(agents::sim_decide(request, options, counter()));
  }
}
BENCHMARK(BM_SimPolicyOfATrial)->Unit(benchmark::kMicrosecond);

// Storing one finished trial: the SQLite insert (WAL) and the JSONL append.
void BM_StoreTrial(benchmark::State& state) {
  auto store = engine::ResultStore::open(test::fresh_dir("bench-runner-store"));
  reports::TrialRecord r;
  r.bundle = "gen-10000";
  r.config.kind = reports::PathKind::agent;
  r.config.model = "sim";
  for (int t = 0; t < 4; ++t) {
    reports::TurnRecord turn;
    turn.input_tokens = 1000 * (t + 1);
    turn.tool_calls.push_back({"search", R"({"query":"how do we measure the response time"})", 900, "", false, std::nullopt});
    r.turns.push_back(turn);
  }
  std::size_t i = 0;
  for (auto _ : state) {
    r.trial_key = std::to_string(i++);
    store.add(r);
  }
}
BENCHMARK(BM_StoreTrial)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
