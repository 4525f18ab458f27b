#pragma once
// A PacingClock whose time only moves when someone sleeps or advances it,
// recording every sleep: pacing tests check the spacing without waiting.
#include <chrono>
#include <mutex>
#include <vector>

#include "engine/pacer.hpp"

namespace okfbench::engine {

class FakeClock : public PacingClock {
 public:
  time_point now() override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  void sleep_until(time_point when) override {
    std::lock_guard lock(mutex_);
    sleeps.push_back(when);
    if (when > now_) now_ = when;
  }
  void advance(std::chrono::steady_clock::duration by) {
    std::lock_guard lock(mutex_);
    now_ += by;
  }
  // Each sleep's end, from the start of the clock, in milliseconds.
  std::vector<std::chrono::milliseconds> offsets() {
    std::lock_guard lock(mutex_);
    std::vector<std::chrono::milliseconds> out;
    for (const auto& t : sleeps) out.push_back(std::chrono::round<std::chrono::milliseconds>(t - start_));
    return out;
  }
  std::vector<time_point> sleeps;

 private:
  std::mutex mutex_;
  const time_point start_ = std::chrono::steady_clock::now();
  time_point now_ = start_;
};

}  // namespace okfbench::engine
