// BatchReader: io_uring and plain reads give the same bytes and the same errors.
#include "retrieval/file_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {
namespace fs = std::filesystem;
using okfbench::test::fresh_dir;
using okfbench::test::write_file;
using ::testing::HasSubstr;

class Directory {
 public:
  explicit Directory(const fs::path& path) : fd_(::open(path.c_str(), O_RDONLY | O_DIRECTORY)) {}
  ~Directory() { ::close(fd_); }
  Directory(const Directory&) = delete;
  Directory& operator=(const Directory&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

struct Files {
  fs::path root = fresh_dir("file-reader");
  std::vector<FileLocation> locations;
  std::vector<std::string> expected;  // bytes, or "" for files that must fail
};

// Sizes around the reader's 16 KiB buffer and the limit, an empty file, a
// missing file, a directory and an absolute path.
Files make_files() {
  Files files;
  auto add = [&](const std::string& name, std::string bytes) {
    write_file(files.root / name, bytes);
    files.locations.push_back({-1, name, {}});
    files.expected.push_back(std::move(bytes));
  };
  add("empty.md", "");
  add("small.md", "# Small\n\nText.\n");
  add("below.md", std::string(16 * 1024 - 1, 'a'));
  add("exact.md", std::string(16 * 1024, 'b'));
  add("above.md", std::string(200'000, 'c'));
  files.locations.push_back({-1, "missing.md", {}});
  files.expected.emplace_back();
  fs::create_directories(files.root / "folder.md");
  files.locations.push_back({-1, "folder.md", {}});
  files.expected.emplace_back();
  files.locations.push_back({-1, {}, files.root / "small.md"});
  files.expected.push_back("# Small\n\nText.\n");
  return files;
}

std::vector<FileContent> read_all(bool use_io_uring, std::vector<FileLocation> locations, int directory_fd,
                                  std::size_t max_bytes, bool* used_ring = nullptr) {
  for (FileLocation& location : locations)
    if (location.absolute.empty()) location.directory_fd = directory_fd;
  std::vector<const FileLocation*> batch;
  for (const FileLocation& location : locations) batch.push_back(&location);
  BatchReader reader(batch.size(), use_io_uring);
  if (used_ring) *used_ring = reader.uses_io_uring();
  return reader.read(batch, max_bytes);
}

TEST(BatchReader, BothPathsReadTheSameBytesAndErrors) {
  Files files = make_files();
  Directory directory(files.root);
  bool used_ring = false;
  std::vector<FileContent> ring = read_all(true, files.locations, directory.fd(), 1 << 20, &used_ring);
  std::vector<FileContent> plain = read_all(false, files.locations, directory.fd(), 1 << 20);
  // io_uring may be off on the machine (seccomp, io_uring_disabled); the
  // fallback must then give the same results, which this still checks.
  RecordProperty("io_uring", used_ring ? "used" : "unavailable");
  ASSERT_EQ(ring.size(), files.expected.size());
  for (std::size_t i = 0; i < ring.size(); ++i) {
    SCOPED_TRACE(files.locations[i].name);
    EXPECT_EQ(ring[i].bytes, files.expected[i]);
    EXPECT_EQ(ring[i].bytes, plain[i].bytes);
    EXPECT_EQ(ring[i].error, plain[i].error);
  }
  EXPECT_THAT(ring[5].error, HasSubstr("No such file"));
  EXPECT_THAT(ring[6].error, HasSubstr("Is a directory"));
}

TEST(BatchReader, LimitIsExactOnBothPaths) {
  Files files = make_files();
  Directory directory(files.root);
  for (bool use_ring : {true, false}) {
    SCOPED_TRACE(use_ring ? "io_uring" : "plain");
    std::vector<FileContent> at = read_all(use_ring, files.locations, directory.fd(), 16 * 1024);
    EXPECT_EQ(at[3].bytes.size(), 16u * 1024);  // exactly at the limit: read
    EXPECT_THAT(at[4].error, HasSubstr("file is 200000 bytes, over the limit of 16384 bytes"));
    std::vector<FileContent> tiny = read_all(use_ring, files.locations, directory.fd(), 0);
    EXPECT_TRUE(tiny[0].error.empty());  // an empty file fits any limit
    EXPECT_THAT(tiny[1].error, HasSubstr("over the limit of 0 bytes"));
  }
}

TEST(BatchReader, ReadsManyBatchesWithOneReader) {
  fs::path root = fresh_dir("file-reader-many");
  std::vector<FileLocation> locations;
  for (int i = 0; i < 100; ++i) {
    write_file(root / fmt::format("f{}.md", i), std::string(static_cast<std::size_t>(i * 37), 'x') + std::to_string(i));
    locations.push_back({-1, {}, root / fmt::format("f{}.md", i)});
  }
  BatchReader reader(8, true);
  for (std::size_t begin = 0; begin < locations.size(); begin += 8) {
    std::vector<const FileLocation*> batch;
    for (std::size_t i = begin; i < std::min(locations.size(), begin + 8); ++i) batch.push_back(&locations[i]);
    std::vector<FileContent> got = reader.read(batch, 1 << 20);
    for (std::size_t i = 0; i < got.size(); ++i) {
      std::size_t n = begin + i;
      EXPECT_EQ(got[i].bytes, std::string(n * 37, 'x') + std::to_string(n)) << n;
    }
  }
}

}  // namespace
}  // namespace okfbench::retrieval
