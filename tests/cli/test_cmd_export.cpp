// End-to-end tests of `okfbench export` on a stored run written from fixtures.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/reports/fixtures.hpp"

namespace okfbench {
namespace {

TEST(CmdExport, WritesTheRunAsOtlpJson) {
  auto dir = reports::fixtures::stored_run("cli_export", reports::fixtures::small_run());
  auto out = dir / "traces.json";
  auto r = test::run_command(test::okfbench_binary().string() + " export " + dir.string() + " --otlp-json " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("wrote 5 trial trace(s) to " + out.string()), std::string::npos) << r.err;
  auto doc = nlohmann::json::parse(test::read_file(out));
  // 5 roots; 2 context trials with a pack and a model call; 2 agent trials of 4 model and 3 tool calls.
  EXPECT_EQ(doc["resourceSpans"][0]["scopeSpans"][0]["spans"].size(), 5u + 2 * 2 + 2 * 7);
}

TEST(CmdExport, ClearErrorsAndExitCodes) {
  auto bin = test::okfbench_binary().string();
  auto missing = test::run_command(bin + " export /nonexistent/run --otlp-json /tmp/x.json");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("/nonexistent/run"), std::string::npos) << missing.err;
  auto dir = reports::fixtures::stored_run("cli_export_errors", reports::fixtures::small_run());
  auto no_file = test::run_command(bin + " export " + dir.string());
  EXPECT_EQ(no_file.exit_code, 2) << no_file.err;
  auto unwritable = test::run_command(bin + " export " + dir.string() + " --otlp-json " + (dir / "no-such-dir" / "t.json").string());
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_NE(unwritable.err.find("t.json: cannot write"), std::string::npos) << unwritable.err;
}

}  // namespace
}  // namespace okfbench
