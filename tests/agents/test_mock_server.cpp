// The HTTP clients against the mock server over a real loopback socket.
#include "agents/mock_server.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>

#include "agents/agent.hpp"
#include "agents/openai_json.hpp"
#include "agents/anthropic_json.hpp"
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

// A chat request body of either wire, streamed or not.
std::string chat_body(bool openai, bool stream, bool include_usage) {
  ChatRequest request;
  request.model = "m";
  Message system, user;
  system.role = Role::system;
  system.content = "Answer briefly.";
  user.content = kQuestion;
  request.messages = {system, user};
  nlohmann::json body = nlohmann::json::parse(openai ? openai::request_to_json(request) : anthropic::request_to_json(request));
  if (stream) body["stream"] = true;
  if (include_usage) body["stream_options"] = {{"include_usage", true}};
  return body.dump();
}

int port_of(const MockServer& server) {
  std::string url = server.base_url();
  return std::stoi(url.substr(url.rfind(':') + 1));
}

struct Streamed {
  int status = 0;
  std::string content_type;
  std::vector<std::string> events;  // each "data:" payload, in order
  std::vector<double> arrivals;     // seconds since the request, per chunk
  bool complete = false;            // the transfer ended normally
};

Streamed post_stream(int port, const std::string& path, const std::string& body) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(10);
  Streamed out;
  std::string buffer;
  auto start = std::chrono::steady_clock::now();
  httplib::Headers headers = {{"anthropic-version", "2023-06-01"}};
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.headers = headers;
  req.body = body;
  req.set_header("Content-Type", "application/json");
  req.response_handler = [&](const httplib::Response& res) {
    out.status = res.status;
    out.content_type = res.get_header_value("Content-Type");
    return true;
  };
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    out.arrivals.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    buffer.append(data, n);
    for (std::size_t end; (end = buffer.find("\n\n")) != std::string::npos; buffer.erase(0, end + 2)) {
      std::string event = buffer.substr(0, end);
      std::size_t at = event.find("data: ");
      if (at != std::string::npos) out.events.push_back(event.substr(at + 6));
    }
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  out.complete = client.send(req, res, error);
  return out;
}

TEST(MockServerStreaming, OpenAIStreamCarriesTheSameAnswerAndUsageAsTheNonStreamedReply) {
  Fixture plain, streaming;
  int plain_port = port_of(plain.server);
  int stream_port = port_of(streaming.server);
  httplib::Client direct("127.0.0.1", plain_port);
  auto whole = direct.Post("/v1/chat/completions", chat_body(true, false, false), "application/json");
  ASSERT_TRUE(whole);
  nlohmann::json completion = nlohmann::json::parse(whole->body);
  Streamed s = post_stream(stream_port, "/v1/chat/completions", chat_body(true, true, true));
  ASSERT_TRUE(s.complete);
  EXPECT_EQ(s.status, 200);
  EXPECT_TRUE(s.content_type.starts_with("text/event-stream"));
  ASSERT_GE(s.events.size(), 4u);
  EXPECT_EQ(s.events.back(), "[DONE]");
  std::string text;
  for (std::size_t i = 0; i + 1 < s.events.size(); ++i) {
    nlohmann::json chunk = nlohmann::json::parse(s.events[i]);
    if (!chunk["choices"].empty() && chunk["choices"][0]["delta"].contains("content"))
      text += chunk["choices"][0]["delta"]["content"].get<std::string>();
  }
  EXPECT_EQ(text, completion["choices"][0]["message"]["content"].get<std::string>());
  nlohmann::json usage = nlohmann::json::parse(s.events[s.events.size() - 2])["usage"];
  EXPECT_EQ(usage, completion["usage"]);
  // Without include_usage, no chunk carries usage.
  Streamed bare = post_stream(stream_port, "/v1/chat/completions", chat_body(true, true, false));
  for (const std::string& e : bare.events) EXPECT_EQ(e.find("\"usage\""), std::string::npos) << e;
}

TEST(MockServerStreaming, AnthropicStreamSendsTheMessageEventsInOrder) {
  Fixture f;
  int port = port_of(f.server);
  Streamed s = post_stream(port, "/v1/messages", chat_body(false, true, false));
  ASSERT_TRUE(s.complete);
  ASSERT_GE(s.events.size(), 5u);
  EXPECT_EQ(nlohmann::json::parse(s.events.front())["type"], "message_start");
  EXPECT_EQ(nlohmann::json::parse(s.events[s.events.size() - 2])["type"], "message_delta");
  EXPECT_EQ(nlohmann::json::parse(s.events.back())["type"], "message_stop");
  EXPECT_GT(nlohmann::json::parse(s.events.front())["message"]["usage"]["input_tokens"].get<int>(), 0);
}

TEST(MockServerStreaming, CutStopsTheStreamAfterNEventsWithoutItsEnd) {
  Fixture f("cut:1:3");
  int port = port_of(f.server);
  Streamed s = post_stream(port, "/v1/chat/completions", chat_body(true, true, true));
  EXPECT_FALSE(s.complete) << "a cut stream must not end like a whole one";
  EXPECT_EQ(s.events.size(), 3u);
  Streamed next = post_stream(port, "/v1/chat/completions", chat_body(true, true, true));
  EXPECT_TRUE(next.complete);
  EXPECT_EQ(next.events.back(), "[DONE]");
}

TEST(MockServerStreaming, GapPausesBetweenTheFirstEventAndTheRest) {
  Fixture f("gap:1:0.5");
  int port = port_of(f.server);
  Streamed s = post_stream(port, "/v1/messages", chat_body(false, true, false));
  ASSERT_TRUE(s.complete);
  ASSERT_GE(s.arrivals.size(), 2u);
  EXPECT_GE(s.arrivals.back() - s.arrivals.front(), 0.45);
  EXPECT_LT(s.arrivals.front(), 0.4) << "the first event comes before the gap";
}

TEST(MockServerStreaming, CutAndGapOnAReplyNotStreamedAreATruncatedBodyAndADelay) {
  EXPECT_EQ(parse_faults("cut")[0], (Fault{FaultKind::cut, 1, 2}));
  EXPECT_EQ(parse_faults("gap")[0], (Fault{FaultKind::gap, 1, 3600}));
  Fixture f("cut");
  int port = port_of(f.server);
  httplib::Client client("127.0.0.1", port);
  auto cut = client.Post("/v1/chat/completions", chat_body(true, false, false), "application/json");
  EXPECT_FALSE(cut) << "a body shorter than its Content-Length";
}

TEST(MockServerStreaming, OurClientsStreamingGiveTheSameRunAsWithout) {
  for (bool openai : {true, false}) {
    Fixture plain, streaming;
    FakeKb kb(FakeKb::Style::grafito, kGrafito);
    Endpoint e{(openai ? plain.server.base_url() + "/v1" : plain.server.base_url()), "k", "m", plain.policy};
    Endpoint s{(openai ? streaming.server.base_url() + "/v1" : streaming.server.base_url()), "k", "m", streaming.policy};
    s.stream = true;
    std::unique_ptr<ChatModel> a, b;
    if (openai) a = std::make_unique<OpenAIModel>(e), b = std::make_unique<OpenAIModel>(s);
    else a = std::make_unique<AnthropicModel>(e), b = std::make_unique<AnthropicModel>(s);
    AgentRun whole = run_agent(*a, kb, kQuestion);
    AgentRun streamed = run_agent(*b, kb, kQuestion);
    EXPECT_EQ(streamed.stop, AgentStop::answered) << streamed.error;
    EXPECT_EQ(streamed.answer, whole.answer);
    EXPECT_EQ(streamed.tool_calls, whole.tool_calls);
    EXPECT_EQ(streamed.messages, whole.messages);
    ASSERT_EQ(streamed.turns.size(), whole.turns.size());
    for (std::size_t t = 0; t < whole.turns.size(); ++t) EXPECT_EQ(streamed.turns[t].usage, whole.turns[t].usage) << t;
  }
}

TEST(MockServerStreaming, OurClientRetriesAStreamCutShort) {
  Fixture f("cut:1:2");
  Endpoint e{f.server.base_url() + "/v1", "k", "m", f.policy};
  e.stream = true;
  OpenAIModel model(e);
  FakeKb kb(FakeKb::Style::grafito, kGrafito);
  AgentRun run = run_agent(model, kb, kQuestion);
  EXPECT_EQ(run.stop, AgentStop::answered) << run.error;
  EXPECT_EQ(f.sleeps.size(), 1u) << "one retry after the cut";
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
