#pragma once
// What every part of the runner shares: its clock, the vocabulary trials are
// counted with, and how it logs (one line on stderr per event).
#include <chrono>
#include <string>

namespace okfbench::engine {

using Clock = std::chrono::steady_clock;

inline constexpr const char* kCounter = "o200k_base";  // the vocabulary every trial's tokens are counted with

double ms_since(Clock::time_point start);
void log_line(const std::string& text);  // "okfbench: TEXT" on stderr
std::string utc_now(const char* format);  // the current UTC time through strftime

}  // namespace okfbench::engine
