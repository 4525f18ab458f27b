// One trial's model calls: stream: true per model, timed per turn.
#include "engine/trial.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "agents/mock_server.hpp"
#include "engine/runner.hpp"
#include "engine/spec.hpp"
#include "retrieval/tokens.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;

TEST(Trial, AStreamingModelRecordsFirstTokenAndTotalTimeWithTheSameUsage) {
  const auto counter = retrieval::make_counter("o200k_base");
  agents::MockServer mock({}, *counter);
  mock.start();
  const fs::path dir = test::fresh_dir("trial-stream");
  const std::string url = mock.base_url();
  test::write_file(dir / "spec.yaml", fmt::format(R"(name: stream
cache_dir: {cache}
max_questions: 2
bundles:
  - path: {src}/datasets/bundles/demo
    questions: {src}/datasets/experiments/questions/demo.yaml
paths:
  context: {{budget_tokens: 1000}}
  agent: {{tools: [search, open, follow], max_turns: 6}}
models:
  - {{name: openai:mock, label: openai-plain, base_url: {url}/v1}}
  - {{name: openai:mock, label: openai-streamed, base_url: {url}/v1, stream: true}}
  - {{name: anthropic:mock, label: anthropic-plain, base_url: {url}}}
  - {{name: anthropic:mock, label: anthropic-streamed, base_url: {url}, stream: true}}
)",
                                                  fmt::arg("cache", (dir / "cache").string()),
                                                  fmt::arg("src", test::source_dir().string()), fmt::arg("url", url)));
  RunOptions o;
  o.out_dir = dir / "run";
  o.progress = Progress::quiet;
  o.forecast = false;
  const RunResult result = run_experiment(load_spec(dir / "spec.yaml"), o);
  mock.stop();
  EXPECT_EQ(result.failed, 0u);
  // question|path|wire -> plain, streamed
  std::map<std::string, std::map<bool, reports::TrialRecord>> pairs;
  for (auto& r : reports::read_results_jsonl(dir / "run/results.jsonl")) {
    const bool streamed = r.config.model.ends_with("-streamed");
    const std::string wire = r.config.model.substr(0, r.config.model.find('-'));
    pairs[r.question_id + "|" + std::string(reports::to_string(r.config.kind)) + "|" + wire][streamed] = r;
  }
  ASSERT_EQ(pairs.size(), 8u);
  for (const auto& [name, pair] : pairs) {
    SCOPED_TRACE(name);
    const auto& plain = pair.at(false);
    const auto& streamed = pair.at(true);
    ASSERT_EQ(plain.turns.size(), streamed.turns.size());
    EXPECT_EQ(plain.answer, streamed.answer);
    for (std::size_t i = 0; i < plain.turns.size(); ++i) {
      EXPECT_EQ(plain.turns[i].input_tokens, streamed.turns[i].input_tokens);
      EXPECT_EQ(plain.turns[i].output_tokens, streamed.turns[i].output_tokens);
      EXPECT_EQ(plain.turns[i].tool_calls.size(), streamed.turns[i].tool_calls.size());
      ASSERT_TRUE(plain.turns[i].ms && streamed.turns[i].ms) << "every HTTP call is timed";
      EXPECT_FALSE(plain.turns[i].first_token_ms) << "time to first token is a stream's";
      ASSERT_TRUE(streamed.turns[i].first_token_ms);
      EXPECT_GE(*streamed.turns[i].first_token_ms, 0);
      EXPECT_LE(*streamed.turns[i].first_token_ms, *streamed.turns[i].ms);
    }
  }
}

TEST(Trial, StreamIsRefusedForSim) {
  const std::string text = "bundles:\n  - generate: {concepts: 10}\npaths: {context: {}}\nmodels: [{name: sim, stream: true}]\n";
  try {
    parse_spec(text, "spec.yaml", "/specs");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("models[0]: sim runs offline: base_url, api_key_env, headers and stream"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace okfbench::engine
