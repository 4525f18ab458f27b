#include "engine/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace okfbench::engine {

ProgressReport::ProgressReport(Progress style, std::size_t total) : total_(total), start_(Clock::now()) {
  bar_ = style == Progress::bar || (style == Progress::automatic && ::isatty(STDERR_FILENO));
  quiet_ = style == Progress::quiet;
}

void ProgressReport::update(std::size_t done, std::int64_t tokens) {
  if (quiet_) return;
  const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
  if (bar_) {
    constexpr std::size_t width = 30;
    const std::size_t filled = total_ ? done * width / total_ : width;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu trials  %.1f trials/s  %s input tokens ", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done, total_, rate, fmt::format("{}", tokens).c_str());
    if (done == total_) std::fputc('\n', stderr);
    return;
  }
  // Plain lines: at most one every two seconds, and the last one.
  if (done != total_ && seconds - last_line_ < 2.0) return;
  last_line_ = seconds;
  log_line(fmt::format("{}/{} trials, {:.1f} trials/s, {} input tokens", done, total_, rate, tokens));
}

}  // namespace okfbench::engine
