#pragma once
// Writing an output file (a report, a profile, a question set, a run file) so
// that a failed write never leaves a file behind that reads as valid: the
// text goes to a temporary file beside the target, every write, the flush
// and the close are checked, and only then is it renamed over the target. A
// full disk gives an InputError naming the file and no file (and an older
// file stays as it was). A target that exists and is not a regular file
// (/dev/stdout, /dev/full, a FIFO) is written in place, with the same checks:
// a temporary file beside a device would be renamed over the device.
// Header-only so that every library shares it without a link dependency.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "retrieval/error.hpp"

namespace okfbench {

namespace atomic_file_detail {

// Writes all of `text` to `fd` and closes it; errno of the first failure, or 0.
inline int write_all_and_close(int fd, std::string_view text) {
  int error = 0;
  for (std::size_t done = 0; done < text.size() && error == 0;) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) error = n < 0 ? errno : ENOSPC;
    else done += static_cast<std::size_t>(n);
  }
  struct stat st{};
  if (error == 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  return error;
}

[[noreturn]] inline void fail(const std::filesystem::path& path, int error, std::string_view hint) {
  throw InputError(path.string() + ": cannot write: " + std::strerror(error) + std::string(hint));
}

}  // namespace atomic_file_detail

inline void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  namespace d = atomic_file_detail;
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw InputError(path.string() + ": cannot write: it is a folder; name a file");
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) d::fail(path, errno, " (a FIFO needs a reader)");
    if (const int error = d::write_all_and_close(fd, text)) d::fail(path, error, " (is the disk full?)");
    return;
  }
  static std::atomic<unsigned> counter{0};
  std::filesystem::path temp = path;
  temp += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) d::fail(path, errno, " (check that the folder exists and is writable)");
  int error = d::write_all_and_close(fd, text);
  if (error == 0 && ::rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    d::fail(path, error, error == ENOSPC || error == EDQUOT ? " (the disk is full; nothing was written)" : "");
  }
}

}  // namespace okfbench
