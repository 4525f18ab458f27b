// Where the shipped data is found: $OKFBENCH_HOME, else share/okfbench beside
// the program (an install prefix), or up to two folders further up (programs
// in subfolders of the build tree); the source tree never.
#include "retrieval/data_home.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// PREFIX/share/okfbench with the marker file data_home() looks for.
fs::path make_share(const fs::path& prefix) {
  const fs::path share = prefix / "share" / "okfbench";
  test::write_file(share / "tokenizers" / "encodings.json", "{}");
  return share;
}

std::string error_of(const fs::path& program, const std::string& home) {
  try {
    data_home_for(program, home);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(DataHome, AnInstallPrefixHasItBesideBin) {
  const fs::path prefix = test::fresh_dir("data_home");
  const fs::path share = make_share(prefix);
  EXPECT_EQ(data_home_for(prefix / "bin" / "okfbench", ""), share);
}

TEST(DataHome, BuildTreeProgramsFindTheStagedCopyUpToTwoLevelsUp) {
  const fs::path build = test::fresh_dir("data_home");
  const fs::path share = make_share(build);
  EXPECT_EQ(data_home_for(build / "harness" / "okfbench", ""), share);
  EXPECT_EQ(data_home_for(build / "tests" / "test_retrieval", ""), share);
  EXPECT_EQ(data_home_for(build / "tests" / "bench" / "bench_search", ""), share);
  EXPECT_THAT(error_of(build / "a" / "b" / "c" / "d" / "program", ""), HasSubstr("is not beside the program"));
}

TEST(DataHome, AFolderWithoutTheTokenizersIsNotTaken) {
  const fs::path prefix = test::fresh_dir("data_home");
  fs::create_directories(prefix / "share" / "okfbench" / "experiments");
  const std::string e = error_of(prefix / "bin" / "okfbench", "");
  EXPECT_THAT(e, HasSubstr((prefix / "share" / "okfbench").string()));
  EXPECT_THAT(e, HasSubstr("set OKFBENCH_HOME"));
}

TEST(DataHome, OkfbenchHomeWinsAndMustBeAFolder) {
  const fs::path prefix = test::fresh_dir("data_home");
  make_share(prefix);
  const fs::path other = test::fresh_dir("data_home_other");
  EXPECT_EQ(data_home_for(prefix / "bin" / "okfbench", other.string()), other);
  EXPECT_THAT(error_of(prefix / "bin" / "okfbench", (other / "missing").string()),
              HasSubstr("OKFBENCH_HOME=" + (other / "missing").string() + " is not a folder"));
}

TEST(DataHome, TheTestProgramsReadTheStagedCopyNotTheSourceTree) {
  const fs::path home = data_home();
  EXPECT_TRUE(fs::is_regular_file(home / "experiments" / "default.yaml")) << home;
  const std::string source = fs::weakly_canonical(test::source_dir()).string() + "/";
  EXPECT_NE(fs::weakly_canonical(home).string().rfind(source + "datasets", 0), 0u) << home;
}

}  // namespace
}  // namespace okfbench::retrieval
