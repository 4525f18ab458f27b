#include "reports/summary.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "reports/judge.hpp"

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

TEST(Summary, AnswerScoreShareCorrectAndCostPerCorrectByHand) {
  Summary s = summarize(fixtures::small_run(), fixtures::pricing());
  const SummaryRow& ctx = s.rows[0];
  const SummaryRow& agent = s.rows[1];
  // Context: facts 1.0 and 0.5; costs $0.0048 + $0.0052 buy one correct answer.
  EXPECT_EQ(ctx.grades.at("facts").graded, 2);
  EXPECT_EQ(ctx.grades.at("facts").correct, 1);
  EXPECT_DOUBLE_EQ(*ctx.grades.at("facts").mean_score, 0.75);
  EXPECT_DOUBLE_EQ(*ctx.grades.at("facts").share_correct, 0.5);
  EXPECT_NEAR(*ctx.cost_per_correct, 0.01, 1e-12);
  // Agent: $0.013682 + $0.017522 (the failed trial is left out) buy two.
  EXPECT_EQ(agent.grades.at("facts").graded, 2);
  EXPECT_NEAR(*agent.cost_per_correct, (0.013682 + 0.017522) / 2, 1e-12);
  EXPECT_NEAR(*agent.equal_quality_ratio, 0.015602 / 0.01, 1e-9);
  EXPECT_FALSE(ctx.equal_quality_ratio.has_value());
  EXPECT_DOUBLE_EQ(*row_metric(agent, "facts"), 1.0);
  EXPECT_DOUBLE_EQ(*row_metric(ctx, "facts_correct"), 0.5);
  EXPECT_DOUBLE_EQ(*row_metric(ctx, "answered"), 1.0);
}

TEST(Summary, JudgeSpendIsKeptApartFromThePathCost) {
  auto records = fixtures::small_run();
  Summary with_judge = summarize(records, fixtures::pricing());
  for (auto& r : records) r.judge_usage.reset();
  Summary without = summarize(records, fixtures::pricing());
  EXPECT_DOUBLE_EQ(*with_judge.rows[0].cost.mean, *without.rows[0].cost.mean);
  EXPECT_DOUBLE_EQ(*with_judge.rows[1].cost_per_correct, *without.rows[1].cost_per_correct);
  // 500 input and 20 output tokens per judged trial at m's $2/$8 per million: $0.00116 each.
  const JudgeTotals& j = with_judge.rows[0].judge;
  EXPECT_EQ(j.trials, 2);
  EXPECT_EQ(j.calls, 2);
  EXPECT_EQ(*j.input_tokens, 1000);
  EXPECT_EQ(*j.output_tokens, 40);
  EXPECT_NEAR(*j.dollars, 0.00232, 1e-12);
  EXPECT_EQ(j.model, "sim");
  EXPECT_EQ(without.rows[0].judge.trials, 0);
  EXPECT_EQ(with_judge.judge_note, kSimJudgeNote);
  EXPECT_TRUE(without.judge_note.empty());
}

TEST(Summary, JudgeAgreementWithFactsPerRow) {
  Summary s = summarize(fixtures::small_run(), fixtures::pricing());
  // Context: agree on q1, not on q2 (facts half, judge correct): share 0.5; p_e = 0.5 * 1 + 0.5 * 0 -> kappa 0.
  EXPECT_EQ(s.rows[0].judge_facts.pairs, 2);
  EXPECT_DOUBLE_EQ(*s.rows[0].judge_facts.share, 0.5);
  EXPECT_DOUBLE_EQ(*s.rows[0].judge_facts.kappa, 0.0);
  // Agent: both correct everywhere: share 1, kappa undefined.
  EXPECT_DOUBLE_EQ(*s.rows[1].judge_facts.share, 1.0);
  EXPECT_FALSE(s.rows[1].judge_facts.kappa.has_value());
}

TEST(Summary, NoCorrectAnswerMeansNoCostPerCorrect) {
  auto records = fixtures::small_run();
  for (auto& r : records) {
    for (auto& g : r.grades) g.correct = false;
  }
  Summary s = summarize(records, fixtures::pricing());
  EXPECT_FALSE(s.rows[0].cost_per_correct.has_value());
  EXPECT_FALSE(s.rows[1].equal_quality_ratio.has_value());
  EXPECT_NE(headline_markdown(s).find("| none correct |"), std::string::npos) << headline_markdown(s);
}

TEST(Summary, QuestionsWithoutFactsAreNotGradedAndNotCounted) {
  auto records = fixtures::small_run();
  records[1].grades[0] = Grade{"facts", GradeStatus::not_graded, std::nullopt, false, "the question has no answer_facts", ""};
  Summary s = summarize(records, fixtures::pricing());
  const GraderStats& facts = s.rows[0].grades.at("facts");
  EXPECT_EQ(facts.graded, 1);
  EXPECT_EQ(facts.not_graded, 1);
  EXPECT_DOUBLE_EQ(*facts.share_correct, 1.0);
  EXPECT_NEAR(*s.rows[0].cost_per_correct, 0.0048, 1e-12);  // only the graded trial's cost
  EXPECT_NE(headline_markdown(s).find("| 1.000 (1 not graded) | 100.0% | $0.0048 |"), std::string::npos)
      << headline_markdown(s);
}

TEST(Summary, PassRateAndSpreadAcrossRepeatsAndFlakyQuestions) {
  std::vector<TrialRecord> records;
  const double q1[] = {1.0, 0.0, 1.0};
  for (int repeat = 0; repeat < 3; ++repeat) {
    TrialRecord a = fixtures::with_grades(fixtures::context_trial("q1", 2000, 1.0, 1.0), q1[repeat], true);
    TrialRecord b = fixtures::with_grades(fixtures::context_trial("q2", 2000, 1.0, 1.0), 1.0, true);
    a.config.repeat = b.config.repeat = repeat;
    records.push_back(a);
    records.push_back(b);
  }
  Summary s = summarize(records, fixtures::pricing());
  ASSERT_EQ(s.rows.size(), 1u);
  const SummaryRow& row = s.rows[0];
  EXPECT_EQ(row.repeats, 3);
  ASSERT_EQ(row.pass_rates.size(), 2u);
  EXPECT_EQ(row.pass_rates[0].question_id, "q1");
  EXPECT_EQ(row.pass_rates[0].correct, 2);
  EXPECT_NEAR(row.pass_rates[0].pass_rate, 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(*row.pass_rates[0].score_sd, std::sqrt(1.0 / 3.0), 1e-12);  // sample sd of {1, 0, 1}
  EXPECT_TRUE(row.pass_rates[0].flaky());
  EXPECT_DOUBLE_EQ(*row.pass_rates[1].score_sd, 0.0);
  EXPECT_FALSE(row.pass_rates[1].flaky());
}

TEST(Summary, GraderMetricsPerTrial) {
  auto records = fixtures::small_run();
  const auto& p = fixtures::pricing();
  EXPECT_DOUBLE_EQ(*trial_metric(records[1], "facts", p), 0.5);
  EXPECT_DOUBLE_EQ(*trial_metric(records[1], "facts_correct", p), 0.0);
  EXPECT_DOUBLE_EQ(*trial_metric(records[1], "judge_correct", p), 1.0);
  EXPECT_FALSE(trial_metric(records[1], "citations", p).has_value());  // not among this trial's graders
  EXPECT_FALSE(trial_metric(records[4], "facts", p).has_value());      // failed
  EXPECT_EQ(metric_info("facts").direction, Direction::higher_is_better);
  EXPECT_EQ(metric_info("facts_correct").direction, Direction::higher_is_better);
  // A schema 1 record: no grades, its stored "answered" measure still answers.
  TrialRecord old = fixtures::agent_trial("q1", true, 1.0);
  old.schema_version = 1;
  old.measures = {{"answered", 1.0}};
  EXPECT_DOUBLE_EQ(*trial_metric(old, "answered", p), 1.0);
  EXPECT_FALSE(trial_metric(old, "answered_correct", p).has_value());
  EXPECT_FALSE(trial_metric(old, "facts", p).has_value());
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
