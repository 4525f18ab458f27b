#include "reports/tune.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

// Three context budgets on one bundle: recall rises with budget, and so does cost.
std::vector<TrialRecord> budget_sweep() {
  std::vector<TrialRecord> records;
  const std::pair<std::int64_t, double> budgets[] = {{500, 0.5}, {1000, 0.9}, {2000, 1.0}};
  for (auto [budget, recall] : budgets) {
    for (const char* q : {"q1", "q2"}) {
      TrialRecord r = fixtures::context_trial(q, budget, recall, recall);
      r.config.budget_tokens = budget;
      records.push_back(r);
    }
  }
  records.push_back(fixtures::agent_trial("q1", true, 1.0));  // recall 1.0, but the dearest
  return records;
}

TEST(Tune, ParsesTargets) {
  TuneTarget a = parse_tune_target("evidence_recall>=0.9");
  EXPECT_EQ(a.metric, "evidence_recall");
  EXPECT_EQ(a.comparator, Comparator::at_least);
  EXPECT_DOUBLE_EQ(a.value, 0.9);
  EXPECT_EQ(parse_tune_target("input_tokens<=5000").comparator, Comparator::at_most);
  EXPECT_THROW(parse_tune_target("evidence_recall>0.9"), UsageError);
  EXPECT_THROW(parse_tune_target(">=0.9"), UsageError);
  EXPECT_THROW(parse_tune_target("evidence_recall>=high"), UsageError);
}

TEST(Tune, CheapestMeetingTargetAndFront) {
  Summary s = summarize(budget_sweep(), fixtures::pricing());
  TuneResult r = tune(s, parse_tune_target("evidence_recall>=0.9"), "input_tokens");
  ASSERT_EQ(r.groups.size(), 1u);
  const auto& g = r.groups[0];
  ASSERT_EQ(g.candidates.size(), 4u);
  EXPECT_EQ(*g.candidates[0].row->config.budget_tokens, 500);
  EXPECT_FALSE(g.candidates[0].meets);
  ASSERT_TRUE(g.cheapest.has_value());
  EXPECT_EQ(*g.candidates[*g.cheapest].row->config.budget_tokens, 1000);
  // 500, 1000 and 2000 each buy more recall; the agent costs more for the same recall as 2000.
  EXPECT_TRUE(g.candidates[0].on_front);
  EXPECT_TRUE(g.candidates[1].on_front);
  EXPECT_TRUE(g.candidates[2].on_front);
  EXPECT_EQ(g.candidates[3].row->config.kind, PathKind::agent);
  EXPECT_FALSE(g.candidates[3].on_front);
  ASSERT_EQ(r.overall.size(), 3u);
  EXPECT_EQ(r.overall[0].label, g.candidates[1].row->label);
  fixtures::expect_golden("tune.md", tune_markdown(r));
}

TEST(Tune, TargetsAGraderMetric) {
  // The same sweep graded: the 500 budget states half the facts, 1000 and 2000 all of them.
  std::vector<TrialRecord> records;
  for (auto r : budget_sweep()) {
    const double facts = r.config.budget_tokens == 500 ? 0.5 : 1.0;
    records.push_back(fixtures::with_grades(r, facts, facts >= 1.0));
  }
  Summary s = summarize(records, fixtures::pricing());
  TuneResult r = tune(s, parse_tune_target("facts>=0.9"), "cost");
  const auto& g = r.groups[0];
  ASSERT_TRUE(g.cheapest.has_value());
  EXPECT_EQ(*g.candidates[*g.cheapest].row->config.budget_tokens, 1000);
  EXPECT_DOUBLE_EQ(g.candidates[*g.cheapest].target_value, 1.0);
  EXPECT_FALSE(g.candidates[0].meets);  // budget 500: facts 0.5
  TuneResult share = tune(s, parse_tune_target("facts_correct>=1"), "cost");
  EXPECT_EQ(share.overall.size(), 3u);  // 1000, 2000 and the agent
}

TEST(Tune, UnreachableTargetAndBadMetrics) {
  Summary s = summarize(budget_sweep(), fixtures::pricing());
  TuneResult r = tune(s, parse_tune_target("evidence_recall>=1.5"), "cost");
  EXPECT_TRUE(r.overall.empty());
  EXPECT_FALSE(r.groups[0].cheapest.has_value());
  EXPECT_NE(tune_markdown(r).find("No configuration meets"), std::string::npos);
  EXPECT_THROW(tune(s, parse_tune_target("evidence_recall>=0.5"), "evidence_recall"), UsageError);
  EXPECT_THROW(tune(s, parse_tune_target("nothing>=0.5"), "cost"), UsageError);
}

TEST(Tune, ABundleWithoutAnswerFactsCannotMeetAGraderTarget) {
  // demo is graded (every configuration correct); "plain" has no answer facts, so facts grades nothing there.
  std::vector<TrialRecord> records;
  for (auto r : budget_sweep()) {
    records.push_back(fixtures::with_grades(r, 1.0, true));
    TrialRecord plain = r;
    plain.bundle = "plain";
    plain.trial_key += "-plain";
    plain.grades = {Grade{"facts", GradeStatus::not_graded, std::nullopt, false, "the question has no answer_facts", ""}};
    records.push_back(plain);
  }
  Summary s = summarize(records, fixtures::pricing());
  TuneResult r = tune(s, parse_tune_target("facts_correct>=0.4"), "cost");
  ASSERT_EQ(r.groups.size(), 2u);
  const TuneGroup& plain = r.groups[0].bundle == "plain" ? r.groups[0] : r.groups[1];
  EXPECT_TRUE(plain.candidates.empty());
  EXPECT_FALSE(plain.cheapest.has_value());
  ASSERT_EQ(plain.unmeasured.size(), 4u);
  EXPECT_EQ(plain.unmeasured[0].reason, "no answer facts");
  EXPECT_FALSE(r.met_everywhere());
  const std::string md = tune_markdown(r);
  EXPECT_NE(md.find("plain cannot be graded on facts_correct: no answer facts."), std::string::npos) << md;
  EXPECT_NE(md.find("No configuration meets facts_correct>=0.4 on every bundle."), std::string::npos) << md;
  EXPECT_EQ(md.find("that meet facts_correct>=0.4 on every bundle"), std::string::npos) << md;
  // No table is printed for a bundle without candidates.
  const std::string plain_part = md.substr(md.find("### plain"), md.find("No configuration meets facts_correct>=0.4 here") - md.find("### plain"));
  EXPECT_EQ(plain_part.find("| configuration |"), std::string::npos) << plain_part;

  // Where every bundle lacks facts, the target is still a known metric: each bundle says why, nothing is met.
  std::vector<TrialRecord> only_plain;
  for (const auto& rec : records) {
    if (rec.bundle == "plain") only_plain.push_back(rec);
  }
  TuneResult none = tune(summarize(only_plain, fixtures::pricing()), parse_tune_target("facts>=0.4"), "cost");
  EXPECT_FALSE(none.met_everywhere());
  EXPECT_NE(tune_markdown(none).find("plain cannot be graded on facts: no answer facts."), std::string::npos);
}

TEST(Tune, AConfigurationWithoutAPriceIsNotMeasuredOnCost) {
  auto records = budget_sweep();
  for (auto& r : records) {
    if (r.config.kind == PathKind::agent) r.config.model = "unpriced-model";
  }
  TuneResult r = tune(summarize(records, fixtures::pricing()), parse_tune_target("evidence_recall>=0.9"), "cost");
  ASSERT_EQ(r.groups[0].unmeasured.size(), 1u);
  EXPECT_EQ(r.groups[0].unmeasured[0].metric, "cost");
  EXPECT_EQ(r.groups[0].unmeasured[0].reason, "no price for its model");
  for (const auto& c : r.overall) EXPECT_EQ(c.label.find("unpriced-model"), std::string::npos) << c.label;
}

}  // namespace
}  // namespace okfbench::reports
