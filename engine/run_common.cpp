#include "engine/run_common.hpp"

#include <cstdio>
#include <ctime>

namespace okfbench::engine {

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void log_line(const std::string& text) { std::fprintf(stderr, "okfbench: %s\n", text.c_str()); }

std::string utc_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, format, &tm);
  return buffer;
}

}  // namespace okfbench::engine
