#pragma once
// Reading an input file that must be a regular file (results.jsonl, a
// manifest, a session log, transcripts): opened with O_NONBLOCK, so a FIFO or
// a device in its place is refused at once instead of blocking the program
// forever, and checked with fstat before a byte is read. Header-only so that
// every library shares it without a link dependency.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace okfbench {

// Owns the descriptor of a regular file opened for reading.
class RegularFile {
 public:
  // Throws InputError naming `path` when it cannot be opened or is not a
  // regular file (a FIFO, a device, a folder).
  explicit RegularFile(const std::filesystem::path& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) {
      throw InputError(path.string() + ": cannot be read: " + std::strerror(errno) + "; check that the path exists");
    }
    struct stat st{};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw InputError(path.string() + ": not a regular file (a FIFO, a device or a folder); pass the file itself");
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  }
  ~RegularFile() { ::close(fd_); }
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  int fd() const { return fd_; }
  std::uint64_t size() const { return size_; }

  // The whole file; InputError when it is larger than `max_bytes` or a read fails.
  std::string read_all(std::uint64_t max_bytes) const {
    if (size_ > max_bytes) {
      throw InputError(path_.string() + ": " + std::to_string(size_) + " bytes, more than the " +
                       std::to_string(max_bytes) + " this file may have; is it the right file?");
    }
    std::string out;
    char buffer[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw InputError(path_.string() + ": cannot be read: " + std::strerror(errno));
      if (n == 0) return out;
      out.append(buffer, static_cast<std::size_t>(n));
      if (out.size() > max_bytes) throw InputError(path_.string() + ": grew past " + std::to_string(max_bytes) + " bytes while read");
    }
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// The lines of a RegularFile, one at a time, without holding the file: a
// reader of JSONL of any length costs memory for its longest line. Lines end
// at '\n' (a '\r' before it is kept; callers that skip blank lines treat it
// as a blank); the last line may lack one.
class LineReader {
 public:
  // A line longer than `max_line_bytes` is an InputError naming the file and line.
  LineReader(const RegularFile& file, const std::filesystem::path& path, std::size_t max_line_bytes)
      : fd_(file.fd()), path_(path), max_(max_line_bytes) {}

  // The next line into `line`; false at the end of the file.
  bool next(std::string& line) {
    line.clear();
    for (;;) {
      if (pos_ == end_ && !fill()) {
        if (line.empty() && !partial_) return false;
        partial_ = false;
        ++number_;
        return true;
      }
      const std::string_view rest(buffer_ + pos_, end_ - pos_);
      const std::size_t newline = rest.find('\n');
      const std::size_t take = newline == std::string_view::npos ? rest.size() : newline;
      if (line.size() + take > max_) {
        throw InputError(path_.string() + ":" + std::to_string(number_ + 1) + ": a line longer than " +
                         std::to_string(max_) + " bytes; is it the right file?");
      }
      line.append(rest.substr(0, take));
      if (newline == std::string_view::npos) {
        pos_ = end_;
        partial_ = true;
        continue;
      }
      pos_ += take + 1;
      partial_ = false;
      ++number_;
      return true;
    }
  }

  // The 1-based number of the line `next` gave last.
  int number() const { return number_; }

 private:
  bool fill() {
    for (;;) {
      const ssize_t n = ::read(fd_, buffer_, sizeof buffer_);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw InputError(path_.string() + ": cannot be read: " + std::strerror(errno));
      pos_ = 0;
      end_ = static_cast<std::size_t>(n);
      return n > 0;
    }
  }

  int fd_;
  std::filesystem::path path_;
  std::size_t max_;
  char buffer_[1 << 16];
  std::size_t pos_ = 0, end_ = 0;
  bool partial_ = false;  // the line read so far has no '\n' yet
  int number_ = 0;
};

}  // namespace okfbench
