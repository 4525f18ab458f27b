#include "reports/summary.hpp"

#include <gtest/gtest.h>

#include "reports/format.hpp"
#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

TEST(Summary, SeedExampleNumbersByHand) {
  Summary s = summarize(fixtures::small_run(), fixtures::pricing());
  ASSERT_EQ(s.rows.size(), 2u);
  const SummaryRow& ctx = s.rows[0];
  const SummaryRow& agent = s.rows[1];
  EXPECT_EQ(ctx.config.kind, PathKind::context);
  EXPECT_EQ(agent.config.kind, PathKind::agent);

  EXPECT_EQ(ctx.trials, 2);
  EXPECT_DOUBLE_EQ(*ctx.input_tokens.mean, 2100);
  EXPECT_DOUBLE_EQ(*ctx.evidence_recall.mean, 0.75);
  EXPECT_DOUBLE_EQ(*ctx.resent_share, 0.0);

  // The seed's run: inputs [1121, 1582, 2187, 3071] -> 7961 input, 4890 resent (61%).
  EXPECT_EQ(agent.trials, 3);
  EXPECT_EQ(agent.errors, 1);
  EXPECT_DOUBLE_EQ(*agent.input_tokens.mean, 7961);
  EXPECT_DOUBLE_EQ(*agent.resent_tokens.mean, 4890);
  EXPECT_NEAR(*agent.resent_share, 4890.0 / 7961.0, 1e-12);
  EXPECT_DOUBLE_EQ(*agent.model_calls.mean, 4);
  EXPECT_NEAR(*agent.one_shot_ratio, 7961.0 / 2100.0, 1e-12);
  EXPECT_FALSE(ctx.one_shot_ratio.has_value());
  EXPECT_DOUBLE_EQ(*agent.tool_bytes.mean, 900 + 3000 + 1200);
  EXPECT_DOUBLE_EQ(agent.tool_bytes_by_tool.at("search"), 900);
  EXPECT_DOUBLE_EQ(agent.tool_bytes_by_tool.at("open"), 4200);
  EXPECT_DOUBLE_EQ(*agent.tool_calls.mean, 3);
}

TEST(Summary, UnknownValuesAreCountedNotZeroed) {
  Summary s = summarize(fixtures::small_run(), fixtures::pricing());
  const SummaryRow& agent = s.rows[1];
  // Only the first agent trial reported cache counts; the second did not.
  EXPECT_EQ(agent.cached_tokens.known, 1);
  EXPECT_EQ(agent.cached_tokens.unknown, 1);
  EXPECT_DOUBLE_EQ(*agent.cached_tokens.mean, 2560);
  EXPECT_EQ(format_mean_count(agent.cached_tokens), "2,560 (1 n/a)");
}

TEST(Summary, PerTurnSplitSumsToInput) {
  Summary s = summarize(fixtures::small_run(), fixtures::pricing());
  const auto& turns = s.rows[1].per_turn;
  ASSERT_EQ(turns.size(), 4u);
  const double inputs[] = {1121, 1582, 2187, 3071};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(turns[i].turn, i + 1);
    EXPECT_EQ(turns[i].trials, 2);
    EXPECT_DOUBLE_EQ(turns[i].new_tokens + turns[i].resent_uncached_tokens + turns[i].cached_tokens, inputs[i]);
  }
  // Turn 3 without new_input_tokens: new = 2187 - 1582; cached is the mean of 1024 and unknown-as-0.
  EXPECT_DOUBLE_EQ(turns[2].new_tokens, 605);
  EXPECT_DOUBLE_EQ(turns[2].cached_tokens, 512);
  EXPECT_DOUBLE_EQ(turns[0].resent_uncached_tokens, 0);
}

TEST(Summary, TrialMetricsAndDirections) {
  auto records = fixtures::small_run();
  const auto& p = fixtures::pricing();
  EXPECT_DOUBLE_EQ(*trial_metric(records[2], "input_tokens", p), 7961);
  EXPECT_DOUBLE_EQ(*trial_metric(records[2], "resent_tokens", p), 4890);
  EXPECT_DOUBLE_EQ(*trial_metric(records[0], "ndcg_cut_10", p), 1.0);
  EXPECT_FALSE(trial_metric(records[4], "input_tokens", p).has_value());  // failed trial
  EXPECT_FALSE(trial_metric(records[0], "no_such_measure", p).has_value());
  EXPECT_EQ(metric_info("evidence_recall").direction, Direction::higher_is_better);
  EXPECT_EQ(metric_info("cost").direction, Direction::lower_is_better);
  EXPECT_EQ(metric_info("ndcg_cut_10").direction, Direction::higher_is_better);
}

TEST(Summary, CostUsesAliasAndSaysSo) {
  Summary s = summarize(fixtures::small_run(), fixtures::pricing());
  // Context q1: 2000 in, 100 out at m's 2.0/8.0 per million = 0.0048; q2: 2200/100 -> 0.0052.
  EXPECT_NEAR(*s.rows[0].cost.mean, 0.005, 1e-12);
  EXPECT_EQ(s.priced_as_note, "sim priced as m");
  EXPECT_EQ(format_dollars(0.005), "$0.005");
  EXPECT_EQ(format_dollars(12.345), "$12.35");
  EXPECT_EQ(format_dollars(0.0000328), "$0.0000328");
  EXPECT_EQ(format_dollars(0.015602), "$0.0156");
  EXPECT_EQ(format_dollars(0), "$0");
}

TEST(Summary, HeadlineTableIsGolden) {
  Summary s = summarize(fixtures::small_run(), fixtures::pricing());
  fixtures::expect_golden("summary_headline.md", headline_markdown(s));
}

TEST(Summary, EmptyRunSaysSo) {
  Summary s = summarize({}, fixtures::pricing());
  EXPECT_TRUE(s.rows.empty());
  EXPECT_NE(headline_markdown(s).find("No trials were stored in this run."), std::string::npos);
}

TEST(Format, NumbersReadWell) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(999.6), "1,000");
  EXPECT_EQ(format_count(1234567), "1,234,567");
  EXPECT_EQ(format_count(-1234), "-1,234");
  EXPECT_EQ(format_share(0.6142), "61.4%");
  EXPECT_EQ(format_share(std::nullopt), "n/a");
  EXPECT_EQ(format_ratio(3.79), "3.8x");
}

}  // namespace
}  // namespace okfbench::reports
