// The HTTP layer against misbehaving servers over real loopback sockets:
// deadlines, the reply size bound, transient/permanent classification and
// what error messages may carry.
#include "agents/http.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "agents/mock_server.hpp"
#include "core/error.hpp"
#include "tests/agents/fake_kb.hpp"

namespace okfbench::agents {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Server {
  explicit Server(std::string_view faults) : server(SimOptions{}, counter, parse_faults(faults)) { server.start(); }
  std::string url() const { return server.base_url() + "/v1/chat/completions"; }
  ByteCounter counter;
  MockServer server;
};

constexpr const char* kBody = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";

RetryPolicy quick() {
  RetryPolicy p;
  p.max_attempts = 1;
  p.timeout_seconds = 5;
  p.sleep = [](double) {};
  return p;
}

// Runs post_json, expecting it to throw; returns the error.
CallError failure(const std::string& url, const RetryPolicy& policy, const Headers& headers = {}) {
  try {
    post_json(url, headers, kBody, policy, "test endpoint");
  } catch (const CallError& e) {
    return e;
  }
  ADD_FAILURE() << "post_json succeeded";
  return CallError(Failure::permanent, "");
}

TEST(Http, StatusClasses) {
  for (long status : {408L, 429L, 500L, 502L, 503L, 529L}) EXPECT_TRUE(transient_status(status)) << status;
  for (long status : {400L, 401L, 403L, 404L, 422L}) EXPECT_FALSE(transient_status(status)) << status;
}

TEST(Http, AServerThatNeverAnswersHitsTheRequestTimeout) {
  Server s("stall");
  RetryPolicy p = quick();
  p.timeout_seconds = 0.5;
  auto start = Clock::now();
  CallError e = failure(s.url(), p);
  EXPECT_LT(seconds_since(start), 3.0);
  EXPECT_TRUE(e.transient());
  EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
}

TEST(Http, ATricklingServerHitsTheLowSpeedLimit) {
  Server s("trickle:1:0.25");  // 4 bytes a second
  RetryPolicy p = quick();
  p.timeout_seconds = 60;
  p.low_speed_bytes_per_second = 100;
  p.low_speed_seconds = 1;
  auto start = Clock::now();
  CallError e = failure(s.url(), p);
  EXPECT_LT(seconds_since(start), 6.0);
  EXPECT_TRUE(e.transient());
  EXPECT_NE(std::string(e.what()).find("too slow"), std::string::npos) << e.what();
}

TEST(Http, TheOverallDeadlineEndsRetriesEarly) {
  Server s("stall:100");
  RetryPolicy p = quick();
  p.max_attempts = 100;
  p.timeout_seconds = 0.3;
  p.base_delay_seconds = 0.05;
  p.deadline_seconds = 1.0;
  std::vector<double> waits;
  p.sleep = [&](double seconds) { waits.push_back(seconds); };
  auto start = Clock::now();
  CallError e = failure(s.url(), p);
  EXPECT_LT(seconds_since(start), 2.5);
  EXPECT_TRUE(e.transient());
  EXPECT_NE(std::string(e.what()).find("stopped by the deadline of 1 s"), std::string::npos) << e.what();
  EXPECT_LE(s.server.requests(), 4u);  // 0.3 s each plus waits: the fourth cannot start before 1 s
  EXPECT_EQ(waits.size() + 1, s.server.requests());
}

TEST(Http, TheDeadlineCapsTheLastAttempt) {
  Server s("stall");
  RetryPolicy p = quick();
  p.timeout_seconds = 30;
  p.deadline_seconds = 0.5;
  auto start = Clock::now();
  CallError e = failure(s.url(), p);
  EXPECT_LT(seconds_since(start), 2.5);
  EXPECT_TRUE(e.transient());
}

// A listening socket whose accept queue is full drops further SYNs, so a
// connect to it hangs until the connect timeout.
TEST(Http, ConnectTimeout) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 0), 0);
  socklen_t length = sizeof address;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {  // fill the queue; later connects stay pending
    int c = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ::connect(c, reinterpret_cast<sockaddr*>(&address), sizeof address);
    fillers.push_back(c);
  }
  RetryPolicy p = quick();
  p.connect_timeout_seconds = 0.4;
  auto start = Clock::now();
  CallError e = failure(fmt::format("http://127.0.0.1:{}/v1/chat/completions", ntohs(address.sin_port)), p);
  double took = seconds_since(start);
  for (int c : fillers) ::close(c);
  ::close(listener);
  EXPECT_LT(took, 3.0);
  EXPECT_GE(took, 0.3);
  EXPECT_TRUE(e.transient());
  // libcurl words a connect timeout by which of its checks fires first:
  // "Failed to connect to ... after 400 ms: Timeout was reached" or
  // "Connection timeout after 400 ms" (both seen on this suite's machines).
  const std::string what = e.what();
  const bool connect_failed = what.find("Failed to connect") != std::string::npos &&
                              what.find("Timeout was reached") != std::string::npos;
  const bool connect_timed_out = what.find("Connection timeout after 4") != std::string::npos;
  EXPECT_TRUE(connect_failed || connect_timed_out) << what;
}

TEST(Http, PermanentFailuresAreNotRetriedTransientOnesAre) {
  {
    Server s("401:5");
    RetryPolicy p = quick();
    p.max_attempts = 5;
    CallError e = failure(s.url(), p);
    EXPECT_FALSE(e.transient());
    EXPECT_EQ(s.server.requests(), 1u);
    EXPECT_NE(std::string(e.what()).find("not retried"), std::string::npos) << e.what();
  }
  for (const char* fault : {"500:5", "429:5:0", "drop:5", "truncated:5"}) {
    Server s(fault);
    RetryPolicy p = quick();
    p.max_attempts = 3;
    CallError e = failure(s.url(), p);
    EXPECT_TRUE(e.transient()) << fault;
    EXPECT_EQ(s.server.requests(), 3u) << fault;
    EXPECT_NE(std::string(e.what()).find("failed after 3 attempt(s)"), std::string::npos) << e.what();
  }
  CallError bad_url = failure("notascheme://x", quick());
  EXPECT_FALSE(bad_url.transient()) << bad_url.what();
}

TEST(Http, AnOversizedBodyFailsAtTheLimitWithoutRetrying) {
  Server s("huge:3:64");  // 64 MiB bodies
  RetryPolicy p = quick();
  p.max_attempts = 3;
  p.max_response_bytes = 1 << 20;
  CallError e = failure(s.url(), p);
  EXPECT_FALSE(e.transient());
  EXPECT_EQ(s.server.requests(), 1u);
  EXPECT_NE(std::string(e.what()).find("larger than the limit of 1048576 bytes"), std::string::npos) << e.what();
  EXPECT_LT(s.server.body_bytes_sent(), std::size_t{16} << 20);  // the client hung up early
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// A 2 GiB body against the default 32 MiB limit, in a child process so the
// peak resident size is this request's alone.
TEST(Http, ATwoGigabyteBodyKeepsMemoryBounded) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Server s("huge:1:2048");
        long before = peak_rss_kib();
        CallError e = failure(s.url(), quick());
        long grown_mib = (peak_rss_kib() - before) / 1024;
        std::fprintf(stderr, "peak RSS grew by %ld MiB; the server sent %zu MiB\n", grown_mib,
                     s.server.body_bytes_sent() >> 20);
        bool ok = !e.transient() && std::string(e.what()).find("larger than the limit") != std::string::npos &&
                  grown_mib < 100 && s.server.body_bytes_sent() < (std::size_t{256} << 20);
        std::_Exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "peak RSS grew by");
}

TEST(Http, ErrorsCarryNoHeaderValue) {
  const std::string key = "sk-echoed-SECRET-55aa";
  for (const char* fault : {"echo:1:401", "echo:3:500"}) {
    Server s(fault);
    RetryPolicy p = quick();
    p.max_attempts = 3;
    CallError e = failure(s.url(), p, {{"Authorization", "Bearer " + key}, {"X-Gateway-Token", "gw-token-77"}});
    std::string message = e.what();
    EXPECT_EQ(message.find(key), std::string::npos) << message;
    EXPECT_EQ(message.find("SECRET"), std::string::npos) << message;
    EXPECT_NE(message.find("Incorrect API key provided: [REDACTED]"), std::string::npos) << message;
  }
}

TEST(Http, HeadersWithControlCharactersAreRefusedBeforeSending) {
  Server s("");
  EXPECT_THROW(post_json(s.url(), {{"Authorization", "Bearer a\r\nX-Injected: y"}}, kBody, quick(), "t"), UsageError);
  EXPECT_THROW(post_json(s.url(), {{"Bad Name", "v"}}, kBody, quick(), "t"), UsageError);
  EXPECT_EQ(s.server.requests(), 0u);
}

TEST(Http, BackoffIsExponentialWithJitterCappedAndRetryAfterWins) {
  RetryPolicy p;
  p.base_delay_seconds = 1.0;
  p.max_delay_seconds = 10.0;
  EXPECT_DOUBLE_EQ(backoff_delay(p, 1, std::nullopt, 0.0), 0.5);
  EXPECT_DOUBLE_EQ(backoff_delay(p, 3, std::nullopt, 0.5), 3.0);   // 4 x 0.75
  EXPECT_DOUBLE_EQ(backoff_delay(p, 10, std::nullopt, 0.0), 5.0);  // capped at 10 x 0.5
  EXPECT_DOUBLE_EQ(backoff_delay(p, 1, 7.0, 0.9), 7.0);
  EXPECT_DOUBLE_EQ(backoff_delay(p, 1, 70.0, 0.9), 10.0);
  EXPECT_EQ(parse_retry_after("12"), 12.0);
  EXPECT_EQ(parse_retry_after("soon"), std::nullopt);
  EXPECT_EQ(parse_retry_after("99999999999999999999999999999999999999999999"), 1e9);  // no overflow
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0);  // in the past
}

TEST(Http, EveryAttemptRetriesIncludedPassesTheHookFirst) {
  Server s("500:2");
  RetryPolicy p = quick();
  p.max_attempts = 3;
  std::vector<std::size_t> answered;  // requests the server had answered when each attempt was about to start
  p.before_attempt = [&] { answered.push_back(s.server.requests()); };
  const HttpResult result = post_json(s.url(), {}, kBody, p, "test endpoint");
  EXPECT_EQ(result.attempts, 3);
  EXPECT_EQ(answered, (std::vector<std::size_t>{0, 1, 2}));
}

TEST(Http, DeadlineAtCutsAnAttemptThatHangs) {
  Server s("delay:1:3");  // the first request is answered after 3 s
  RetryPolicy p = quick();
  p.timeout_seconds = 60;
  const auto start = Clock::now();
  p.deadline_at = start + std::chrono::milliseconds(400);
  CallError e = failure(s.url(), p);
  EXPECT_TRUE(e.transient());
  EXPECT_LT(seconds_since(start), 2.0);  // neither the 3 s the server takes nor 60 s of timeout
}

TEST(Http, NoRetryWaitsPastDeadlineAt) {
  Server s("500:5");
  RetryPolicy p = quick();
  p.max_attempts = 5;
  p.base_delay_seconds = 30;  // the first backoff (15..30 s) would end after the deadline
  std::vector<double> sleeps;
  p.sleep = [&](double seconds) { sleeps.push_back(seconds); };
  p.deadline_at = Clock::now() + std::chrono::seconds(5);
  CallError e = failure(s.url(), p);
  EXPECT_TRUE(e.transient());
  EXPECT_NE(std::string(e.what()).find("the trial deadline passed after 1 attempt(s); last error: HTTP 500"), std::string::npos)
      << e.what();
  EXPECT_TRUE(sleeps.empty());
  EXPECT_EQ(s.server.requests(), 1u);
  p.deadline_at = Clock::now() - std::chrono::seconds(1);  // already past: nothing is sent
  EXPECT_TRUE(failure(s.url(), p).transient());
  EXPECT_EQ(s.server.requests(), 1u);
}

}  // namespace
}  // namespace okfbench::agents
