// End-to-end tests of `okfbench report` on a stored run written from fixtures.
#include <gtest/gtest.h>

#include "reports/record.hpp"
#include "tests/reports/fixtures.hpp"

namespace okfbench {
namespace {

std::string pricing_flag() {
  // The fixtures' own table, so the figures do not move when datasets/pricing.yaml is updated.
  auto dir = test::fresh_dir("cli_pricing");
  test::write_file(dir / "p.yaml", R"(models:
  - {model: m, input: 2.0, cached_input: 0.5, cache_write: 2.0, output: 8.0, source: test, as_of: 2026-01-01}
aliases:
  sim: m
)");
  return " --pricing " + (dir / "p.yaml").string();
}

TEST(CmdReport, RebuildsEveryFormatFromStoredResults) {
  auto dir = reports::fixtures::stored_run("cli_report", reports::fixtures::small_run());
  auto out = dir / "reports";
  auto r = test::run_command(test::okfbench_binary().string() + " report " + dir.string() + " --out " + out.string() +
                             pricing_flag());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"report.md", "report.html", "report.json", "summary.csv", "trials.csv", "report.junit.xml"}) {
    EXPECT_TRUE(std::filesystem::exists(out / name)) << name;
  }
  // stdout is the headline table, identical to the one in the golden Markdown report.
  EXPECT_NE(r.out.find("| demo | 12 | agent surface=okf tools=search+open max_turns=12 model=sim cache=openai | "
                       "3 (1 failed) | 7,961 | 4.0 | 61.4% |"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(test::read_file(out / "report.md"), test::read_file(test::source_dir() / "tests/golden/report.md"));
}

TEST(CmdReport, SelectedFormatsOnly) {
  auto dir = reports::fixtures::stored_run("cli_report_md", reports::fixtures::small_run());
  auto r = test::run_command(test::okfbench_binary().string() + " report " + dir.string() + " --format md,csv" +
                             pricing_flag());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "report.md"));
  EXPECT_TRUE(std::filesystem::exists(dir / "summary.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir / "report.html"));
}

TEST(CmdReport, ClearErrorsAndExitCodes) {
  auto bin = test::okfbench_binary().string();
  auto missing = test::run_command(bin + " report /nonexistent/run");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("/nonexistent/run"), std::string::npos) << missing.err;

  auto dir = reports::fixtures::stored_run("cli_report_bad", reports::fixtures::small_run());
  test::write_file(dir / "results.jsonl", test::read_file(dir / "results.jsonl") + "{\"schema_version\": 1}\n");
  auto bad = test::run_command(bin + " report " + dir.string() + pricing_flag());
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("results.jsonl:6"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("trial_key"), std::string::npos) << bad.err;

  auto usage = test::run_command(bin + " report " + dir.string() + " --format pdf");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("pdf"), std::string::npos) << usage.err;
}

}  // namespace
}  // namespace okfbench
