// `okfbench run` with no spec: the default experiment's headline table
// (stdout, before the line that reports timings and the folder) is golden,
// so any change to what a path costs or what its answers are worth shows up
// in review. scripts/update-golden.sh regenerates it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/reports/fixtures.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::cli {
namespace {

TEST(DefaultExperiment, HeadlineIsGolden) {
  const auto dir = test::fresh_dir("default_experiment");
  test::CommandResult r = test::run_command(fmt::format("cd {} && {} run --out {} --set cache_dir={} --progress quiet",
                                                        dir.string(), test::okfbench_binary().string(),
                                                        (dir / "out").string(), (dir / "cache").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto end = r.out.find(" trials planned: ");
  ASSERT_NE(end, std::string::npos) << r.out;
  const std::string headline = r.out.substr(0, r.out.rfind('\n', end) + 1);
  EXPECT_NE(headline.find("| answer score | correct | cost per correct | x one-shot at equal quality |"),
            std::string::npos);
  reports::fixtures::expect_golden("default_headline.md", headline);
}

}  // namespace
}  // namespace okfbench::cli
