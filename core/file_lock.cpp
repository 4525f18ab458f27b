#include "core/file_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <sstream>
#include <thread>
#include <utility>

#include "core/error.hpp"

namespace okfbench {
namespace {

std::string read_all(int fd) {
  std::string out;
  char buffer[512];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, at);
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
    at += n;
    if (out.size() > 4096) break;  // a holder line is short; anything longer is not ours
  }
  return out;
}

std::string holder_text() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char since[32];
  std::strftime(since, sizeof since, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return fmt::format("pid={}\nhost={}\nsince={}\n", ::getpid(), host, since);
}

// Writes this process into the locked file. A failure here is only a worse
// message for the next process, so it is not an error.
void note_holder(int fd) {
  const std::string text = holder_text();
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t written = ::pwrite(fd, text.data(), text.size(), 0);
  }
}

// The lock file, created if need be. Never blocks on a FIFO planted at the
// path, nor follows a symbolic link; InputError naming the path.
int open_lock_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd >= 0) return fd;
  const int error = errno;
  throw InputError(fmt::format("cannot create the lock file {}: {}{}", path.string(), std::strerror(error),
                               error == ELOOP ? " (a symbolic link); remove it" : ""));
}

void check_regular(int fd, const std::filesystem::path& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
    throw InputError(fmt::format("the lock file {} is not a regular file (a FIFO, device or folder?); remove it",
                                 path.string()));
}

}  // namespace

std::string describe_lock_holder(const std::string& content) {
  std::map<std::string, std::string> fields;
  std::istringstream in(content);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) fields[line.substr(0, eq)] = line.substr(eq + 1);
  }
  if (!fields.count("pid")) return "an unknown process";
  std::string out = "pid " + fields["pid"];
  if (fields.count("host")) out += " on host " + fields["host"];
  if (fields.count("since")) out += " since " + fields["since"];
  return out;
}

FileLock FileLock::acquire(const std::filesystem::path& path, Wait wait, const std::string& what_to_do,
                           const std::function<void(const std::string& holder)>& on_wait) {
  const int fd = open_lock_file(path);
  FileLock lock(fd);
  check_regular(fd, path);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) throw InputError(fmt::format("cannot lock {}: {}", path.string(), std::strerror(errno)));
    const std::string holder = describe_lock_holder(read_all(fd));
    if (wait == Wait::no) {
      throw InputError(fmt::format("{} is held by okfbench {}{}{}", path.string(), holder, what_to_do.empty() ? "" : ": ",
                                   what_to_do));
    }
    if (on_wait) on_wait(holder);
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) throw InputError(fmt::format("cannot lock {}: {}", path.string(), std::strerror(errno)));
    }
  }
  note_holder(fd);
  return lock;
}

FileLock FileLock::acquire_within(const std::filesystem::path& path, std::chrono::milliseconds timeout,
                                  const std::string& what_to_do) {
  const int fd = open_lock_file(path);
  FileLock lock(fd);
  check_regular(fd, path);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR)
      throw InputError(fmt::format("cannot lock {}: {}", path.string(), std::strerror(errno)));
    if (std::chrono::steady_clock::now() >= deadline) {
      throw InputError(fmt::format("timed out after {} ms waiting for {}, held by okfbench {}{}{}", timeout.count(),
                                   path.string(), describe_lock_holder(read_all(fd)), what_to_do.empty() ? "" : ": ",
                                   what_to_do));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  note_holder(fd);
  return lock;
}

std::optional<std::string> FileLock::held_by(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const FileLock probe(fd);
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) return std::nullopt;  // released again when probe closes it
  if (errno != EWOULDBLOCK) return std::nullopt;
  return describe_lock_holder(read_all(fd));
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace okfbench
