// The verdict on hand-built runs whose pairs, tables and intervals can be
// worked out by hand.
#include "reports/verdict.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "reports/statistics.hpp"
#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

// A context and an agent trial of question `q`; facts graded correct or not.
std::vector<TrialRecord> pair_of(const std::string& q, bool context_correct, bool agent_correct, double agent_recall = 0.5) {
  TrialRecord c = fixtures::context_trial(q, 2000, 1.0, 1.0);
  TrialRecord a = fixtures::agent_trial(q, true, agent_recall);
  c.grades = {fixtures::graded("facts", context_correct ? 1.0 : 0.0, context_correct)};
  a.grades = {fixtures::graded("facts", agent_correct ? 1.0 : 0.0, agent_correct)};
  return {c, a};
}

std::vector<TrialRecord> run_of(int questions, bool context_correct, bool agent_correct) {
  std::vector<TrialRecord> records;
  for (int i = 1; i <= questions; ++i) {
    for (auto& r : pair_of("q" + std::to_string(i), context_correct, agent_correct)) records.push_back(r);
  }
  return records;
}

std::vector<PairedVerdict> verdicts_of(const std::vector<TrialRecord>& records, const std::string& baseline = "") {
  return run_verdicts(records, summarize(records, fixtures::pricing(), baseline), fixtures::pricing());
}

TEST(McNemar, SmallTablesByHand) {
  EXPECT_DOUBLE_EQ(mcnemar_exact(0, 0).p_value, 1.0);
  EXPECT_DOUBLE_EQ(mcnemar_exact(0, 6).p_value, 2.0 / 64.0);           // 2 * C(6,0) / 2^6
  EXPECT_NEAR(mcnemar_exact(1, 5).p_value, 2.0 * 7.0 / 64.0, 1e-12);  // 2 * (C(6,0) + C(6,1)) / 2^6
  EXPECT_NEAR(mcnemar_exact(5, 1).p_value, 2.0 * 7.0 / 64.0, 1e-12);  // symmetric
  EXPECT_DOUBLE_EQ(mcnemar_exact(3, 3).p_value, 1.0);                  // capped at 1
  EXPECT_NEAR(mcnemar_exact(0, 10).p_value, 2.0 / 1024.0, 1e-15);
  EXPECT_NEAR(mcnemar_exact(2, 400).p_value, 0.0, 1e-100);             // large n does not overflow
  EXPECT_THROW(mcnemar_exact(-1, 2), InputError);
}

TEST(QuestionBootstrap, ConstantRatioGivesAPointThatExcludesOne) {
  const std::vector<QuestionSums> q = {{100, 200, 1}, {200, 400, 1}, {300, 600, 1}};
  const Interval ci = paired_question_bootstrap(q, PairedStatistic::ratio_of_sums);
  EXPECT_DOUBLE_EQ(ci.estimate, 2.0);
  EXPECT_DOUBLE_EQ(ci.low, 2.0);
  EXPECT_DOUBLE_EQ(ci.high, 2.0);
}

TEST(QuestionBootstrap, RatioOfSumsWithNoShiftHoldsOne) {
  // Sums 400 and 400: the ratio is 1, and resampling questions moves it both ways.
  const std::vector<QuestionSums> q = {{100, 50, 1}, {100, 150, 1}, {100, 80, 1}, {100, 120, 1}};
  const Interval ci = paired_question_bootstrap(q, PairedStatistic::ratio_of_sums, {2000, 0.95, 42});
  EXPECT_DOUBLE_EQ(ci.estimate, 1.0);
  EXPECT_LT(ci.low, 1.0);
  EXPECT_GT(ci.high, 1.0);
  EXPECT_GE(ci.low, 0.5);   // no resample can go below the smallest question's ratio
  EXPECT_LE(ci.high, 1.5);  // nor above the largest
  // Seeded: the same interval again.
  const Interval again = paired_question_bootstrap(q, PairedStatistic::ratio_of_sums, {2000, 0.95, 42});
  EXPECT_DOUBLE_EQ(again.low, ci.low);
  EXPECT_DOUBLE_EQ(again.high, ci.high);
}

TEST(QuestionBootstrap, RepeatsOfAQuestionMoveTogether) {
  // Two questions with 3 repeats each: the difference of means weighs pairs, and the resamples are of questions.
  const std::vector<QuestionSums> q = {{3, 3, 3}, {0, 3, 3}};
  const Interval ci = paired_question_bootstrap(q, PairedStatistic::difference_of_means, {2000, 0.95, 42});
  EXPECT_DOUBLE_EQ(ci.estimate, 0.5);
  EXPECT_DOUBLE_EQ(ci.low, 0.0);   // both draws the first question
  EXPECT_DOUBLE_EQ(ci.high, 1.0);  // both the second
}

TEST(QuestionBootstrap, BadInputIsAnError) {
  EXPECT_THROW(paired_question_bootstrap({}, PairedStatistic::ratio_of_sums), InputError);
  const std::vector<QuestionSums> zero = {{0, 5, 1}};
  EXPECT_THROW(paired_question_bootstrap(zero, PairedStatistic::ratio_of_sums), InputError);
  const std::vector<QuestionSums> no_pairs = {{1, 1, 0}};
  EXPECT_THROW(paired_question_bootstrap(no_pairs, PairedStatistic::difference_of_means), InputError);
}

TEST(Verdict, PairsByQuestionAndRepeatAndCountsTheUnpaired) {
  auto records = run_of(3, true, true);
  records.push_back(fixtures::context_trial("q7", 2000, 1.0, 1.0));  // no agent trial of q7
  TrialRecord failed = fixtures::agent_trial("q8", true, 1.0);
  failed.error = "model timeout";
  records.push_back(failed);
  records.push_back(fixtures::context_trial("q8", 2000, 1.0, 1.0));  // its partner failed
  TrialRecord repeat = fixtures::agent_trial("q1", true, 1.0);
  repeat.config.repeat = 1;  // repeat 1 of q1 has no context repeat 1
  records.push_back(repeat);
  const auto v = verdicts_of(records);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].pairs, 3);
  EXPECT_EQ(v[0].questions, 3);
  EXPECT_EQ(v[0].unpaired, 4);  // q7 context, q8 both, q1 repeat 1
  // Every pair: agent 7,961 input tokens against the pack's 2,000.
  ASSERT_TRUE(v[0].input_tokens.ratio);
  EXPECT_NEAR(*v[0].input_tokens.ratio, 7961.0 / 2000.0, 1e-12);
  EXPECT_NEAR(*v[0].input_tokens.low, 7961.0 / 2000.0, 1e-12);
  EXPECT_TRUE(v[0].input_tokens.measurable());
  EXPECT_NE(verdict_line(v[0], {}).find("4 unpaired trial(s) left out"), std::string::npos);
}

TEST(Verdict, SixDiscordantPairsAreMeasurableThreeAreNot) {
  // Agent right, pack wrong on every question: McNemar p = 2 / 2^n.
  const auto six = verdicts_of(run_of(6, false, true));
  ASSERT_EQ(six.size(), 1u);
  EXPECT_EQ(six[0].correct.candidate_only, 6);
  EXPECT_DOUBLE_EQ(*six[0].correct.p_value, 2.0 / 64.0);
  EXPECT_TRUE(six[0].correct.significant);
  EXPECT_DOUBLE_EQ(*six[0].correct.difference, 1.0);
  const std::string six_line = verdict_line(six[0], {});
  EXPECT_NE(six_line.find("correct 100.0% against 0.0%: +100.0 points, higher"), std::string::npos) << six_line;

  const auto three = verdicts_of(run_of(3, false, true));
  EXPECT_DOUBLE_EQ(*three[0].correct.p_value, 0.25);
  EXPECT_FALSE(three[0].correct.significant);
  // Answer score: per-question sign flips over 3 questions, exact: 2 of 8 assignments reach |3|.
  EXPECT_DOUBLE_EQ(*three[0].score.p_value, 0.25);
  const std::string line = verdict_line(three[0], {});
  EXPECT_NE(line.find("correct 100.0% against 0.0%: no measurable difference (McNemar p = 0.2500"), std::string::npos) << line;
  EXPECT_NE(line.find("answer score 1.000 against 0.000: no measurable difference"), std::string::npos) << line;
}

TEST(Verdict, NoMeasurableDifferenceIsNeverBetterOrWorse) {
  for (const auto& records : {run_of(3, false, true), run_of(3, true, false), run_of(8, true, true), run_of(8, false, true)}) {
    for (const auto& v : verdicts_of(records)) {
      const std::string line = verdict_line(v, {});
      EXPECT_EQ(line.find("better"), std::string::npos) << line;
      EXPECT_EQ(line.find("worse"), std::string::npos) << line;
    }
  }
  // Equal answers: no measurable difference, with McNemar p = 1.
  const auto same = verdicts_of(run_of(8, true, true));
  EXPECT_DOUBLE_EQ(*same[0].correct.p_value, 1.0);
  EXPECT_NE(verdict_line(same[0], {}).find("correct 100.0% against 100.0%: no measurable difference"), std::string::npos);
}

TEST(Verdict, ABundleWithoutAnswerFactsSaysSo) {
  auto records = run_of(4, true, true);
  for (auto& r : records) r.grades = {Grade{"facts", GradeStatus::not_graded, std::nullopt, false, "no answer_facts", ""}};
  const auto v = verdicts_of(records);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_FALSE(v[0].answer_facts);
  EXPECT_EQ(v[0].correct.pairs, 0);
  EXPECT_FALSE(v[0].score.difference);
  const std::string line = verdict_line(v[0], {});
  EXPECT_NE(line.find("correct and answer score not graded: no answer facts"), std::string::npos) << line;
  // Recall is still measured: 1.0 against 0.5 on every question.
  EXPECT_DOUBLE_EQ(*v[0].recall.difference, -0.5);
  EXPECT_DOUBLE_EQ(*v[0].recall.low, -0.5);
}

TEST(Verdict, TheDefaultBaselineIsTheCheapestContextConfigurationAndSaysSo) {
  auto records = run_of(3, true, true);
  for (int i = 1; i <= 3; ++i) {
    TrialRecord lean = fixtures::context_trial("q" + std::to_string(i), 1000, 0.5, 0.5);
    lean.config.budget_tokens = 1000;
    lean.grades = {fixtures::graded("facts", 1.0, true)};
    records.push_back(lean);
  }
  const Summary s = summarize(records, fixtures::pricing());
  const auto v = run_verdicts(records, s, fixtures::pricing());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].baseline_label.find("budget=1000"), std::string::npos);
  EXPECT_EQ(v[0].baseline_reason, "cheapest context configuration by input tokens");
  EXPECT_NEAR(*v[0].input_tokens.ratio, 7961.0 / 1000.0, 1e-12);
  // The headline divides by the same row and names it above the table.
  EXPECT_NE(headline_markdown(s).find("Baseline of the × baseline columns: demo: one-shot budget=1000 (cheapest context "
                                      "configuration by input tokens)."),
            std::string::npos)
      << headline_markdown(s);

  // Named by its short name, the other context configuration becomes the baseline.
  const auto named = verdicts_of(records, "one-shot budget=2000");
  ASSERT_EQ(named.size(), 1u);
  EXPECT_NE(named[0].baseline_label.find("budget=2000"), std::string::npos);
  EXPECT_EQ(named[0].baseline_reason, "the spec's baseline");
  EXPECT_NEAR(*named[0].input_tokens.ratio, 7961.0 / 2000.0, 1e-12);
}

TEST(Verdict, CompareInsideOneRunUsesTheSameComputation) {
  const auto records = run_of(6, false, true);
  const Summary s = summarize(records, fixtures::pricing());
  const std::string baseline = resolve_configuration(s, "one-shot", "--baseline");
  const std::string candidate = resolve_configuration(s, "agent", "--candidate");
  const auto between = verdicts_between(records, s, fixtures::pricing(), baseline, candidate);
  const auto default_run = run_verdicts(records, s, fixtures::pricing());
  ASSERT_EQ(between.size(), 1u);
  EXPECT_EQ(between[0].baseline_reason, "named by --baseline");
  EXPECT_DOUBLE_EQ(*between[0].input_tokens.ratio, *default_run[0].input_tokens.ratio);
  EXPECT_DOUBLE_EQ(*between[0].correct.p_value, *default_run[0].correct.p_value);
  try {
    resolve_configuration(s, "agent 9 tools", "--candidate");
    FAIL() << "an unknown name must be refused";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--candidate agent 9 tools"), std::string::npos) << message;
    EXPECT_NE(message.find("\"one-shot\""), std::string::npos) << message;
    EXPECT_NE(message.find("\"agent\""), std::string::npos) << message;
  }
}

TEST(Verdict, MarkdownSectionAndHowToRead) {
  const auto records = run_of(3, false, true);
  const Summary s = summarize(records, fixtures::pricing());
  const std::string md = verdict_markdown(run_verdicts(records, s, fixtures::pricing()), s.names);
  EXPECT_EQ(md.rfind("## Verdict\n\n- demo: agent against one-shot", 0), 0u) << md;
  EXPECT_NE(md.find("paired bootstrap over questions (2,000 resamples, seed 42)"), std::string::npos);
  EXPECT_EQ(verdict_markdown({}, {}), "");
}

}  // namespace
}  // namespace okfbench::reports
