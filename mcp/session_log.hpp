#pragma once
// Appends the events of `okfbench mcp` sessions to a JSONL file
// (reports/session.hpp describes the lines), one flushed line per event, so
// a server stopped by a signal leaves every answered call accounted.
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>

#include "reports/session.hpp"

namespace okfbench::mcp {

class SessionLog {
 public:
  // Opens `path` for appending; InputError when it cannot be opened.
  explicit SessionLog(const std::filesystem::path& path);
  ~SessionLog();
  SessionLog(const SessionLog&) = delete;
  SessionLog& operator=(const SessionLog&) = delete;

  // Thread-safe. A failed write is said once on stderr and does not stop the
  // server: the client's session matters more than its accounting.
  void write(const reports::SessionEvent& event);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::mutex mutex_;
  bool warned_ = false;
};

}  // namespace okfbench::mcp
