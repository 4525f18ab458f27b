// End-to-end tests of `okfbench tokens`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/test_support.hpp"

namespace okfbench::test {
namespace {

std::string okfbench() { return okfbench_binary().string(); }

TEST(CmdTokens, CountsIdsAndJson) {
  auto dir = fresh_dir("cmd-tokens");
  write_file(dir / "in.txt", "hello world");
  auto count = run_command(okfbench() + " tokens " + (dir / "in.txt").string());
  EXPECT_EQ(count.exit_code, 0) << count.err;
  EXPECT_EQ(count.out, "2\n");
  auto ids = run_command(okfbench() + " tokens --ids --encoding cl100k_base - < " + (dir / "in.txt").string());
  EXPECT_EQ(ids.out, "15339 1917\n");
  auto heuristic = run_command(okfbench() + " tokens --encoding heuristic --json " + (dir / "in.txt").string());
  auto json = nlohmann::json::parse(heuristic.out);
  EXPECT_EQ(json["tokens"], 3);
  EXPECT_EQ(json["bytes"], 11);
  EXPECT_EQ(json["encoding"], "heuristic");
}

TEST(CmdTokens, ErrorsHaveExitCodes) {
  auto missing = run_command(okfbench() + " tokens /nonexistent/file.txt");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("/nonexistent/file.txt"), std::string::npos);
  auto unknown = run_command(okfbench() + " tokens --encoding p50k_base /dev/null");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("o200k_base, cl100k_base or heuristic"), std::string::npos);
  auto ids = run_command(okfbench() + " tokens --ids --encoding heuristic /dev/null");
  EXPECT_EQ(ids.exit_code, 2);
}

}  // namespace
}  // namespace okfbench::test
