#include "core/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
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

// Whatever fails, the temporary file goes: a failed write leaves the old file
// (or none), never a stray .tmp beside it.
[[noreturn]] void fail_write(const std::filesystem::path& path, const std::filesystem::path& temp, const std::string& why) {
  std::error_code ignored;
  if (!temp.empty()) std::filesystem::remove(temp, ignored);
  throw InputError(fmt::format("{}: cannot write: {}", path.string(), why));
}

// Writes all of `text` to `file`, flushes and closes it; errno's text on failure, "" on success.
std::string write_and_close(std::FILE* file, std::string_view text) {
  bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size() && std::fflush(file) == 0;
  int error = errno;
  if (std::fclose(file) != 0 && written) {
    written = false;
    error = errno;
  }
  return written ? std::string() : fmt::format("{} (is the disk full?)", std::strerror(error));
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
    if (S_ISDIR(st.st_mode)) fail_write(path, {}, "it is a folder; name a file");
    std::FILE* out = std::fopen(path.c_str(), "wb");
    if (!out) fail_write(path, {}, std::strerror(errno));
    if (std::string why = write_and_close(out, text); !why.empty()) fail_write(path, {}, why);
    return;
  }
  auto temp = path;
  temp += ".tmp";
  std::FILE* out = std::fopen(temp.c_str(), "wb");
  if (!out) fail_write(path, temp, fmt::format("{} (check that the folder exists and is writable)", std::strerror(errno)));
  if (std::string why = write_and_close(out, text); !why.empty()) fail_write(path, temp, why);
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) fail_write(path, temp, fmt::format("cannot rename {} into place: {}", temp.filename().string(), ec.message()));
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

}  // namespace okfbench
