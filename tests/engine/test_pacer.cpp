#include "engine/pacer.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <thread>
#include <vector>

#include "tests/engine/fake_clock.hpp"

namespace okfbench::engine {
namespace {

using std::chrono::milliseconds;

TEST(Pacer, SpacesRequestsByTheSlowerOfBothLimits) {
  FakeClock clock;
  Pacer pacer(120, 60000, clock);  // one request per 0.5 s; 1,000 tokens per second
  pacer.wait(1000);  // opens the schedule: no wait
  pacer.wait(500);   // waits for the 1,000 tokens before it: 1 s
  pacer.wait(10);    // 500 tokens: 0.5 s, as the request limit
  pacer.wait(0);     // 10 tokens would be 0.01 s; the request limit says 0.5 s
  EXPECT_EQ(clock.offsets(), (std::vector<milliseconds>{milliseconds(1000), milliseconds(1500), milliseconds(2000)}));
}

// A rate the spec would refuse (1e-300, a huge request at a low token rate)
// still gives a finite wait, at most 6000 s.
TEST(NumbersAndWrites, ThePacersWaitIsBoundedWhateverTheLimits) {
  FakeClock clock;
  Pacer pacer(1e-300, 1e-300, clock);
  pacer.wait(std::numeric_limits<std::int64_t>::max());
  pacer.wait(std::numeric_limits<std::int64_t>::max());
  pacer.wait(0);
  EXPECT_EQ(clock.offsets(), (std::vector<milliseconds>{milliseconds(6'000'000), milliseconds(12'000'000)}));
}

TEST(Pacer, WithoutLimitsNothingWaits) {
  FakeClock clock;
  Pacer pacer(0, 0, clock);
  for (int i = 0; i < 5; ++i) pacer.wait(1'000'000);
  EXPECT_TRUE(clock.sleeps.empty());
}

TEST(Pacer, TimeThatPassedCountsTowardsTheGap) {
  FakeClock clock;
  Pacer pacer(60, 0, clock);
  pacer.wait(0);
  clock.advance(milliseconds(2500));  // the caller was busy for longer than the gap
  pacer.wait(0);
  EXPECT_TRUE(clock.sleeps.empty());
  pacer.wait(0);
  EXPECT_EQ(clock.offsets(), (std::vector<milliseconds>{milliseconds(3500)}));
}

TEST(Pacer, ConcurrentCallersGetDistinctSlots) {
  Pacer pacer(6000, 0);  // 10 ms apart, on the real clock
  const auto start = std::chrono::steady_clock::now();
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 5; ++i) pacer.wait(0);
      });
    }
  }
  // 20 requests 10 ms apart: the last one starts 190 ms after the first.
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(190));
}

TEST(Pacer, EstimatesEveryTextARequestSends) {
  class Bytes : public retrieval::TokenCounter {
   public:
    std::size_t count(std::string_view text) const override { return text.size(); }
    std::string name() const override { return "bytes"; }
  } counter;
  agents::ChatRequest request;
  request.messages.push_back({agents::Role::system, "12345", {}, {}, {}});
  request.messages.push_back({agents::Role::assistant, "", {{"id", "search", R"({"q":1})"}}, {}, {}});
  request.tools.push_back({"open", "desc", "{}"});
  // 5 + "search" 6 + 7 argument bytes + "open" 4 + "desc" 4 + "{}" 2
  EXPECT_EQ(estimate_request_tokens(request, counter), 28);
}

}  // namespace
}  // namespace okfbench::engine
