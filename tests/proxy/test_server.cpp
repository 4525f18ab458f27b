// The gateway over real loopback sockets, between an httplib client and the mock server.
#include "proxy/server.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <thread>

#include "agents/mock_server.hpp"
#include "agents/openai_json.hpp"
#include "core/error.hpp"
#include "retrieval/tokens.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::proxy {
namespace {
using nlohmann::json;

constexpr const char* kKey = "sk-proxy-test-KEY-0001";

struct Fixture {
  explicit Fixture(std::string_view faults = "", ProxyOptions o = {})
      : mock(agents::SimOptions{}, counter, agents::parse_faults(faults)) {
    mock.start();
    log = test::fresh_dir("proxy-" + std::to_string(++made)) / "log.jsonl";
    o.upstream = mock.base_url() + "/v1";
    o.log_path = log.string();
    proxy = std::make_unique<ProxyServer>(o, counter);
    port = proxy->start();
  }
  // The records, once `expected` are written (a stream's is written when it has ended).
  std::vector<json> records(std::size_t expected = 1) const {
    for (int i = 0; i < 200 && proxy->exchanges() < expected; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    std::vector<json> out;
    std::istringstream lines(test::read_file(log));
    for (std::string line; std::getline(lines, line);) out.push_back(json::parse(line));
    return out;
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(20);
    c.set_default_headers({{"Authorization", std::string("Bearer ") + kKey}, {"anthropic-version", "2023-06-01"}});
    return c;
  }
  static inline int made = 0;
  retrieval::HeuristicCounter counter;
  agents::MockServer mock;
  std::filesystem::path log;
  std::unique_ptr<ProxyServer> proxy;
  int port = 0;
};

std::string chat_body(bool stream, bool include_usage, std::vector<json> messages = {}) {
  if (messages.empty()) messages = {{{"role", "user"}, {"content", "Why is the replica lagging?"}}};
  json body = {{"model", "gpt-4o"}, {"messages", messages}};
  if (stream) body["stream"] = true;
  if (include_usage) body["stream_options"] = {{"include_usage", true}};
  return body.dump();
}

// The body of a streamed reply as received, and whether the transfer completed.
std::pair<std::string, bool> stream_through(const Fixture& f, const std::string& path, const std::string& body,
                                            std::size_t stop_after_bytes = 0) {
  httplib::Client c = f.client();
  std::string received;
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.headers = {{"Authorization", std::string("Bearer ") + kKey}, {"anthropic-version", "2023-06-01"}};
  req.body = body;
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    received.append(data, n);
    return stop_after_bytes == 0 || received.size() < stop_after_bytes;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  bool ok = c.send(req, res, error);
  if (!ok && received.empty()) received = "(no reply: " + httplib::to_string(error) + ")";
  return {received, ok};
}

TEST(ProxyServer, NonStreamedReplyPassesThroughUnchangedAndIsLogged) {
  Fixture f;
  httplib::Client c = f.client();
  auto res = c.Post("/v1/chat/completions", chat_body(false, false), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  json reply = json::parse(res->body);
  auto records = f.records();
  ASSERT_EQ(records.size(), 1u);
  const json& r = records[0];
  EXPECT_EQ(r["status"], 200);
  EXPECT_EQ(r["usage"]["input_tokens"], reply["usage"]["prompt_tokens"]);
  EXPECT_EQ(r["usage"]["output_tokens"], reply["usage"]["completion_tokens"]);
  EXPECT_EQ(r["request_tokens"], 7);  // "Why is the replica lagging?": 27 bytes, 4 per token
  EXPECT_EQ(r["turn"], 1);
  EXPECT_TRUE(r["errors"].empty());
  EXPECT_EQ(test::read_file(f.log).find(kKey), std::string::npos);
}

TEST(ProxyServer, StreamedUsageIsReadFromTheStreamOfBothWires) {
  Fixture f;
  auto [openai, complete] = stream_through(f, "/v1/chat/completions", chat_body(true, true));
  EXPECT_TRUE(complete);
  EXPECT_NE(openai.find("data: [DONE]"), std::string::npos);
  auto [bare, bare_complete] = stream_through(f, "/v1/chat/completions", chat_body(true, false));
  EXPECT_TRUE(bare_complete);
  auto [anthropic, a_complete] = stream_through(
      f, "/v1/messages",
      json{{"model", "claude"}, {"max_tokens", 100}, {"stream", true}, {"messages", {{{"role", "user"}, {"content", "hi there"}}}}}.dump());
  EXPECT_TRUE(a_complete);
  EXPECT_NE(anthropic.find("event: message_stop"), std::string::npos);
  auto records = f.records(3);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_TRUE(records[0]["usage"]["input_tokens"].is_number());
  EXPECT_GT(records[0]["events"].get<int>(), 3);
  EXPECT_TRUE(records[0]["first_token_ms"].is_number());
  EXPECT_TRUE(records[1]["usage"].is_null());
  EXPECT_TRUE(records[1]["usage_unknown"].is_string());
  EXPECT_TRUE(records[2]["usage"]["output_tokens"].is_number());
  EXPECT_GT(records[2]["usage"]["output_tokens"].get<int>(), 1) << "the final count from message_delta";
  for (const json& r : records) EXPECT_TRUE(r["errors"].empty()) << r.dump();
}

TEST(ProxyServer, ResentTokensFollowTheConversation) {
  Fixture f;
  httplib::Client c = f.client();
  json first = {{"role", "user"}, {"content", std::string(40, 'q')}};
  ASSERT_TRUE(c.Post("/v1/chat/completions", chat_body(false, false, {first}), "application/json"));
  json answer = {{"role", "assistant"}, {"content", std::string(20, 'a')}};
  json follow = {{"role", "user"}, {"content", std::string(8, 'f')}};
  ASSERT_TRUE(c.Post("/v1/chat/completions", chat_body(false, false, {first, answer, follow}), "application/json"));
  auto records = f.records(2);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1]["conversation"], records[0]["conversation"]);
  EXPECT_EQ(records[1]["turn"], 2);
  EXPECT_EQ(records[1]["resent_tokens"], 10);
  EXPECT_EQ(records[1]["new_tokens"], 5 + 2);
}

TEST(ProxyServer, RateLimitStatusAndRetryAfterPassThrough) {
  Fixture f("429:1:7");
  httplib::Client c = f.client();
  auto res = c.Post("/v1/chat/completions", chat_body(false, false), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(res->get_header_value("Retry-After"), "7");
  auto records = f.records();
  EXPECT_EQ(records[0]["status"], 429);
  EXPECT_FALSE(records[0]["errors"].empty());
}

TEST(ProxyServer, AKeyEchoedByTheUpstreamNeverReachesTheLog) {
  Fixture f("echo");
  httplib::Client c = f.client();
  auto res = c.Post("/v1/chat/completions", chat_body(false, false), "application/json");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find(kKey), std::string::npos) << "the client gets the upstream's reply unchanged";
  EXPECT_EQ(test::read_file(f.log).find(kKey), std::string::npos);
  EXPECT_NE(test::read_file(f.log).find("[REDACTED]"), std::string::npos);
}

TEST(ProxyServer, UpstreamHeadersReplaceTheClientsAndNeverReachTheLog) {
  ProxyOptions o;
  const std::string real = "sk-upstream-only-KEY-0002";
  o.upstream_headers = {{"authorization", "Bearer " + real}};
  Fixture f("echo", o);
  httplib::Client c = f.client();  // sends Bearer kKey, as an agent with a placeholder would
  auto res = c.Post("/v1/chat/completions", chat_body(false, false), "application/json");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find(real), std::string::npos) << "the upstream got the proxy's key";
  EXPECT_EQ(res->body.find(kKey), std::string::npos) << "and not the client's";
  EXPECT_EQ(test::read_file(f.log).find(real), std::string::npos);
}

TEST(ProxyServer, ACutStreamIsLoggedAndTheProxyKeepsServing) {
  Fixture f("cut:1:3");
  auto [cut, complete] = stream_through(f, "/v1/chat/completions", chat_body(true, true));
  EXPECT_FALSE(complete) << "the client's stream is cut as the upstream's was";
  auto [next, next_complete] = stream_through(f, "/v1/chat/completions", chat_body(true, true));
  EXPECT_TRUE(next_complete);
  auto records = f.records(2);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_FALSE(records[0]["errors"].empty());
  EXPECT_TRUE(records[1]["errors"].empty());
}

TEST(ProxyServer, AnUpstreamSilentMidStreamTimesOutAsLogged) {
  ProxyOptions o;
  o.idle_timeout_seconds = 1;
  Fixture f("gap:1:30", o);
  auto start = std::chrono::steady_clock::now();
  auto [body, complete] = stream_through(f, "/v1/messages",
                                         json{{"model", "c"}, {"max_tokens", 10}, {"stream", true},
                                              {"messages", {{{"role", "user"}, {"content", "hi"}}}}}.dump());
  EXPECT_FALSE(complete);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_NE(body.find("message_start"), std::string::npos) << "the first event passed before the silence";
  auto records = f.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_NE(records[0]["errors"].dump().find("silent"), std::string::npos) << records[0].dump();
}

TEST(ProxyServer, AnUpstreamThatNeverAnswersGives504) {
  ProxyOptions o;
  o.idle_timeout_seconds = 1;
  Fixture f("stall:1:30", o);
  httplib::Client c = f.client();
  auto res = c.Post("/v1/chat/completions", chat_body(false, false), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 504);
  EXPECT_EQ(f.records()[0]["status"], 504);
}

TEST(ProxyServer, AClientThatLeavesMidStreamIsLogged) {
  Fixture f("gap:1:2");
  auto [body, complete] = stream_through(f, "/v1/chat/completions", chat_body(true, true), 10);
  EXPECT_FALSE(complete);
  auto records = f.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_NE(records[0]["errors"].dump().find("disconnected"), std::string::npos) << records[0].dump();
}

TEST(ProxyServer, OversizedBodiesAre413AndBadJsonIsForwardedAndLogged) {
  ProxyOptions o;
  o.max_body_bytes = 1000;
  Fixture f("", o);
  httplib::Client c = f.client();
  auto big = c.Post("/v1/chat/completions", chat_body(false, false, {{{"role", "user"}, {"content", std::string(5000, 'x')}}}),
                    "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  auto bad = c.Post("/v1/chat/completions", "{not json \xFF", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400) << "the upstream's own answer to a bad body";
  auto records = f.records(2);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["status"], 413);
  EXPECT_TRUE(records[1]["request_tokens"].is_null());
  EXPECT_NE(records[1]["errors"].dump().find("not understood"), std::string::npos);
  EXPECT_EQ(f.mock.requests(), 1u) << "the oversized body is not forwarded";
}

TEST(ProxyServer, ManyConcurrentClientsAreAllServedAndLogged) {
  Fixture f;
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 24; ++i)
    clients.emplace_back([&, i] {
      auto [body, complete] = stream_through(f, "/v1/chat/completions", chat_body(i % 2 == 0, true));
      if (complete) ++ok;
      else ADD_FAILURE() << "client " << i << " got: " << body.substr(0, 300);
    });
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(ok.load(), 24);
  auto records = f.records(24);
  EXPECT_EQ(records.size(), 24u);
  for (const json& r : records) EXPECT_TRUE(r["errors"].empty()) << r.dump();
}

TEST(ProxyServer, WireFilterAndBadOptionsAreRefused) {
  ProxyOptions o;
  o.wire = WireFilter::anthropic;
  Fixture f("", o);
  httplib::Client c = f.client();
  auto res = c.Post("/v1/chat/completions", chat_body(false, false), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  retrieval::HeuristicCounter counter;
  ProxyOptions bad;
  bad.upstream = "file:///etc/passwd";
  EXPECT_THROW(ProxyServer(bad, counter), UsageError);
  ProxyOptions no_log;
  no_log.upstream = "http://127.0.0.1:1";
  no_log.log_path = "/nonexistent-dir/log.jsonl";
  EXPECT_THROW(ProxyServer(no_log, counter), InputError);
}

}  // namespace
}  // namespace okfbench::proxy
