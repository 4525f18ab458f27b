#include "mcp/http_server.hpp"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <numeric>
#include <thread>

#include "mcp/jsonrpc.hpp"
#include "tests/mcp/mcp_fixture.hpp"

namespace okfbench::mcp {
namespace {
using namespace test_fixture;

using Clock = std::chrono::steady_clock;

struct Http {
  explicit Http(HttpOptions options = {})
      : bundle(retrieval::Bundle::load(demo())), server({{"demo", &bundle}}, {}), http(server, options),
        port(http.start(0)), client("127.0.0.1", port) {}

  httplib::Result post(const json& body, httplib::Headers headers = {}) {
    return client.Post(kEndpoint, headers, body.dump(), "application/json");
  }
  // A session's id after initialize.
  std::string open_session() {
    auto res = post(request(1, "initialize", initialize_params()));
    EXPECT_EQ(res->status, 200);
    return res->get_header_value("Mcp-Session-Id");
  }
  int ping(const std::string& session) {
    auto res = post(request(9, "ping"), {{"Mcp-Session-Id", session}});
    return res ? res->status : -1;
  }

  retrieval::Bundle bundle;
  Server server;
  HttpServer http;
  int port;
  httplib::Client client;
};


// A raw connection to the server, for what httplib's client would not send.
class Raw {
 public:
  explicit Raw(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    timeval limit{5, 0};  // a send the server stopped reading fails instead of hanging the test
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
  }
  ~Raw() { ::close(fd_); }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;

  bool connected() const { return connected_; }
  bool send(const std::string& data) {
    for (std::size_t sent = 0; sent < data.size();) {
      ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }
  bool readable(int timeout_ms) const {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, timeout_ms) > 0;
  }
  // What the server sent within `timeout` or until it closed.
  std::string receive(std::chrono::milliseconds timeout) {
    std::string out;
    char buffer[4096];
    for (Clock::time_point until = Clock::now() + timeout; Clock::now() < until;) {
      if (!readable(50)) continue;
      ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      out.append(buffer, static_cast<std::size_t>(n));
      if (out.find("\r\n\r\n") != std::string::npos && complete(out)) break;
    }
    return out;
  }
  // True when the server closed the connection within `timeout` (EOF or reset), whatever it sent first.
  bool closed_within(std::chrono::milliseconds timeout) {
    char buffer[4096];
    for (Clock::time_point until = Clock::now() + timeout; Clock::now() < until;) {
      if (!readable(50)) continue;
      if (::recv(fd_, buffer, sizeof(buffer), 0) <= 0) return true;
    }
    return false;
  }

 private:
  static bool complete(const std::string& reply) {
    std::size_t end = reply.find("\r\n\r\n");
    std::size_t at = reply.find("Content-Length: ");
    if (at == std::string::npos || at > end) return true;
    return reply.size() >= end + 4 + std::stoul(reply.substr(at + 16));
  }
  int fd_;
  bool connected_ = false;
};

int status_of(const std::string& reply) { return reply.starts_with("HTTP/1.1 ") ? std::stoi(reply.substr(9, 3)) : -1; }

std::string post_head(int port, const std::string& extra) {
  return "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\nContent-Type: application/json\r\n" +
         extra + "\r\n";
}

// The status of a request whose headers are sent and whose body never is:
// what is refused is refused on the headers alone.
int status_before_body(int port, const std::string& headers) {
  Raw raw(port);
  if (!raw.send(headers)) return -1;
  return status_of(raw.receive(std::chrono::seconds(3)));
}

std::size_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmRSS:")) return std::stoul(line.substr(6)) * 1024;
  return 0;
}

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

TEST(HttpTransport, AFullSessionTableEndsTheLeastRecentlyUsedSession) {
  HttpOptions options;
  options.max_sessions = 3;
  Http h(options);
  std::string a = h.open_session(), b = h.open_session(), c = h.open_session();
  EXPECT_EQ(h.ping(a), 200);  // b is now the least recently used
  std::string d = h.open_session();
  ASSERT_EQ(d.size(), 32u);
  EXPECT_EQ(h.http.sessions(), 3u);
  EXPECT_EQ(h.ping(b), 404);
  EXPECT_EQ(h.client.Delete(kEndpoint, {{"Mcp-Session-Id", b}})->status, 404);
  for (const std::string& id : {a, c, d}) EXPECT_EQ(h.ping(id), 200) << id;
}

// 256 clients that leave without DELETE used to lock every later client out with 503.
TEST(HttpTransport, ClientsThatNeverEndTheirSessionsDoNotLockOthersOut) {
  Http h;
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < kMaxSessions + 8; ++i) ids.push_back(h.open_session());
  EXPECT_EQ(h.http.sessions(), kMaxSessions);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(h.ping(ids[i]), 404) << i;
  EXPECT_EQ(h.ping(ids.back()), 200);
}

TEST(HttpTransport, IdleSessionsExpireAndTheirRequestsGet404) {
  HttpOptions options;
  options.session_idle = std::chrono::seconds(1);
  Http h(options);
  std::string idle = h.open_session(), busy = h.open_session();
  for (int i = 0; i < 8; ++i) {  // 1.6 s in all, never 1 s without a request
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(h.ping(busy), 200) << i;
  }
  EXPECT_EQ(h.ping(idle), 404);
  EXPECT_EQ(h.http.sessions(), 1u);
}

TEST(HttpTransport, ChunkedBodyOverTheLimitIsRefusedBeforeItIsAllSent) {
  Http h;
  std::size_t before = resident_bytes();
  Raw raw(h.port);
  ASSERT_TRUE(raw.send(post_head(h.port, "Transfer-Encoding: chunked\r\n")));
  const std::string chunk = "10000\r\n" + std::string(0x10000, ' ') + "\r\n";
  constexpr std::size_t kWhole = std::size_t{1} << 30;  // the body the client means to send: 1 GiB
  std::size_t sent = 0;
  while (sent < kWhole && !raw.readable(0) && raw.send(chunk)) sent += 0x10000;
  std::string reply = raw.receive(std::chrono::seconds(5));
  EXPECT_EQ(status_of(reply), 413) << reply.substr(0, 300);
  EXPECT_LT(sent, 8 * jsonrpc::kMaxMessageBytes);  // the reply came long before the whole body
  EXPECT_LT(resident_bytes(), before + (std::size_t{64} << 20));
  EXPECT_EQ(h.open_session().size(), 32u);  // and the server goes on serving
}

TEST(HttpTransport, BodyFramingIsJudgedOnTheHeaders) {
  Http h;
  EXPECT_EQ(status_before_body(h.port, post_head(h.port, "Content-Length: 1073741824\r\n")), 413);
  EXPECT_EQ(status_before_body(h.port, post_head(h.port, "Content-Length: 99999999999999999999999999\r\n")), 413);
  EXPECT_EQ(status_before_body(h.port, post_head(h.port, "Content-Length: 12x\r\n")), 400);
  EXPECT_EQ(status_before_body(h.port, post_head(h.port, "Content-Length: 10\r\nTransfer-Encoding: chunked\r\n")), 400);
  EXPECT_EQ(status_before_body(h.port, post_head(h.port, "Transfer-Encoding: gzip\r\n")), 400);
  EXPECT_EQ(status_before_body(h.port, post_head(h.port, "")), 411);
}

TEST(HttpTransport, HostOriginAndSessionAreCheckedBeforeTheBodyIsRead) {
  Http h;
  std::string local = "127.0.0.1:" + std::to_string(h.port);
  auto head = [](const std::string& host, const std::string& extra) {
    return "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n" + extra +
           "Transfer-Encoding: chunked\r\n\r\n";
  };
  EXPECT_EQ(status_before_body(h.port, head("evil.example", "")), 403);
  EXPECT_EQ(status_before_body(h.port, head(local, "Origin: http://evil.example\r\n")), 403);
  EXPECT_EQ(status_before_body(h.port, head(local, "Mcp-Session-Id: 0123456789abcdef0123456789abcdef\r\n")), 404);
  EXPECT_EQ(status_before_body(h.port, head(local, "MCP-Protocol-Version: 1999-01-01\r\n")), 400);
  EXPECT_EQ(status_before_body(h.port, "PUT /mcp HTTP/1.1\r\nHost: " + local + "\r\nTransfer-Encoding: chunked\r\n\r\n"), 405);
  EXPECT_EQ(status_before_body(h.port, "GET /mcp HTTP/1.1\r\nHost: " + local + "\r\nTransfer-Encoding: chunked\r\n\r\n"), 405);
  EXPECT_EQ(status_before_body(h.port, "POST /other HTTP/1.1\r\nHost: " + local + "\r\nTransfer-Encoding: chunked\r\n\r\n"), 404);
}

TEST(HttpTransport, ForeignHostsOriginsAndContentTypesAreRefused) {
  Http h;
  json init = request(1, "initialize", initialize_params());
  std::string port = std::to_string(h.port);
  EXPECT_EQ(h.post(init, {{"Host", "evil.example"}})->status, 403);  // DNS rebinding
  EXPECT_EQ(h.post(init, {{"Host", "evil.example:" + port}})->status, 403);
  EXPECT_EQ(h.post(init, {{"Host", "127.0.0.1:" + std::to_string(h.port + 1)}})->status, 403);
  EXPECT_EQ(h.post(init, {{"Origin", "http://localhost:80@evil.example"}})->status, 403);
  EXPECT_EQ(h.post(init, {{"Origin", "null"}})->status, 403);
  EXPECT_EQ(h.client.Post(kEndpoint, init.dump(), "text/plain; x=application/json")->status, 415);
  EXPECT_EQ(h.post(init, {{"Accept", "text/html; x=application/json"}})->status, 406);
  std::string body = init.dump();
  auto raw_status = [&](const std::string& headers) {
    Raw raw(h.port);
    raw.send("POST /mcp HTTP/1.1\r\n" + headers + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    return status_of(raw.receive(std::chrono::seconds(3)));
  };
  std::string host = "Host: 127.0.0.1:" + port + "\r\n", type = "Content-Type: application/json\r\n";
  EXPECT_EQ(raw_status(host + type + "Origin: \r\n"), 403);  // empty: refused, not taken as absent
  EXPECT_EQ(raw_status(host), 415);  // no Content-Type: a page may send that without a preflight
  EXPECT_EQ(raw_status(type), 400);  // no Host
  EXPECT_EQ(raw_status(host + "Host: evil.example\r\n" + type), 400);
  EXPECT_EQ(h.http.sessions(), 0u);
  EXPECT_EQ(h.post(init, {{"Host", "localhost"}})->status, 200);
  EXPECT_EQ(h.post(init, {{"Host", "localhost:" + port}, {"Origin", "https://[::1]:3000"}})->status, 200);
  EXPECT_EQ(raw_status(host + "Content-Type: application/json; charset=utf-8\r\n"), 200);
  EXPECT_EQ(h.http.sessions(), 3u);
}

// Slowloris: clients that send a byte at a time used to hold every worker.
TEST(HttpTransport, TricklingClientsDoNotStallOthers) {
  Http h;
  constexpr int kTricklers = 24;
  std::vector<std::unique_ptr<Raw>> slow;
  for (int i = 0; i < kTricklers; ++i) slow.push_back(std::make_unique<Raw>(h.port));
  std::atomic<bool> done{false};
  std::string head = post_head(h.port, "Content-Length: 1000\r\n");
  std::thread trickle([&] {
    for (std::size_t i = 0; !done; ++i) {
      for (auto& raw : slow) raw->send(std::string(1, head[i % head.size()]));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // every trickler is being served by now
  Clock::time_point start = Clock::now();
  std::string id = h.open_session();
  EXPECT_EQ(h.ping(id), 200);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  done = true;
  trickle.join();
}

TEST(HttpTransport, ARequestMustArriveWithinItsDeadlineFromItsFirstByte) {
  HttpOptions options;
  options.request_deadline = std::chrono::seconds(1);
  Http h(options);
  std::string headers = post_head(h.port, "Content-Length: 100\r\n");
  for (const std::string& text : {headers, headers + std::string(100, ' ')}) {  // slow headers, then a slow body
    Raw raw(h.port);
    std::size_t fast = text == headers ? 0 : headers.size();
    ASSERT_TRUE(raw.send(text.substr(0, fast)));
    Clock::time_point start = Clock::now();
    bool closed = false;
    for (std::size_t i = fast; !closed && i < text.size() && Clock::now() - start < std::chrono::seconds(5); ++i) {
      raw.send(text.substr(i, 1));  // a byte every 100 ms: each would restart a per-read timeout
      closed = raw.closed_within(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(closed);
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  }
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
