#include "reports/spend.hpp"

#include <gtest/gtest.h>

#include "reports/summary.hpp"
#include "reports/trial_metrics.hpp"
#include "reports/writers.hpp"
#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

TrialRecord attributed() {
  TrialRecord r = fixtures::base("q1", PathKind::agent);
  TurnRecord first = fixtures::turn(1000, 0, 50);
  first.attribution = {{"tools", 600}, {"system", 100}, {"question", 297}, {"framing", 3}};
  TurnRecord second = fixtures::turn(1500, 1000, 200);
  second.attribution = {{"tools", 600}, {"system", 100}, {"question", 297}, {"history:assistant", 40},
                        {"new:tool:search", 460}, {"framing", 3}};
  r.turns = {first, second};
  return r;
}

double sum(const std::map<std::string, double>& m) {
  double s = 0;
  for (const auto& [k, v] : m) s += v;
  return s;
}

TEST(Spend, TheOriginsSumToTheTrialsCostAndCachedTokensGoToTheFirstParts) {
  const TrialRecord r = attributed();
  const auto spend = spend_by_origin(r, fixtures::pricing());
  ASSERT_TRUE(spend);
  EXPECT_NEAR(sum(*spend), *trial_cost(r, fixtures::pricing()).dollars, 1e-12);
  // Prices (fixtures): input $2/M, cached $0.5/M, output $8/M. Turn 2 reads its
  // first 1,000 tokens (tools, system, question) from the cache.
  EXPECT_NEAR(spend->at("tools"), (600 * 2.0 + 600 * 0.5) / 1e6, 1e-12);
  EXPECT_NEAR(spend->at("new:tool:search"), 460 * 2.0 / 1e6, 1e-12);
  EXPECT_NEAR(spend->at("output"), 250 * 8.0 / 1e6, 1e-12);
  EXPECT_EQ(attribution_difference(r), 0);
  EXPECT_NEAR(*trial_metric(r, "schema_share", fixtures::pricing()), spend->at("tools") / sum(*spend), 1e-12);
}

TEST(Spend, PartsThatMissTheProvidersCountAreScaledToItAndTheDifferenceIsKept) {
  TrialRecord r = attributed();
  r.turns.resize(1);
  r.turns[0].input_tokens = 1100;  // the provider counted 100 more than okfbench
  const auto spend = spend_by_origin(r, fixtures::pricing());
  ASSERT_TRUE(spend);
  EXPECT_NEAR(sum(*spend), *trial_cost(r, fixtures::pricing()).dollars, 1e-12);
  EXPECT_NEAR(spend->at("tools"), 600 * 1.1 * 2.0 / 1e6, 1e-12);
  EXPECT_EQ(attribution_difference(r), 100);
  r.turns[0].attribution.clear();  // a record before schema 3
  EXPECT_FALSE(spend_by_origin(r, fixtures::pricing()));
  EXPECT_FALSE(attribution_difference(r));
  EXPECT_FALSE(trial_metric(r, "schema_share", fixtures::pricing()));
  EXPECT_EQ(origin_group("pack:runbooks/slow-queries"), "pack");
  EXPECT_EQ(origin_group("history:tool:open"), "history:tool:open");
}

TEST(Spend, TheReportShowsEachConfigurationsShareOfSpendAndTheProviderDifference) {
  TrialRecord a = attributed();
  TrialRecord b = attributed();
  b.question_id = "q2";
  b.trial_key = "a-q2";
  b.turns[0].input_tokens = 1010;  // a provider that counted 10 more on one call
  const Summary s = summarize({a, b}, fixtures::pricing());
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].spend_attributed_trials, 2);
  EXPECT_EQ(s.rows[0].attribution_difference, 10);
  const auto one = *spend_by_origin(a, fixtures::pricing());
  EXPECT_NEAR(s.rows[0].spend_by_origin.at("tools"), 2 * one.at("tools") + 600 * (1010.0 / 1000 - 1) * 2.0 / 1e6, 1e-12);
  const std::string md = markdown_report(fixtures::manifest(), s, {a, b}, fixtures::pricing());
  EXPECT_NE(md.find("## Share of spend by origin"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2 | +10 | output "), std::string::npos) << md;
  EXPECT_EQ(markdown_report(fixtures::manifest(), summarize(fixtures::small_run(), fixtures::pricing()), fixtures::small_run(),
                            fixtures::pricing())
                .find("Share of spend"),
            std::string::npos);  // records without attribution: no table
}

TEST(Spend, SharesAreByGroupBiggestFirstWithTiesInNameOrder) {
  const auto shares = spend_shares({{"tools", 3.0}, {"pack:b", 1.0}, {"pack:a", 1.0}, {"output", 5.0}, {"system", 2.0}, {"framing", 2.0}});
  ASSERT_EQ(shares.size(), 5u);  // the two pack blocks are one group
  std::vector<std::string> groups;
  for (const auto& s : shares) groups.push_back(s.group);
  EXPECT_EQ(groups, (std::vector<std::string>{"output", "tools", "framing", "pack", "system"}));
  EXPECT_DOUBLE_EQ(*shares[0].share, 5.0 / 14);
  EXPECT_DOUBLE_EQ(shares[3].dollars, 2.0);
  const auto nothing = spend_shares({{"tools", 0.0}});
  ASSERT_EQ(nothing.size(), 1u);
  EXPECT_FALSE(nothing[0].share);  // no dollars: no share, not 0% or NaN
}

}  // namespace
}  // namespace okfbench::reports
