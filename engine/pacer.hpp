#pragma once
// Request pacing for a run: requests_per_minute and tokens_per_minute over
// all workers.
//
// Every request that goes to a provider (each HTTP attempt, retries
// included) and every sim call waits in Pacer::wait before it starts. Starts
// are spaced evenly: after a request estimated at T input tokens, the next
// one may start no sooner than
//     max(60 / requests_per_minute, 60 * T / tokens_per_minute) seconds later,
// so no minute ever holds more than either limit allows (plus the one request
// that opens it). A limit of 0 is no limit. T is counted before the request is
// sent (estimate_request_tokens), since the provider's count only comes back
// with the reply.
#include <chrono>
#include <cstdint>
#include <mutex>

#include "agents/wire.hpp"
#include "retrieval/token_counter.hpp"

namespace okfbench::engine {

// Where the pacer reads the time and waits; tests pass a fake one.
class PacingClock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  virtual ~PacingClock() = default;
  virtual time_point now() = 0;
  virtual void sleep_until(time_point when) = 0;
};

// std::chrono::steady_clock and std::this_thread::sleep_until.
PacingClock& system_pacing_clock();

class Pacer {
 public:
  explicit Pacer(double requests_per_minute = 0, double tokens_per_minute = 0, PacingClock& clock = system_pacing_clock());
  // Waits until a request of about `tokens` input tokens may start and books
  // its share of both limits. Thread-safe.
  void wait(std::int64_t tokens);
  bool limits_tokens() const { return tokens_per_minute_ > 0; }

 private:
  double requests_per_minute_;
  double tokens_per_minute_;
  PacingClock& clock_;
  std::mutex mutex_;
  PacingClock::time_point next_{};
};

// The input tokens a request will cost, counted before it is sent: every
// message's text and tool-call arguments and every tool definition. Providers
// add a few tokens per message of framing that this leaves out.
std::int64_t estimate_request_tokens(const agents::ChatRequest& request, const retrieval::TokenCounter& counter);

}  // namespace okfbench::engine
