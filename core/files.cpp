#include "core/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "core/error.hpp"
#include "core/file_lock.hpp"

namespace okfbench {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

// Closes the descriptor on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void fail_read(std::string_view cannot_read, const std::string& why) {
  throw InputError(fmt::format("{} ({})", cannot_read, why));
}

// Writes all of `text` to `fd`, syncs a regular file and closes it; errno of
// the first failure, or 0.
int write_all_and_close(int fd, std::string_view text) {
  int error = 0;
  for (std::size_t done = 0; done < text.size() && error == 0;) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : ENOSPC;
    } else {
      done += static_cast<std::size_t>(n);
    }
  }
  struct stat st {};
  if (error == 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  return error;
}

[[noreturn]] void fail_write(const std::filesystem::path& path, int error, std::string_view hint) {
  throw InputError(fmt::format("{}: cannot write: {}{}", path.string(), std::strerror(error), hint));
}

}  // namespace

std::string read_file(const std::filesystem::path& path, std::string_view cannot_read, std::size_t max_bytes) {
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) fail_read(cannot_read, std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) fail_read(cannot_read, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail_read(cannot_read, fmt::format("{} is {}, not a regular file", path.string(), kind_of(st.st_mode)));
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    fail_read(cannot_read, fmt::format("{} bytes, more than the limit of {}", st.st_size, max_bytes));
  }
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(f.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_read(cannot_read, std::strerror(errno));
    if (n == 0) break;
    // A file that grows while it is read is held to the same limit.
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) {
      fail_read(cannot_read, fmt::format("more than the limit of {} bytes", max_bytes));
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

void write_atomically(const std::filesystem::path& path, std::string_view text) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw InputError(path.string() + ": cannot write: it is a folder; name a file");
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) fail_write(path, errno, " (a FIFO needs a reader)");
    if (const int error = write_all_and_close(fd, text)) fail_write(path, error, " (is the disk full?)");
    return;
  }
  // A name of this process's own, so two writers of one file never share a temporary file.
  static std::atomic<unsigned> counter{0};
  std::filesystem::path temp = path;
  temp += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail_write(path, errno, " (check that the folder exists and is writable)");
  int error = write_all_and_close(fd, text);
  if (error == 0 && ::rename(temp.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    fail_write(path, error, error == ENOSPC || error == EDQUOT ? " (the disk is full; nothing was written)" : "");
  }
}

std::filesystem::path publish_folder(const std::filesystem::path& parent, const std::string& name,
                                     const std::function<void(const std::filesystem::path& tmp)>& build,
                                     const std::function<void(const std::string& holder)>& on_wait) {
  namespace fs = std::filesystem;
  const fs::path final_dir = parent / name;
  const auto complete = [&] { return fs::exists(final_dir / ".okfbench-complete"); };
  if (complete()) return final_dir;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw InputError(fmt::format("cannot create the cache folder {}: {}", parent.string(), ec.message()));
  const FileLock lock = FileLock::acquire(parent / fmt::format(".{}.lock", name), FileLock::Wait::yes, {},
                                          [&](const std::string& holder) {
                                            if (on_wait) on_wait(holder);
                                          });
  if (complete()) return final_dir;  // built while we waited
  // Under the lock nobody else builds this entry: what is left of it is from
  // an interrupted build.
  const std::string tmp_prefix = fmt::format(".{}.tmp-", name);
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    if (entry.path().filename().string().starts_with(tmp_prefix)) fs::remove_all(entry.path(), ec);
  }
  fs::remove_all(final_dir, ec);
  const fs::path tmp = parent / (tmp_prefix + std::to_string(::getpid()));
  try {
    build(tmp);
    write_atomically(tmp / ".okfbench-complete", "");
    fs::rename(tmp, final_dir);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw InputError(fmt::format("cannot build {}: {}", final_dir.string(), e.what()));
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  return final_dir;
}

std::filesystem::path user_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "okfbench";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "okfbench";
  return {};
}

std::filesystem::path user_cache_dir(const std::filesystem::path& part, std::string_view what, std::string_view flag) {
  const std::filesystem::path base = user_cache_dir();
  if (base.empty()) throw InputError(fmt::format("neither XDG_CACHE_HOME nor HOME is set: pass {} for {}", flag, what));
  return base / part;
}

}  // namespace okfbench
