#include "engine/pacer.hpp"

#include <algorithm>
#include <thread>

namespace okfbench::engine {
namespace {

// The longest wait between two starts: 60 / limits::min_requests_per_minute.
// The spec refuses smaller positive rates; this bound also holds for a Pacer
// built from other numbers (a 1e-300 rate, a request of 10^12 tokens), so a
// wait is always finite, computed in doubles and never overflows the clock.
constexpr double kMaxGapSeconds = 6000;

class SystemPacingClock : public PacingClock {
 public:
  time_point now() override { return std::chrono::steady_clock::now(); }
  void sleep_until(time_point when) override { std::this_thread::sleep_until(when); }
};

}  // namespace

PacingClock& system_pacing_clock() {
  static SystemPacingClock clock;
  return clock;
}

Pacer::Pacer(double requests_per_minute, double tokens_per_minute, PacingClock& clock)
    : requests_per_minute_(requests_per_minute), tokens_per_minute_(tokens_per_minute), clock_(clock) {}

void Pacer::wait(std::int64_t tokens) {
  if (requests_per_minute_ <= 0 && tokens_per_minute_ <= 0) return;
  double gap = 0;
  if (requests_per_minute_ > 0) gap = 60.0 / requests_per_minute_;
  if (tokens_per_minute_ > 0) gap = std::max(gap, 60.0 * static_cast<double>(std::max<std::int64_t>(tokens, 0)) / tokens_per_minute_);
  if (!(gap <= kMaxGapSeconds)) gap = kMaxGapSeconds;  // also NaN and infinity
  PacingClock::time_point slot;
  {
    std::lock_guard lock(mutex_);
    slot = std::max(next_, clock_.now());
    next_ = slot + std::chrono::duration_cast<PacingClock::time_point::duration>(std::chrono::duration<double>(gap));
  }
  if (slot > clock_.now()) clock_.sleep_until(slot);
}

std::int64_t estimate_request_tokens(const agents::ChatRequest& request, const retrieval::TokenCounter& counter) {
  std::int64_t tokens = 0;
  auto add = [&](const std::string& text) { tokens += static_cast<std::int64_t>(counter.count(text)); };
  for (const auto& message : request.messages) {
    add(message.content);
    for (const auto& call : message.tool_calls) {
      add(call.name);
      add(call.arguments);
    }
  }
  for (const auto& tool : request.tools) {
    add(tool.name);
    add(tool.description);
    add(tool.parameters);
  }
  return tokens;
}

}  // namespace okfbench::engine
