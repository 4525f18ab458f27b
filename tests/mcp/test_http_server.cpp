#include "mcp/http_server.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

#include <map>
#include <numeric>
#include <thread>

#include "mcp/jsonrpc.hpp"
#include "tests/mcp/mcp_fixture.hpp"

namespace okfbench::mcp {
namespace {
using namespace test_fixture;

struct Http {
  Http() : bundle(retrieval::Bundle::load(demo())), server({{"demo", &bundle}}, {}), http(server), port(http.start(0)),
           client("127.0.0.1", port) {}

  httplib::Result post(const json& body, httplib::Headers headers = {}) {
    return client.Post(kEndpoint, headers, body.dump(), "application/json");
  }
  // A session's id after initialize.
  std::string open_session() {
    auto res = post(request(1, "initialize", initialize_params()));
    EXPECT_EQ(res->status, 200);
    return res->get_header_value("Mcp-Session-Id");
  }

  retrieval::Bundle bundle;
  Server server;
  HttpServer http;
  int port;
  httplib::Client client;
};

TEST(HttpTransport, BindsLoopbackOnAFreePortAndServesASession) {
  Http h;
  EXPECT_GT(h.port, 0);
  EXPECT_EQ(h.http.url(), "http://127.0.0.1:" + std::to_string(h.port) + "/mcp");
  std::string id = h.open_session();
  ASSERT_EQ(id.size(), 32u);
  EXPECT_EQ(h.http.sessions(), 1u);
  httplib::Headers session{{"Mcp-Session-Id", id}, {"MCP-Protocol-Version", "2025-06-18"}};
  auto note = h.post({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, session);
  EXPECT_EQ(note->status, 202);
  EXPECT_TRUE(note->body.empty());
  auto call = h.post(request(2, "tools/call", {{"name", "search"}, {"arguments", {{"query", "slow query"}}}}), session);
  ASSERT_EQ(call->status, 200);
  EXPECT_EQ(json::parse(call->body)["result"]["isError"], false);
  EXPECT_EQ(h.client.Delete(kEndpoint, session)->status, 200);
  EXPECT_EQ(h.post(request(3, "ping"), session)->status, 404);  // ended
  EXPECT_EQ(h.client.Delete(kEndpoint, session)->status, 404);
}

TEST(HttpTransport, RequestsOutsideASessionAreRefused) {
  Http h;
  auto none = h.post(request(1, "tools/list"));
  EXPECT_EQ(none->status, 400);
  EXPECT_EQ(error_code(json::parse(none->body)), jsonrpc::code::invalid_request);
  EXPECT_EQ(h.post(request(1, "tools/list"), {{"Mcp-Session-Id", "0123456789abcdef0123456789abcdef"}})->status, 404);
  EXPECT_EQ(h.client.Get(kEndpoint)->status, 405);
  EXPECT_EQ(h.client.Delete(kEndpoint)->status, 400);
  EXPECT_EQ(h.http.sessions(), 0u);
}

TEST(HttpTransport, BodiesThatAreNotMessagesGetTheJsonRpcErrorWith400) {
  Http h;
  auto garbage = h.client.Post(kEndpoint, "this is not json", "application/json");
  ASSERT_EQ(garbage->status, 400);
  EXPECT_EQ(error_code(json::parse(garbage->body)), jsonrpc::code::parse_error);
  std::string id = h.open_session();
  auto in_session = h.client.Post(kEndpoint, {{"Mcp-Session-Id", id}}, "{\"jsonrpc\":", "application/json");
  EXPECT_EQ(in_session->status, 400);
  EXPECT_EQ(error_code(json::parse(in_session->body)), jsonrpc::code::parse_error);
  auto wrong = h.post({{"jsonrpc", "1.0"}, {"id", 5}, {"method", "ping"}}, {{"Mcp-Session-Id", id}});
  EXPECT_EQ(wrong->status, 200);  // an answerable request: the error is the reply
  EXPECT_EQ(json::parse(wrong->body)["id"], 5);
  auto batch = h.client.Post(kEndpoint, {{"Mcp-Session-Id", id}}, "[]", "application/json");
  EXPECT_EQ(batch->status, 400);
}

TEST(HttpTransport, OversizedBodiesForeignOriginsAndUnknownVersionsAreRefused) {
  Http h;
  std::string big(jsonrpc::kMaxMessageBytes + 1, ' ');
  auto res = h.client.Post(kEndpoint, big, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  auto init = request(1, "initialize", initialize_params());
  EXPECT_EQ(h.post(init, {{"Origin", "http://evil.example"}})->status, 403);
  EXPECT_EQ(h.post(init, {{"Origin", "http://localhost.evil.example:80"}})->status, 403);
  EXPECT_EQ(h.post(init, {{"MCP-Protocol-Version", "1999-01-01"}})->status, 400);
  EXPECT_EQ(h.client.Post(kEndpoint, init.dump(), "text/plain")->status, 415);
  EXPECT_EQ(h.post(init, {{"Accept", "text/html"}})->status, 406);
  EXPECT_EQ(h.http.sessions(), 0u);
  EXPECT_EQ(h.post(init, {{"Origin", "http://localhost:3000"}})->status, 200);
  EXPECT_EQ(h.post(init, {{"Origin", "http://127.0.0.1"}, {"Accept", "application/json, text/event-stream"}})->status, 200);
  EXPECT_EQ(h.http.sessions(), 2u);
}

TEST(HttpTransport, StopsByItselfAndTheSecondBindOfAPortFails) {
  Http h;
  retrieval::Bundle bundle = retrieval::Bundle::load(demo());
  Server other({{"demo", &bundle}}, {});
  HttpServer second(other);
  EXPECT_THROW(second.start(h.port), InputError);
  h.http.stop();
  EXPECT_FALSE(h.client.Get(kEndpoint));  // nothing listens any more
}

TEST(HttpTransport, SessionsAreCappedAndAnEndedOneFreesItsPlace) {
  Http h;
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < kMaxSessions; ++i) ids.push_back(h.open_session());
  auto full = h.post(request(1, "initialize", initialize_params()));
  ASSERT_TRUE(full);
  EXPECT_EQ(full->status, 503);
  EXPECT_EQ(h.http.sessions(), kMaxSessions);
  EXPECT_EQ(h.client.Delete(kEndpoint, {{"Mcp-Session-Id", ids.front()}})->status, 200);
  EXPECT_EQ(h.open_session().size(), 32u);
}

TEST(HttpTransport, ConcurrentSessionsAreEachAnsweredAndAccounted) {
  retrieval::Bundle bundle = retrieval::Bundle::load(demo());
  std::filesystem::path log_path = test::fresh_dir("mcp-http-log") / "session.jsonl";
  SessionLog log(log_path);
  Server server({{"demo", &bundle}}, {}, &log);
  HttpServer http(server);
  int port = http.start(0);
  constexpr int kClients = 4, kCalls = 10;
  std::vector<int> answered(kClients, 0);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c)
    clients.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", port);
      auto init = client.Post(kEndpoint, request(0, "initialize", initialize_params()).dump(), "application/json");
      if (!init || init->status != 200) return;
      httplib::Headers session{{"Mcp-Session-Id", init->get_header_value("Mcp-Session-Id")}};
      for (int i = 1; i <= kCalls; ++i) {
        json call = request(i, "tools/call", {{"name", "search"}, {"arguments", {{"query", "query " + std::to_string(c)}}}});
        auto res = client.Post(kEndpoint, session, call.dump(), "application/json");
        if (res && res->status == 200 && json::parse(res->body)["id"] == i) ++answered[c];
      }
    });
  for (std::thread& t : clients) t.join();
  http.stop();
  for (int c = 0; c < kClients; ++c) EXPECT_EQ(answered[c], kCalls) << "client " << c;
  std::vector<reports::SessionEvent> events = reports::read_session_log(log_path);
  std::map<std::string, std::vector<std::int64_t>> seqs;  // each session's calls numbered 1..kCalls, none lost
  for (const reports::SessionEvent& e : events)
    if (e.event == "call") seqs[e.session].push_back(e.seq);
  ASSERT_EQ(seqs.size(), static_cast<std::size_t>(kClients));
  for (const auto& [session, numbers] : seqs) {
    std::vector<std::int64_t> expected(kCalls);
    std::iota(expected.begin(), expected.end(), 1);
    EXPECT_EQ(numbers, expected) << session;
  }
}

}  // namespace
}  // namespace okfbench::mcp
