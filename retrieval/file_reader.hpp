#pragma once
// Reading a bundle's files: whole small files with as few system calls as
// the kernel allows, and never through a symbolic link.
//
// Speed: on this kind of machine open+fstat+read+close cost 8-10 us of CPU
// per file, more than parsing a page; io_uring submits the open, read and
// close of a whole batch of files in one call and halves that. When io_uring
// is unavailable (old kernel, seccomp, io_uring_disabled) the reader falls
// back to plain system calls; results are the same either way.
//
// Safety: every open is relative to a directory descriptor the caller holds
// and follows no symbolic link, neither on the way nor at the end, so a file
// swapped for a link after the walk listed it is refused, never followed out
// of the bundle.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace okfbench::retrieval {

// Owns one file descriptor and closes it.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    reset(other.release());
    return *this;
  }
  ~FileDescriptor() { reset(); }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);  // closes the old one; errno is left as it was

 private:
  int fd_;
};

// Where a file is: `name`, a '/'-separated path without empty, "." or ".."
// parts (usually one name), below the open directory `directory_fd`.
struct FileLocation {
  int directory_fd = -1;
  std::string name;
};

// How open_beneath resolves a path of several parts. `best` asks the kernel
// (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, Linux 5.6) and falls
// back to `component_walk` (one openat with O_NOFOLLOW per part) where the
// kernel or a seccomp profile lacks openat2. Tests force the fallback.
enum class Resolve { best, component_walk };

// Opens `relative` (see FileLocation::name) below `directory_fd` without
// following any symbolic link; `flags` are open(2) flags, O_NOFOLLOW and
// O_CLOEXEC are added. The descriptor, or -1 with errno set (ELOOP: a part is
// a symbolic link; ENOTDIR: a part is not a directory; EINVAL: `relative` is
// empty or has an empty, "." or ".." part).
int open_beneath(int directory_fd, std::string_view relative, int flags, Resolve how = Resolve::best);

// What an errno from open_beneath means for a bundle file, in words, with
// what to do.
std::string open_error_message(int error);

// A file's bytes, or an error message that says what went wrong and what to do.
struct FileContent {
  std::string bytes;
  std::string error;
};

// One file with plain system calls. Files over `max_bytes` and anything that
// is not a regular file give an error.
FileContent read_whole_file(const FileLocation& file, std::size_t max_bytes);

// Reads batches of files; one reader per thread.
class BatchReader {
 public:
  // `use_io_uring` false forces plain system calls (tests compare the paths).
  BatchReader(std::size_t max_batch, bool use_io_uring);
  ~BatchReader();
  BatchReader(const BatchReader&) = delete;
  BatchReader& operator=(const BatchReader&) = delete;

  // At most max_batch files; contents in the same order.
  std::vector<FileContent> read(std::span<const FileLocation* const> files, std::size_t max_bytes);

  bool uses_io_uring() const { return ring_ != nullptr; }

 private:
  struct Ring;
  std::size_t max_batch_;
  std::unique_ptr<Ring> ring_;
};

}  // namespace okfbench::retrieval
