// End-to-end tests of `okfbench compare`: output, exit codes, JUnit file.
#include <gtest/gtest.h>

#include "reports/record.hpp"
#include "tests/reports/fixtures.hpp"

namespace okfbench {
namespace {

std::vector<reports::TrialRecord> worse_recall() {
  auto records = reports::fixtures::small_run();
  for (auto& r : records) {
    if (r.config.kind == reports::PathKind::agent && r.question_id == "q2") r.evidence_recall = 0.25;
  }
  return records;
}

TEST(CmdCompare, ExitCodeGatesOnThresholds) {
  auto bin = test::okfbench_binary().string();
  auto base = reports::fixtures::stored_run("cmp_base", reports::fixtures::small_run());
  auto cand = reports::fixtures::stored_run("cmp_cand", worse_recall());
  auto junit = base / "compare.junit.xml";
  auto fail = test::run_command(bin + " compare " + base.string() + " " + cand.string() +
                                " --threshold evidence_recall=0.05 --junit " + junit.string());
  EXPECT_EQ(fail.exit_code, 1) << fail.out << fail.err;
  EXPECT_NE(fail.out.find("[FAIL] evidence_recall=0.05"), std::string::npos) << fail.out;
  EXPECT_NE(fail.out.find("| evidence_recall | 2 | 0.7500 | 0.6250 | -0.1250 (-16.7%) |"), std::string::npos)
      << fail.out;
  EXPECT_NE(test::read_file(junit).find("failures=\"1\""), std::string::npos);

  auto hold = test::run_command(bin + " compare " + base.string() + " " + cand.string() +
                                " --threshold evidence_recall=0.2 --threshold input_tokens=1%");
  EXPECT_EQ(hold.exit_code, 0) << hold.out << hold.err;
  EXPECT_NE(hold.out.find("RESULT: all thresholds held"), std::string::npos);

  auto same = test::run_command(bin + " compare " + base.string() + " " + base.string());
  EXPECT_EQ(same.exit_code, 0) << same.err;
}

TEST(CmdCompare, GatesOnAGraderMetric) {
  auto bin = test::okfbench_binary().string();
  auto records = reports::fixtures::small_run();
  auto base = reports::fixtures::stored_run("cmp_facts_base", records);
  for (auto& r : records) {
    if (r.config.kind == reports::PathKind::agent && r.question_id == "q2") {
      r.grades[0] = reports::fixtures::graded("facts", 0.5, false);
    }
  }
  auto cand = reports::fixtures::stored_run("cmp_facts_cand", records);
  auto fail = test::run_command(bin + " compare " + base.string() + " " + cand.string() + " --threshold facts=-0.02");
  EXPECT_EQ(fail.exit_code, 1) << fail.out << fail.err;
  EXPECT_NE(fail.out.find("[FAIL] facts=-0.02: demo / demo-questions / agent"), std::string::npos) << fail.out;
  EXPECT_NE(fail.out.find("| facts | 2 | 1.0000 | 0.7500 | -0.2500 (-25.0%) |"), std::string::npos) << fail.out;
  auto hold = test::run_command(bin + " compare " + base.string() + " " + cand.string() + " --threshold facts=0.3");
  EXPECT_EQ(hold.exit_code, 0) << hold.out << hold.err;
}

TEST(CmdCompare, UsageErrorsExitTwo) {
  auto bin = test::okfbench_binary().string();
  auto base = reports::fixtures::stored_run("cmp_usage", reports::fixtures::small_run());
  auto bad = test::run_command(bin + " compare " + base.string() + " " + base.string() + " --threshold recall");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("METRIC=AMOUNT"), std::string::npos) << bad.err;
  auto unknown = test::run_command(bin + " compare " + base.string() + " " + base.string() + " --threshold nope=1");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("known metrics"), std::string::npos) << unknown.err;
  auto missing = test::run_command(bin + " compare " + base.string() + " /nonexistent");
  EXPECT_EQ(missing.exit_code, 1);
}

TEST(CmdCompare, TwoConfigurationsInsideOneRun) {
  auto bin = test::okfbench_binary().string();
  auto run = reports::fixtures::stored_run("cmp_in_run", reports::fixtures::small_run());
  auto r = test::run_command(bin + " compare " + run.string() + " --baseline one-shot --candidate agent");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("## Verdict\n\n- demo: agent against one-shot (named by --baseline), 2 question(s), 2 pair(s), "
                       "1 unpaired trial(s) left out: input 3.79x"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("### demo / demo-questions / agent surface=okf tools=search+open max_turns=12 model=sim "
                       "cache=openai against context budget=2000 k=5 hops=1 model=sim cache=openai"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("| input_tokens | 2 | 2,100 | 7,961 |"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("share no configuration"), std::string::npos);

  auto unknown = test::run_command(bin + " compare " + run.string() + " --baseline one-shot --candidate agent-x");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--candidate agent-x: no configuration of this run is named so"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("\"one-shot\" (context budget=2000"), std::string::npos) << unknown.err;
  auto half = test::run_command(bin + " compare " + run.string() + " --baseline one-shot");
  EXPECT_EQ(half.exit_code, 2);
  EXPECT_NE(half.err.find("--baseline and --candidate go together"), std::string::npos) << half.err;
  auto same = test::run_command(bin + " compare " + run.string() + " --baseline agent --candidate agent");
  EXPECT_EQ(same.exit_code, 2);
  auto two_dirs = test::run_command(bin + " compare " + run.string() + " " + run.string() + " --baseline one-shot --candidate agent");
  EXPECT_EQ(two_dirs.exit_code, 2);
  auto one_dir = test::run_command(bin + " compare " + run.string());
  EXPECT_EQ(one_dir.exit_code, 2);
  EXPECT_NE(one_dir.err.find("--baseline LABEL --candidate LABEL"), std::string::npos) << one_dir.err;
}

}  // namespace
}  // namespace okfbench
