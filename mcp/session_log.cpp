#include "mcp/session_log.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace okfbench::mcp {

SessionLog::SessionLog(const std::filesystem::path& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "ab");
  if (!file_)
    throw InputError(fmt::format("--session-log {}: cannot be opened for appending ({}); check that its folder exists",
                                 path.string(), std::strerror(errno)));
}

SessionLog::~SessionLog() {
  if (file_) std::fclose(file_);
}

void SessionLog::write(const reports::SessionEvent& event) {
  std::string line = reports::to_jsonl_line(event) + "\n";
  std::lock_guard lock(mutex_);
  bool ok = std::fwrite(line.data(), 1, line.size(), file_) == line.size() && std::fflush(file_) == 0;
  if (!ok && !warned_) {
    warned_ = true;
    std::fprintf(stderr, "okfbench mcp: warning: cannot write the session log %s (%s); later events may be missing\n",
                 path_.c_str(), std::strerror(errno));
  }
}

}  // namespace okfbench::mcp
