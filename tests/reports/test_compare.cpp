#include "reports/compare.hpp"

#include <gtest/gtest.h>

#include "reports/writers.hpp"
#include "core/error.hpp"
#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

// The candidate re-sends 20% more on every agent turn and loses half its
// evidence on q2; the context path is unchanged.
std::vector<TrialRecord> candidate_run() {
  auto records = fixtures::small_run();
  for (auto& r : records) {
    if (r.config.kind != PathKind::agent) continue;
    for (auto& t : r.turns) *t.input_tokens = *t.input_tokens * 6 / 5;
    if (r.question_id == "q2") r.evidence_recall = 0.25;
  }
  return records;
}

const MetricComparison& metric(const ConfigComparison& c, const std::string& name) {
  for (const auto& m : c.metrics) {
    if (m.metric == name) return m;
  }
  throw std::runtime_error("no metric " + name);
}

CompareOptions gate() {
  CompareOptions o;
  o.thresholds = {parse_threshold("evidence_recall=0.05"), parse_threshold("input_tokens=10%"),
                  parse_threshold("cost=+50%")};
  return o;
}

TEST(Compare, ParsesThresholds) {
  Threshold a = parse_threshold("evidence_recall=-0.05");
  EXPECT_EQ(a.metric, "evidence_recall");
  EXPECT_DOUBLE_EQ(a.amount, 0.05);
  EXPECT_EQ(a.kind, AmountKind::absolute);
  Threshold b = parse_threshold("input_tokens=10%");
  EXPECT_DOUBLE_EQ(b.amount, 10);
  EXPECT_EQ(b.kind, AmountKind::percent);
  EXPECT_THROW(parse_threshold("input_tokens"), UsageError);
  EXPECT_THROW(parse_threshold("=3"), UsageError);
  EXPECT_THROW(parse_threshold("input_tokens=ten"), UsageError);
  EXPECT_THROW(parse_threshold("input_tokens=1.5x"), UsageError);
}

TEST(Compare, DeltasPairedByQuestion) {
  Comparison c = compare_runs(fixtures::small_run(), candidate_run(), fixtures::pricing(), gate());
  ASSERT_EQ(c.configs.size(), 2u);
  const auto& agent = c.configs[0].label.starts_with("agent") ? c.configs[0] : c.configs[1];
  const auto& ctx = c.configs[0].label.starts_with("agent") ? c.configs[1] : c.configs[0];
  const auto& input = metric(agent, "input_tokens");
  EXPECT_EQ(input.pairs, 2u);  // the failed q3 has no value
  EXPECT_DOUBLE_EQ(input.base_mean, 7961);
  // Each turn 6/5, rounded down per turn: 1345 + 1898 + 2624 + 3685.
  EXPECT_DOUBLE_EQ(input.candidate_mean, 9552);
  EXPECT_DOUBLE_EQ(input.delta, 9552 - 7961);
  EXPECT_DOUBLE_EQ(metric(agent, "evidence_recall").delta, -0.125);
  EXPECT_DOUBLE_EQ(metric(ctx, "input_tokens").delta, 0);
  ASSERT_TRUE(metric(ctx, "input_tokens").p_value.has_value());
  EXPECT_DOUBLE_EQ(*metric(ctx, "input_tokens").p_value, 1.0);
  EXPECT_FALSE(metric(ctx, "input_tokens").significant);
  // The interval contains the delta.
  EXPECT_LE(*input.ci_low, input.delta);
  EXPECT_GE(*input.ci_high, input.delta);
}

TEST(Compare, ThresholdsFollowEachMetricsDirection) {
  Comparison c = compare_runs(fixtures::small_run(), candidate_run(), fixtures::pricing(), gate());
  ASSERT_EQ(c.checks.size(), 6u);  // 3 thresholds x 2 configurations
  int crossed = 0;
  for (const auto& check : c.checks) {
    bool agent = check.label.starts_with("agent");
    bool expect = agent && check.threshold.metric != "cost";  // cost grows ~20%, under 50%
    EXPECT_EQ(check.crossed, expect) << check.message;
    crossed += check.crossed;
  }
  EXPECT_EQ(crossed, 2);
  EXPECT_TRUE(c.any_crossed());
  // Improvements never cross: swap base and candidate.
  Comparison reverse = compare_runs(candidate_run(), fixtures::small_run(), fixtures::pricing(), gate());
  EXPECT_FALSE(reverse.any_crossed());
}

TEST(Compare, MissingConfigurationCrossesAndUnknownMetricIsUsageError) {
  auto candidate = candidate_run();
  std::erase_if(candidate, [](const TrialRecord& r) { return r.config.kind == PathKind::context; });
  CompareOptions o;
  o.thresholds = {parse_threshold("evidence_recall=1")};
  Comparison c = compare_runs(fixtures::small_run(), candidate, fixtures::pricing(), o);
  ASSERT_EQ(c.only_in_base.size(), 1u);
  EXPECT_TRUE(c.any_crossed());
  o.thresholds = {parse_threshold("ndcg_cut_1000=0.1")};
  EXPECT_THROW(compare_runs(fixtures::small_run(), candidate, fixtures::pricing(), o), UsageError);
}

TEST(Compare, RunsWithNothingInCommonAreAnError) {
  CompareOptions o;
  o.thresholds = {parse_threshold("cost=1%")};
  EXPECT_THROW(compare_runs({}, fixtures::small_run(), fixtures::pricing(), o), InputError);
  auto other = fixtures::small_run();
  for (auto& r : other) r.bundle = "elsewhere";
  EXPECT_THROW(compare_runs(fixtures::small_run(), other, fixtures::pricing(), o), InputError);
}

TEST(Compare, GraderMetricsGateAnswers) {
  // The candidate's agent loses the second fact on q2: facts 1.0 -> 0.5 (mean delta -0.25).
  auto candidate = fixtures::small_run();
  for (auto& r : candidate) {
    if (r.config.kind == PathKind::agent && r.question_id == "q2") r.grades[0] = fixtures::graded("facts", 0.5, false);
  }
  CompareOptions o;
  o.thresholds = {parse_threshold("facts=-0.02"), parse_threshold("facts_correct=0.6")};
  Comparison c = compare_runs(fixtures::small_run(), candidate, fixtures::pricing(), o);
  const auto& agent = c.configs[0].label.starts_with("agent") ? c.configs[0] : c.configs[1];
  EXPECT_DOUBLE_EQ(metric(agent, "facts").delta, -0.25);
  EXPECT_DOUBLE_EQ(metric(agent, "facts_correct").delta, -0.5);
  EXPECT_DOUBLE_EQ(metric(agent, "judge").delta, 0.0);
  int crossed = 0;
  for (const auto& check : c.checks) {
    const bool expect = check.label.starts_with("agent") && check.threshold.metric == "facts";
    EXPECT_EQ(check.crossed, expect) << check.message;
    crossed += check.crossed;
  }
  EXPECT_EQ(crossed, 1);  // facts_correct dropped 0.5, within the 0.6 allowed
  o.thresholds = {parse_threshold("citations=0.1")};  // no trial was graded by citations
  EXPECT_THROW(compare_runs(fixtures::small_run(), candidate, fixtures::pricing(), o), UsageError);
}

TEST(Compare, OutputIsGolden) {
  Comparison c = compare_runs(fixtures::small_run(), candidate_run(), fixtures::pricing(), gate());
  fixtures::expect_golden("compare.md", compare_markdown(c));
  fixtures::expect_golden("compare.junit.xml", junit_for_comparison(c));
}

}  // namespace
}  // namespace okfbench::reports
