// OpenAIModel and AnthropicModel against hostile replies from the mock server
// (real loopback sockets): each ends in a clean, classified error or a
// repaired reply, never a crash.
#include "agents/provider_models.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "agents/agent.hpp"
#include "agents/mock_server.hpp"
#include "agents/secrets.hpp"
#include "tests/agents/fake_kb.hpp"

namespace okfbench::agents {
namespace {

constexpr const char* kQuestion = "Why is the replica lagging?";
constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

struct Hostile {
  explicit Hostile(std::string_view faults) : server(SimOptions{}, counter, parse_faults(faults)) {
    server.start();
    policy.max_attempts = 2;
    policy.timeout_seconds = 10;
    policy.sleep = [](double) {};
  }
  std::unique_ptr<ChatModel> model(Provider provider) {
    if (provider == Provider::openai)
      return std::make_unique<OpenAIModel>(Endpoint{server.base_url() + "/v1", "sk-hostile-key", "gpt-4o", policy});
    return std::make_unique<AnthropicModel>(Endpoint{server.base_url(), "sk-ant-hostile", "claude-sonnet-4-5", policy});
  }
  ByteCounter counter;
  MockServer server;
  RetryPolicy policy;
};

const Provider kProviders[] = {Provider::openai, Provider::anthropic};

const char* name(Provider p) { return p == Provider::openai ? "openai" : "anthropic"; }

TEST(ProviderModels, ToolArgumentsNested100000DeepAreAPermanentInvalidReply) {
  for (Provider p : kProviders) {
    Hostile h("deep:1:100000");
    FakeKb kb(FakeKb::Style::grafito, kGrafito);
    AgentRun run = run_agent(*h.model(p), kb, kQuestion);
    EXPECT_EQ(run.stop, AgentStop::model_error) << name(p);
    EXPECT_EQ(run.failure, Failure::permanent) << name(p);
    EXPECT_NE(run.error.find("invalid reply"), std::string::npos) << run.error;
    EXPECT_NE(run.error.find("deeper than 128 levels"), std::string::npos) << run.error;
    EXPECT_EQ(h.server.requests(), 1u) << name(p);  // not retried
  }
}

TEST(ProviderModels, A0xFFByteInTextAndArgumentsIsReplacedAndTheRunGoesOn) {
  for (Provider p : kProviders) {
    Hostile h("badutf8");
    auto model = h.model(p);
    ChatResponse first = model->chat(ChatRequest{});
    EXPECT_NE(first.message.content.find(kReplacement), std::string::npos) << name(p);
    ASSERT_EQ(first.message.tool_calls.size(), 1u) << name(p);
    EXPECT_NE(first.message.tool_calls[0].arguments.find(kReplacement), std::string::npos) << name(p);
    FakeKb kb(FakeKb::Style::grafito, kGrafito);
    Hostile again("badutf8");
    AgentRun run = run_agent(*again.model(p), kb, kQuestion);
    EXPECT_EQ(run.stop, AgentStop::answered) << name(p) << ": " << run.error;
    ASSERT_FALSE(run.tool_calls.empty());
    EXPECT_NE(run.tool_calls[0].arguments.find(kReplacement), std::string::npos) << name(p);
  }
}

TEST(ProviderModels, CountsNearInt64MaxAreAPermanentInvalidReply) {
  for (Provider p : kProviders) {
    Hostile h("usage");
    try {
      h.model(p)->chat(ChatRequest{});
      ADD_FAILURE() << name(p) << ": accepted";
    } catch (const CallError& e) {
      EXPECT_FALSE(e.transient()) << name(p);
      EXPECT_NE(std::string(e.what()).find("must be an integer from 0 to 1000000000"), std::string::npos) << e.what();
    }
  }
}

TEST(ProviderModels, TenThousandToolCallsRunOnlyTheCapAndTheModelIsTold) {
  for (Provider p : kProviders) {
    Hostile h("calls:1:10000");
    FakeKb kb(FakeKb::Style::grafito, kGrafito);
    AgentRun run = run_agent(*h.model(p), kb, kQuestion);
    EXPECT_EQ(run.stop, AgentStop::answered) << name(p) << ": " << run.error;
    // The first 64 ran, in order; none after them.
    ASSERT_GE(kb.calls.size(), kDefaultMaxToolCallsPerTurn);
    EXPECT_NE(kb.calls[63].find("\"q64\""), std::string::npos) << kb.calls[63];
    for (const std::string& call : kb.calls) EXPECT_EQ(call.find("\"q65\""), std::string::npos) << call;
    ASSERT_GE(run.turns.size(), 2u);
    EXPECT_EQ(run.turns[0].tool_calls, kDefaultMaxToolCallsPerTurn) << name(p);
    EXPECT_EQ(run.turns[0].dropped_tool_calls, 10000u - kDefaultMaxToolCallsPerTurn) << name(p);
    EXPECT_EQ(summary(run).dropped_tool_calls, 10000u - kDefaultMaxToolCallsPerTurn);
    // The assistant message keeps only the calls that ran, and the last result says what was dropped.
    const Message& asked = run.messages[2];
    EXPECT_EQ(asked.tool_calls.size(), kDefaultMaxToolCallsPerTurn);
    const Message& last_result = run.messages[2 + kDefaultMaxToolCallsPerTurn];
    EXPECT_EQ(last_result.role, Role::tool);
    EXPECT_NE(last_result.content.find("9936 more tool call(s) in your last reply were not run: at most 64"),
              std::string::npos)
        << last_result.content;
  }
}

TEST(ProviderModels, FailuresAreClassified) {
  struct Case {
    const char* fault;
    Failure failure;
  };
  for (Case c : {Case{"500:5", Failure::transient}, Case{"drop:5", Failure::transient},
                 Case{"401", Failure::permanent}, Case{"malformed", Failure::permanent},
                 Case{"huge:1:64", Failure::permanent}}) {
    for (Provider p : kProviders) {
      Hostile h(c.fault);
      h.policy.max_response_bytes = 1 << 20;
      FakeKb kb(FakeKb::Style::grafito, kGrafito);
      AgentRun run = run_agent(*h.model(p), kb, kQuestion);
      EXPECT_EQ(run.stop, AgentStop::model_error) << c.fault;
      EXPECT_EQ(run.failure, c.failure) << c.fault << " " << name(p) << ": " << run.error;
    }
  }
}

TEST(ProviderModels, ResolveEndpointRefusesControlCharactersNamingTheField) {
  Endpoint e{"http://127.0.0.1:1/v1", "sk-abc\r\nX-Injected: pwned", "m", {}};
  try {
    resolve_endpoint(Provider::openai, e);
    FAIL();
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("--api-key"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("0x0D"), std::string::npos) << error.what();
  }
  Endpoint url{"http://127.0.0.1:1/v1\n", "sk-ok-key", "m", {}};
  EXPECT_THROW(resolve_endpoint(Provider::openai, url), UsageError);
  Endpoint header{"http://127.0.0.1:1/v1", "sk-ok-key", "m", {}};
  header.extra_headers = {{"X-Team", std::string("a\0b", 3)}};
  header.origin = "spec.yaml: models[2]";
  try {
    resolve_endpoint(Provider::anthropic, header);
    FAIL();
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("spec.yaml: models[2]: headers.X-Team"), std::string::npos)
        << error.what();
  }
  header.extra_headers = {{"X Bad:Name", "v"}};
  EXPECT_THROW(resolve_endpoint(Provider::anthropic, header), UsageError);
}

TEST(ProviderModels, KeysFromTheEnvironmentVariableASpecNamesAreCheckedAndRemembered) {
  ::setenv("OKFBENCH_TEST_GATEWAY_KEY", "gw-key-from-env-31337", 1);
  Endpoint e{"http://127.0.0.1:1/v1", "", "m", {}};
  e.api_key_env = "OKFBENCH_TEST_GATEWAY_KEY";
  EXPECT_EQ(resolve_endpoint(Provider::openai, e).api_key, "gw-key-from-env-31337");
  EXPECT_EQ(redact("echo gw-key-from-env-31337"), "echo [REDACTED]");
  ::setenv("OKFBENCH_TEST_GATEWAY_KEY", "bad\nkey", 1);
  e.origin = "spec.yaml: models[1]";
  try {
    resolve_endpoint(Provider::openai, e);
    FAIL();
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("spec.yaml: models[1]: api_key_env OKFBENCH_TEST_GATEWAY_KEY"),
              std::string::npos)
        << error.what();
  }
  ::unsetenv("OKFBENCH_TEST_GATEWAY_KEY");
  EXPECT_THROW(resolve_endpoint(Provider::openai, e), InputError);  // named but not set
}

TEST(ProviderModels, AKeyInTheUrlIsRememberedAndNeverRecorded) {
  Endpoint e{"http://user:sk-in-url-SECRET-42@127.0.0.1:1/v1/", "", "m", {}};
  Endpoint resolved = resolve_endpoint(Provider::openai, e);
  EXPECT_EQ(resolved.base_url, "http://user:sk-in-url-SECRET-42@127.0.0.1:1/v1");  // libcurl sends it as Basic auth
  EXPECT_EQ(redact("x sk-in-url-SECRET-42 y"), "x [REDACTED] y");
  EXPECT_EQ(recorded_base_url(Provider::openai, e.base_url), "http://127.0.0.1:1/v1");
}

}  // namespace
}  // namespace okfbench::agents
