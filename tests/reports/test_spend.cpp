#include "reports/spend.hpp"

#include <gtest/gtest.h>

#include "reports/trial_metrics.hpp"
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

}  // namespace
}  // namespace okfbench::reports
