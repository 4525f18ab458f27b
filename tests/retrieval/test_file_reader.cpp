// BatchReader: io_uring and plain reads give the same bytes and the same
// errors; open_beneath and both read paths never follow a symbolic link.
#include "retrieval/file_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>

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
// missing file, a directory and a path of two parts.
Files make_files() {
  Files files;
  auto add = [&](const std::string& name, std::string bytes) {
    write_file(files.root / name, bytes);
    files.locations.push_back({-1, name});
    files.expected.push_back(std::move(bytes));
  };
  add("empty.md", "");
  add("small.md", "# Small\n\nText.\n");
  add("below.md", std::string(16 * 1024 - 1, 'a'));
  add("exact.md", std::string(16 * 1024, 'b'));
  add("above.md", std::string(200'000, 'c'));
  files.locations.push_back({-1, "missing.md"});
  files.expected.emplace_back();
  fs::create_directories(files.root / "folder.md");
  files.locations.push_back({-1, "folder.md"});
  files.expected.emplace_back();
  write_file(files.root / "sub" / "deeper.md", "# Deeper\n");
  files.locations.push_back({-1, "sub/deeper.md"});
  files.expected.push_back("# Deeper\n");
  return files;
}

std::vector<FileContent> read_all(bool use_io_uring, std::vector<FileLocation> locations, int directory_fd,
                                  std::size_t max_bytes, bool* used_ring = nullptr) {
  for (FileLocation& location : locations) location.directory_fd = directory_fd;
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
  EXPECT_THAT(ring[6].error, HasSubstr("a directory, not a regular file"));
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
  Directory directory(root);
  std::vector<FileLocation> locations;
  for (int i = 0; i < 100; ++i) {
    write_file(root / fmt::format("f{}.md", i), std::string(static_cast<std::size_t>(i * 37), 'x') + std::to_string(i));
    locations.push_back({directory.fd(), fmt::format("f{}.md", i)});
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

// A tree with a link at every place a path can have one: a directory link on
// the way, a file link at the end, a link to outside.
struct LinkTree {
  fs::path outside = fresh_dir("beneath-outside");
  fs::path root = fresh_dir("beneath");
  LinkTree() {
    write_file(outside / "secret.md", "OUTSIDE\n");
    write_file(root / "a" / "b" / "f.md", "INSIDE\n");
    fs::create_directory_symlink(root / "a", root / "link");
    fs::create_directory_symlink(outside, root / "a" / "out");
    fs::create_symlink(root / "a" / "b" / "f.md", root / "a" / "b" / "alias.md");
    fs::create_symlink(outside / "secret.md", root / "leak.md");
  }
};

std::string read_fd(int fd) {
  std::string out(64, '\0');
  ssize_t got = ::read(fd, out.data(), out.size());
  out.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  ::close(fd);
  return out;
}

TEST(OpenBeneath, FollowsNoLinkOnTheWayOrAtTheEnd) {
  LinkTree tree;
  Directory root(tree.root);
  for (Resolve how : {Resolve::best, Resolve::component_walk}) {
    SCOPED_TRACE(how == Resolve::best ? "best" : "component_walk");
    EXPECT_EQ(read_fd(open_beneath(root.fd(), "a/b/f.md", O_RDONLY, how)), "INSIDE\n");
    for (const char* linked : {"link/b/f.md", "a/b/alias.md", "a/out/secret.md", "leak.md"}) {
      errno = 0;
      EXPECT_EQ(open_beneath(root.fd(), linked, O_RDONLY, how), -1) << linked;
      EXPECT_TRUE(errno == ELOOP || errno == ENOTDIR) << linked << ": " << std::strerror(errno);
    }
    for (const char* malformed : {"", "../beneath/a/b/f.md", "a/../a/b/f.md", "a//b/f.md", "./a/b/f.md", "/etc/passwd",
                                  "a/b/f.md/"}) {
      errno = 0;
      EXPECT_EQ(open_beneath(root.fd(), malformed, O_RDONLY, how), -1) << malformed;
      EXPECT_EQ(errno, EINVAL) << malformed;
    }
  }
}

// Files below the walk's 256 open directories are read by a path of several
// parts: through io_uring (openat2) and the plain way, a link on that path
// is refused, and the error says so.
TEST(BatchReader, PathsOfSeveralPartsRefuseLinksOnBothReadPaths) {
  LinkTree tree;
  Directory root(tree.root);
  std::vector<FileLocation> locations;
  for (int i = 0; i < 32; ++i) {
    std::string name = fmt::format("f{}.md", i);
    write_file(tree.root / "a" / "b" / name, "INSIDE " + name);
    locations.push_back({root.fd(), (i % 4 == 1 ? "link/b/" : "a/b/") + name});
  }
  locations[2].name = "a/out/secret.md";
  locations[3].name = "leak.md";
  for (bool use_ring : {true, false}) {
    SCOPED_TRACE(use_ring ? "io_uring" : "plain");
    std::vector<FileContent> got = read_all(use_ring, locations, root.fd(), 1 << 20);
    for (std::size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(locations[i].name);
      EXPECT_EQ(got[i].bytes.find("OUTSIDE"), std::string::npos);
      bool linked = i % 4 == 1 || i == 2 || i == 3;
      if (linked) {
        EXPECT_TRUE(got[i].bytes.empty());
        EXPECT_THAT(got[i].error, HasSubstr("it was not followed"));
      } else {
        EXPECT_EQ(got[i].bytes, fmt::format("INSIDE f{}.md", i));
      }
    }
  }
}

// A markdown file swapped for a FIFO after the walk must neither block the
// load waiting for a writer nor read as an empty file.
TEST(BatchReader, AFifoNeitherBlocksNorReadsAsAFile) {
  fs::path root = fresh_dir("file-reader-fifo");
  Directory directory(root);
  std::vector<FileLocation> locations;
  for (int i = 0; i < 32; ++i) {
    write_file(root / fmt::format("f{}.md", i), "text");
    locations.push_back({directory.fd(), fmt::format("f{}.md", i)});
  }
  ASSERT_EQ(::mkfifo((root / "pipe.md").c_str(), 0644), 0);
  locations[5].name = "pipe.md";
  for (bool use_ring : {true, false}) {
    SCOPED_TRACE(use_ring ? "io_uring" : "plain");
    auto reading = std::async(std::launch::async, [&] { return read_all(use_ring, locations, directory.fd(), 1 << 20); });
    ASSERT_EQ(reading.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "the read blocked on the FIFO";
    std::vector<FileContent> got = reading.get();
    EXPECT_THAT(got[5].error, HasSubstr("a FIFO, not a regular file"));
    EXPECT_EQ(got[6].bytes, "text");
  }
}

// Files whose pages were dropped from the cache read the same through the
// ring: a read that has to wait for the disk is not an error.
TEST(BatchReader, ColdFilesReadTheSame) {
  fs::path root = fresh_dir("file-reader-cold");
  Directory directory(root);
  std::vector<FileLocation> locations;
  for (int i = 0; i < 32; ++i) {
    std::string name = fmt::format("f{}.md", i);
    write_file(root / name, std::string(4000 + static_cast<std::size_t>(i), 'c'));
    int fd = ::open((root / name).c_str(), O_RDONLY);
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // clean pages are dropped
    ::close(fd);
    locations.push_back({directory.fd(), name});
  }
  std::vector<FileContent> got = read_all(true, locations, directory.fd(), 1 << 20);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].bytes.size(), 4000 + i) << got[i].error;
}

}  // namespace
}  // namespace okfbench::retrieval
