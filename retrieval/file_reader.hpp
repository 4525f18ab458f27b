#pragma once
// Reading a bundle's files: whole small files with as few system calls as
// the kernel allows. On this kind of machine open+fstat+read+close cost
// 8-10 us of CPU per file, more than parsing a page; io_uring submits the
// open, read and close of a whole batch of files in one call and halves that.
// When io_uring is unavailable (old kernel, seccomp, io_uring_disabled) the
// reader falls back to plain system calls; results are the same either way.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace okfbench::retrieval {

// Where a file is: `name` inside the open directory `directory_fd`, or
// `absolute` when directory_fd < 0 (symbolic links resolved by the walk).
struct FileLocation {
  int directory_fd = -1;
  std::string name;
  std::filesystem::path absolute;
};

// A file's bytes, or an error message that says what went wrong and what to do.
struct FileContent {
  std::string bytes;
  std::string error;
};

// One file with plain system calls. Files over `max_bytes` give an error.
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
