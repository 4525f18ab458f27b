// write_atomically: a failed write is an InputError naming the file and
// never leaves FILE.tmp behind. read_file: never blocks, reads only regular files.
#include "core/files.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench {
namespace {
namespace fs = std::filesystem;

std::string failure_of(const fs::path& path, const std::string& text) {
  try {
    write_atomically(path, text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Files, WritesAndReplacesAtomically) {
  fs::path dir = test::fresh_dir("report-files-ok");
  write_atomically(dir / "report.json", "one");
  write_atomically(dir / "report.json", "two");
  EXPECT_EQ(test::read_file(dir / "report.json"), "two");
  EXPECT_FALSE(fs::exists(dir / "report.json.tmp"));
}

TEST(Files, AFailedRenameLeavesNoTemporaryFile) {
  fs::path dir = test::fresh_dir("report-files-rename");
  fs::create_directories(dir / "report.json" / "in-the-way");  // a folder where the file should go
  std::string error = failure_of(dir / "report.json", "{}");
  EXPECT_NE(error.find((dir / "report.json").string() + ": cannot write"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dir / "report.json.tmp"));
}

TEST(Files, AMissingFolderIsNamed) {
  fs::path dir = test::fresh_dir("report-files-missing") / "no" / "such";
  std::string error = failure_of(dir / "report.md", "x");
  EXPECT_NE(error.find((dir / "report.md").string()), std::string::npos) << error;
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
}

std::string read_failure(const fs::path& path, std::size_t limit = std::numeric_limits<std::size_t>::max()) {
  try {
    read_file(path, "cannot read the test file", limit);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Files, ReadsAWholeFileWithItsNulBytes) {
  fs::path dir = test::fresh_dir("files-read");
  const std::string text("a\0b\nc", 5);
  test::write_file(dir / "f", text);
  EXPECT_EQ(read_file(dir / "f", "x"), text);
  test::write_file(dir / "empty", "");
  EXPECT_EQ(read_file(dir / "empty", "x"), "");
}

TEST(Files, AMissingFileKeepsTheCallersSentenceAndGivesTheReason) {
  const std::string error = read_failure(test::fresh_dir("files-missing") / "nope.yaml");
  EXPECT_EQ(error, "cannot read the test file (No such file or directory)");
}

// A FIFO with no writer blocks open(2) and read(2) forever; a folder reads as
// nothing through an ifstream. Both are refused at once, named for what they are.
TEST(Files, AFifoAFolderOrADeviceIsRefusedWithoutBlocking) {
  fs::path dir = test::fresh_dir("files-fifo");
  ASSERT_EQ(::mkfifo((dir / "results.jsonl").c_str(), 0600), 0);
  EXPECT_NE(read_failure(dir / "results.jsonl").find("is a FIFO, not a regular file"), std::string::npos);
  EXPECT_NE(read_failure(dir).find("is a folder, not a regular file"), std::string::npos);
  EXPECT_NE(read_failure("/dev/zero").find("is a device, not a regular file"), std::string::npos);
}

TEST(Files, AFileOverTheLimitIsRefused) {
  fs::path dir = test::fresh_dir("files-limit");
  test::write_file(dir / "big", std::string(100, 'x'));
  EXPECT_EQ(read_file(dir / "big", "x", 100).size(), 100u);
  EXPECT_NE(read_failure(dir / "big", 99).find("100 bytes, more than the limit of 99"), std::string::npos);
}

// Renaming a temporary file over /dev/full would replace the device (as
// root); it is written in place and its ENOSPC is the error.
TEST(Files, ADeviceIsWrittenInPlaceAndAFullOneIsAnError) {
  const std::string error = failure_of("/dev/full", "profile: x\n");
  EXPECT_NE(error.find("/dev/full: cannot write: No space left on device"), std::string::npos) << error;
  struct stat st {};
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/full must still be the device";
  EXPECT_FALSE(fs::exists("/dev/full.tmp"));
  EXPECT_NO_THROW(write_atomically("/dev/null", "discarded"));
}

// A file size limit makes write() fail with EFBIG as a full disk fails with
// ENOSPC; the limit is set in a child process so it binds nothing else.
TEST(Files, AFullDiskLeavesNoTemporaryFile) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  fs::path dir = test::fresh_dir("report-files-full");
  EXPECT_EXIT(
      {
        std::signal(SIGXFSZ, SIG_IGN);  // else the kernel kills the writer instead of failing the write
        rlimit limit = {};
        limit.rlim_cur = limit.rlim_max = 4096;
        setrlimit(RLIMIT_FSIZE, &limit);
        std::string error = failure_of(dir / "report.json", std::string(1 << 20, 'x'));
        bool ok = error.find((dir / "report.json").string() + ": cannot write: File too large") != std::string::npos &&
                  !fs::exists(dir / "report.json.tmp") && !fs::exists(dir / "report.json");
        std::fprintf(stderr, "%s\n", error.c_str());
        std::_Exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "File too large");
}

}  // namespace
}  // namespace okfbench
