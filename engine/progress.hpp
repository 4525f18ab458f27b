#pragma once
// The run's progress on stderr: a bar on a terminal (or with Progress::bar),
// else a line at most every two seconds and the last one; nothing when quiet.
#include <cstddef>
#include <cstdint>

#include "engine/run_common.hpp"
#include "engine/runner.hpp"

namespace okfbench::engine {

class ProgressReport {
 public:
  ProgressReport(Progress style, std::size_t total);
  // `done` of the total trials have finished, having sent `tokens` input tokens.
  void update(std::size_t done, std::int64_t tokens);

 private:
  std::size_t total_;
  Clock::time_point start_;
  bool bar_ = false;
  bool quiet_ = false;
  double last_line_ = -10.0;
};

}  // namespace okfbench::engine
