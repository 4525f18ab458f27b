// write_text_atomically: a failed write is an InputError naming the file and
// never leaves FILE.tmp behind.
#include "reports/report_files.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "retrieval/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::reports {
namespace {
namespace fs = std::filesystem;

std::string failure_of(const fs::path& path, const std::string& text) {
  try {
    write_text_atomically(path, text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ReportFiles, WritesAndReplacesAtomically) {
  fs::path dir = test::fresh_dir("report-files-ok");
  write_text_atomically(dir / "report.json", "one");
  write_text_atomically(dir / "report.json", "two");
  EXPECT_EQ(test::read_file(dir / "report.json"), "two");
  EXPECT_FALSE(fs::exists(dir / "report.json.tmp"));
}

TEST(ReportFiles, AFailedRenameLeavesNoTemporaryFile) {
  fs::path dir = test::fresh_dir("report-files-rename");
  fs::create_directories(dir / "report.json" / "in-the-way");  // a folder where the file should go
  std::string error = failure_of(dir / "report.json", "{}");
  EXPECT_NE(error.find((dir / "report.json").string() + ": cannot write"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dir / "report.json.tmp"));
}

TEST(ReportFiles, AMissingFolderIsNamed) {
  fs::path dir = test::fresh_dir("report-files-missing") / "no" / "such";
  std::string error = failure_of(dir / "report.md", "x");
  EXPECT_NE(error.find((dir / "report.md").string()), std::string::npos) << error;
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
}

// A file size limit makes write() fail with EFBIG as a full disk fails with
// ENOSPC; the limit is set in a child process so it binds nothing else.
TEST(ReportFiles, AFullDiskLeavesNoTemporaryFile) {
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
}  // namespace okfbench::reports
