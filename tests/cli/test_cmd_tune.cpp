// End-to-end test of `okfbench tune` over a small sweep on the demo bundle with sim.
#include <gtest/gtest.h>

#include "tests/support/test_support.hpp"

namespace okfbench {
namespace {

TEST(CmdTune, RunsThenReusesTheSweep) {
  auto dir = test::fresh_dir("cli_tune");
  auto src = test::source_dir();
  test::write_file(dir / "sweep.yaml", "name: tune-test\nseed: 1\nbundles:\n  - path: " +
                                           (src / "datasets/bundles/demo").string() + "\n    name: demo\n    questions: " +
                                           (src / "datasets/experiments/questions/demo.yaml").string() +
                                           "\npaths:\n  context:\n    budget_tokens: [500, 2000]\n    k: [3]\n"
                                           "    hops: [0, 1]\nmodels: [sim]\ncache_models: [openai]\n");
  std::string cmd = test::okfbench_binary().string() + " tune " + (dir / "sweep.yaml").string() +
                    " --target 'evidence_recall>=0.9' --minimize input_tokens --quiet --out " + (dir / "out").string();
  auto first = test::run_command(cmd);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("(cheapest)"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("Configurations that meet evidence_recall>=0.9 on every bundle"), std::string::npos);
  EXPECT_NE(first.err.find("0 reused"), std::string::npos) << first.err;
  auto again = test::run_command(cmd);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("0 run now"), std::string::npos) << again.err;
  EXPECT_EQ(again.out, first.out);

  auto none = test::run_command(test::okfbench_binary().string() + " tune " + (dir / "sweep.yaml").string() +
                                " --target 'evidence_recall>=1.1' --quiet --out " + (dir / "out").string());
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.out.find("No configuration meets"), std::string::npos);
}

TEST(CmdTune, TargetsAGraderMetric) {
  auto dir = test::fresh_dir("cli_tune_facts");
  // Generated questions carry answer_facts, so the facts grader scores every trial.
  test::write_file(dir / "sweep.yaml", "name: tune-facts\nseed: 1\ncache_dir: " + (dir / "cache").string() +
                                           "\nbundles:\n  - generate: {concepts: 30, questions: 4}\n"
                                           "paths:\n  context:\n    budget_tokens: [300, 2000]\nmodels: [sim]\n");
  auto r = test::run_command(test::okfbench_binary().string() + " tune " + (dir / "sweep.yaml").string() +
                             " --target 'facts>=0' --quiet --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("| configuration | cost | facts | meets facts>=0 | Pareto front |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Configurations that meet facts>=0 on every bundle"), std::string::npos) << r.out;
  auto none = test::run_command(test::okfbench_binary().string() + " tune " + (dir / "sweep.yaml").string() +
                                " --target 'facts>=1.01' --quiet --out " + (dir / "out").string());
  EXPECT_EQ(none.exit_code, 1) << none.out << none.err;
}

}  // namespace
}  // namespace okfbench
