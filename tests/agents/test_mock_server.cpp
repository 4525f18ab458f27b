// The HTTP clients against the mock server over a real loopback socket.
#include "agents/mock_server.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "agents/agent.hpp"
#include "agents/provider_models.hpp"
#include "core/error.hpp"
#include "tests/agents/fake_kb.hpp"

namespace okfbench::agents {
namespace {

constexpr const char* kQuestion = "A Cypher query got slow after a replica change. What should I do?";

struct Fixture {
  explicit Fixture(std::string_view faults = "") : server(SimOptions{}, counter, parse_faults(faults)) {
    server.start("127.0.0.1", 0);
    policy.base_delay_seconds = 0.01;
    policy.timeout_seconds = 5;
    policy.sleep = [this](double s) { sleeps.push_back(s); };
  }
  OpenAIModel openai() { return OpenAIModel(Endpoint{server.base_url() + "/v1", "sk-test-key", "gpt-4o", policy}); }
  AnthropicModel anthropic() {
    return AnthropicModel(Endpoint{server.base_url(), "sk-ant-test", "claude-sonnet-4-5", policy});
  }
  ByteCounter counter;
  MockServer server;
  RetryPolicy policy;
  std::vector<double> sleeps;
};

AgentRun direct_sim_run() {
  ByteCounter counter;
  SimModel sim({}, counter);
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  return run_agent(sim, kb, kQuestion);
}

TEST(MockServer, OpenAIWireGivesTheSameRunAsTheSimDirectly) {
  Fixture f;
  OpenAIModel model = f.openai();
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  AgentRun run = run_agent(model, kb, kQuestion);
  AgentRun direct = direct_sim_run();
  EXPECT_EQ(run.stop, AgentStop::answered) << run.error;
  EXPECT_EQ(run.answer, direct.answer);
  EXPECT_EQ(run.tool_calls, direct.tool_calls);
  EXPECT_EQ(f.server.requests(), direct.turns.size());
  // Usage crosses the wire: input and cached tokens are reported, writes are not (OpenAI).
  for (std::size_t t = 0; t < run.turns.size(); ++t) {
    EXPECT_TRUE(run.turns[t].usage.input_tokens.has_value());
    EXPECT_TRUE(run.turns[t].usage.cached_input_tokens.has_value());
    EXPECT_EQ(run.turns[t].usage.cache_write_tokens, std::nullopt);
  }
}

TEST(MockServer, AnthropicWireMergesToolResultsAndReportsCacheWrites) {
  Fixture f;
  AnthropicModel model = f.anthropic();
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  AgentOptions options;
  options.breakpoints = CacheBreakpoints::tools_system_and_last_message;
  options.system_prompt = std::string(1500, 'p');  // above the 1,024-token minimum (1 token per byte here)
  AgentRun run = run_agent(model, kb, kQuestion, options);
  AgentRun direct = direct_sim_run();
  EXPECT_EQ(run.answer, direct.answer);
  EXPECT_EQ(run.tool_calls, direct.tool_calls);
  ASSERT_GE(run.turns.size(), 2u);
  const Usage& first = run.turns[0].usage;
  EXPECT_EQ(first.cached_input_tokens, 0);
  EXPECT_GT(*first.cache_write_tokens, 1500);
  const Usage& second = run.turns[1].usage;
  EXPECT_EQ(second.cached_input_tokens, *first.cache_write_tokens);  // turn 1's prefix, read back
  EXPECT_EQ(*second.input_tokens,
            *second.cached_input_tokens + *second.cache_write_tokens + 3);  // + the uncached reply priming
}

TEST(MockServer, RetriesRateLimitsHonouringRetryAfter) {
  Fixture f("429:2:3");
  OpenAIModel model = f.openai();
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  AgentRun run = run_agent(model, kb, kQuestion);
  EXPECT_EQ(run.stop, AgentStop::answered) << run.error;
  EXPECT_EQ(f.sleeps, (std::vector<double>{3.0, 3.0}));
}

TEST(MockServer, RetriesServerErrorsTruncatedBodiesAndDroppedConnectionsWithBackoff) {
  for (const char* fault : {"500:2", "truncated:2", "drop:2"}) {
    Fixture f(fault);
    AnthropicModel model = f.anthropic();
    FakeKb kb(FakeKb::Style::grafito, kGrafito);
    AgentRun run = run_agent(model, kb, kQuestion);
    EXPECT_EQ(run.stop, AgentStop::answered) << fault << ": " << run.error;
    ASSERT_EQ(f.sleeps.size(), 2u) << fault;
    // base 0.01 s: attempt 1 waits 0.005..0.01, attempt 2 waits 0.01..0.02
    EXPECT_GE(f.sleeps[0], 0.005);
    EXPECT_LT(f.sleeps[0], 0.01);
    EXPECT_GE(f.sleeps[1], 0.01);
    EXPECT_LT(f.sleeps[1], 0.02);
  }
}

TEST(MockServer, GivesUpAfterMaxAttempts) {
  Fixture f("500:10");
  f.policy.max_attempts = 3;
  OpenAIModel model = f.openai();
  try {
    model.chat(ChatRequest{});
    FAIL();
  } catch (const InputError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("failed after 3 attempt(s)"), std::string::npos) << message;
    EXPECT_NE(message.find("HTTP 500: Internal error (mock fault)"), std::string::npos) << message;
    EXPECT_EQ(message.find("sk-test-key"), std::string::npos);
  }
  EXPECT_EQ(f.server.requests(), 3u);
}

TEST(MockServer, ClientErrorsAreNotRetried) {
  Fixture f("401:5");
  OpenAIModel model = f.openai();
  try {
    model.chat(ChatRequest{});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("HTTP 401: Invalid API key (mock fault)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f.server.requests(), 1u);
  EXPECT_TRUE(f.sleeps.empty());
}

TEST(MockServer, MalformedBodyIsAClearErrorAndTheLoopRecordsIt) {
  Fixture f("malformed");
  OpenAIModel model = f.openai();
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  AgentRun run = run_agent(model, kb, kQuestion);
  EXPECT_EQ(run.stop, AgentStop::model_error);
  EXPECT_NE(run.error.find("malformed or truncated JSON"), std::string::npos) << run.error;
}

TEST(MockServer, TimeoutsAreRetriedThenReported) {
  Fixture f("delay:2:1.5");
  f.policy.timeout_seconds = 0.3;
  f.policy.max_attempts = 2;
  OpenAIModel model = f.openai();
  try {
    model.chat(ChatRequest{});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
}

TEST(MockServer, RefusedConnectionIsReported) {
  RetryPolicy policy;
  policy.max_attempts = 2;
  policy.sleep = [](double) {};
  int port;
  {
    ByteCounter counter;
    MockServer server({}, counter);
    port = server.start();
  }  // stopped: nothing listens on `port` now
  OpenAIModel model(Endpoint{fmt::format("http://127.0.0.1:{}/v1", port), "k", "m", policy});
  EXPECT_THROW(model.chat(ChatRequest{}), InputError);
}

TEST(MockServer, FaultSpecs) {
  EXPECT_EQ(parse_faults("429:2:3,500"),
            (std::vector<Fault>{{FaultKind::rate_limited, 2, 3.0}, {FaultKind::server_error, 1, 1.0}}));
  EXPECT_EQ(parse_faults("delay:1:0.25")[0].value, 0.25);
  EXPECT_EQ(parse_faults("deep")[0], (Fault{FaultKind::deep, 1, 100000}));
  EXPECT_EQ(parse_faults("huge:2")[0], (Fault{FaultKind::huge, 2, 2048}));
  EXPECT_THROW(parse_faults("teapot"), UsageError);
  EXPECT_THROW(parse_faults("500:x"), UsageError);
  EXPECT_THROW(parse_faults("500:0"), UsageError);
  EXPECT_THROW(parse_faults("500:1e300"), UsageError);
  for (const char* fault : {"500:nan", "delay:1:inf", "delay:1:-1", "429:1:0x10", "429:1:+1"}) {
    EXPECT_THROW(parse_faults(fault), UsageError) << fault;
  }
}

}  // namespace
}  // namespace okfbench::agents
