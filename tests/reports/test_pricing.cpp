#include "reports/pricing.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::reports {
namespace {

const char* kTable = R"(models:
  - model: m
    input: 2.0
    cached_input: 0.5
    cache_write: 2.0
    output: 8.0
    source: test
    as_of: 2026-01-01
  - model: m-mini
    input: 1.0
    cached_input: 0.1
    cache_write: 1.25
    output: 4.0
    source: test
    as_of: 2026-01-01
aliases:
  sim: m
)";

PricingTable test_table() {
  auto dir = test::fresh_dir("pricing");
  test::write_file(dir / "p.yaml", kTable);
  return PricingTable::load(dir / "p.yaml");
}

TEST(Pricing, MatchesExactAliasGatewayPrefixAndDatedSnapshot) {
  PricingTable t = test_table();
  ASSERT_NE(t.find("m"), nullptr);
  EXPECT_EQ(t.find("m")->model, "m");
  EXPECT_EQ(t.find("sim")->model, "m");
  EXPECT_EQ(t.find("vendor/m-mini")->model, "m-mini");
  EXPECT_EQ(t.find("m-mini-2026-01-01")->model, "m-mini");  // longest prefix wins over "m"
  EXPECT_EQ(t.find("mx"), nullptr);
  EXPECT_EQ(t.find("other"), nullptr);
  // Specs name provider models "openai:MODEL" / "anthropic:MODEL".
  EXPECT_EQ(t.find("openai:m-mini")->model, "m-mini");
  EXPECT_EQ(t.find("anthropic:m")->model, "m");
}

TEST(Pricing, JudgeCostByHandAndNeverInTheTrialCost) {
  PricingTable t = test_table();
  JudgeUsage u{"openai:m-mini", 3, 1, 1'000'000, 400'000, 100'000, 10'000};
  // The same formula as a turn: 0.5 + 0.04 + 0.125 + 0.04.
  EXPECT_NEAR(*judge_cost(u, t), 0.705, 1e-12);
  u.output_tokens.reset();
  EXPECT_FALSE(judge_cost(u, t).has_value());
  EXPECT_FALSE(judge_cost(JudgeUsage{"unpriced", 1, 0, 10, 0, 0, 1}, t).has_value());
  TrialRecord r;
  r.config.model = "m-mini";
  TurnRecord turn;
  turn.input_tokens = 1000;
  turn.cached_tokens = 0;
  turn.cache_write_tokens = 0;
  turn.output_tokens = 0;
  r.turns = {turn};
  const double before = *trial_cost(r, t).dollars;
  r.judge_usage = JudgeUsage{"m-mini", 1, 0, 1'000'000, 0, 0, 0};
  EXPECT_DOUBLE_EQ(*trial_cost(r, t).dollars, before);
}

TEST(Pricing, ProviderPrefixesAndDatesResolveOtherSuffixesDoNot) {
  PricingTable t = test_table();
  EXPECT_EQ(t.find("openai:m")->model, "m");
  EXPECT_EQ(t.find("anthropic:m-mini")->model, "m-mini");
  EXPECT_EQ(t.find("openai:gateway/vendor/m-mini-20260101")->model, "m-mini");
  EXPECT_EQ(t.find("m-2026-01-01")->model, "m");
  EXPECT_EQ(t.find("m-mini-audio-preview"), nullptr);  // not a date: not priced as m-mini or m
  EXPECT_EQ(t.find("m-20260101x"), nullptr);
  EXPECT_EQ(t.find("m-2026-1-01"), nullptr);
  EXPECT_EQ(t.find("replay:m"), nullptr);  // only provider prefixes are dropped
  EXPECT_EQ(provider_model_id("openai:a/b/c"), "c");
}

TEST(Pricing, ExactPricesComeFirstAndRecordedPricesSurviveATableChange) {
  PricingTable t = test_table();
  ModelPrice own{"openai:m", 9.0, 9.0, 9.0, 90.0, "spec", ""};
  t.set_price("openai:m", own);
  EXPECT_EQ(*t.find("openai:m"), own);
  EXPECT_EQ(t.find("m")->model, "m");  // only that exact name
  own.input = 7.0;
  t.set_price("openai:m", own);
  EXPECT_EQ(t.find("openai:m")->input, 7.0);

  const std::vector<PricedModel> recorded = {{"label-x", *test_table().find("m")}, {"m-mini", *test_table().find("m-mini")}};
  const PricingTable stored = with_recorded_prices(test_table(), recorded);
  EXPECT_EQ(stored.find("label-x")->input, 2.0);  // a label that matches no row is priced as recorded
  EXPECT_TRUE(repriced_models(stored, recorded).empty());
  PricingTable changed = test_table();
  changed.set_price("m-mini", {"m-mini", 5.0, 0.1, 1.25, 4.0, "new", ""});
  EXPECT_EQ(repriced_models(changed, recorded), (std::vector<std::string>{"label-x", "m-mini"}));
}

TEST(Pricing, ShippedTablePricesTheReadmesModelNames) {
  PricingTable t = PricingTable::load(test::source_dir() / "datasets" / "pricing.yaml");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"openai:gpt-4o-mini", "gpt-4o-mini"},
      {"openai:gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
      {"anthropic:claude-sonnet-4-5", "claude-sonnet-4-5"},
      {"anthropic:claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
      {"openai:anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"},
      {"anthropic:claude-sonnet-4-0", "claude-sonnet-4"},
  };
  for (const auto& [name, row] : cases) {
    ASSERT_NE(t.find(name), nullptr) << name;
    EXPECT_EQ(t.find(name)->model, row) << name;
  }
  EXPECT_EQ(t.find("openai:gpt-4o-audio-preview"), nullptr);
}

TEST(Pricing, NonFinitePricesAreRefused) {
  auto dir = test::fresh_dir("pricing_nan");
  test::write_file(dir / "p.yaml",
                   "models:\n  - {model: x, input: .nan, cached_input: 0, cache_write: 0, output: 1, source: s, as_of: d}\n");
  EXPECT_THROW(PricingTable::load(dir / "p.yaml"), InputError);
  test::write_file(dir / "q.yaml",
                   "models:\n  - {model: x, input: 1, cached_input: 0, cache_write: 0, output: .inf, source: s, as_of: d}\n");
  EXPECT_THROW(PricingTable::load(dir / "q.yaml"), InputError);
}

TEST(Pricing, TrialCostByHand) {
  PricingTable t = test_table();
  TrialRecord r;
  r.config.model = "m-mini";
  TurnRecord turn;
  turn.input_tokens = 1'000'000;
  turn.cached_tokens = 400'000;
  turn.cache_write_tokens = 100'000;
  turn.output_tokens = 10'000;
  r.turns = {turn};
  // 500k uncached * 1.0 + 400k * 0.1 + 100k * 1.25 + 10k * 4.0 = 0.5 + 0.04 + 0.125 + 0.04
  TrialCost c = trial_cost(r, t);
  ASSERT_TRUE(c.dollars.has_value());
  EXPECT_NEAR(*c.dollars, 0.705, 1e-12);
  EXPECT_EQ(c.turns_cache_unknown, 0);
}

TEST(Pricing, UnknownCountsNeverBecomeZeroCost) {
  PricingTable t = test_table();
  TrialRecord r;
  r.config.model = "m";
  TurnRecord turn;
  turn.input_tokens = 1000;
  turn.output_tokens = 0;  // cached unknown: priced uncached, and counted
  r.turns = {turn};
  TrialCost c = trial_cost(r, t);
  ASSERT_TRUE(c.dollars.has_value());
  EXPECT_NEAR(*c.dollars, 0.002, 1e-12);
  EXPECT_EQ(c.turns_cache_unknown, 1);
  r.turns[0].output_tokens.reset();
  EXPECT_FALSE(trial_cost(r, t).dollars.has_value());
  r.config.model = "unpriced";
  r.turns[0].output_tokens = 5;
  EXPECT_FALSE(trial_cost(r, t).dollars.has_value());
}

TEST(Pricing, ContextTrialWithoutModelCallIsPricedAsItsPack) {
  PricingTable t = test_table();
  TrialRecord r;
  r.config.model = "m";
  r.context_tokens = 2000;
  EXPECT_NEAR(*trial_cost(r, t).dollars, 0.004, 1e-12);
  r.error = "HTTP 503";  // the call that would have sent the pack failed: nothing was billed
  EXPECT_EQ(*trial_cost(r, t).dollars, 0.0);
}

TEST(Pricing, BadTableNamesFileLineAndField) {
  auto dir = test::fresh_dir("pricing_bad");
  test::write_file(dir / "p.yaml", "models:\n  - model: x\n    input: 1\n    output: cheap\n");
  try {
    PricingTable::load(dir / "p.yaml");
    FAIL();
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("p.yaml:2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cached_input"), std::string::npos) << msg;
  }
  test::write_file(dir / "q.yaml", std::string(kTable) + "  x: nope\n");
  EXPECT_THROW(PricingTable::load(dir / "q.yaml"), InputError);
  EXPECT_THROW(PricingTable::load(dir / "missing.yaml"), InputError);
}

TEST(Pricing, PricesAreFiniteAndNotNegative) {
  // yaml-cpp reads .nan and .inf as numbers: a NaN price made every cost NaN and a cap never fire.
  auto dir = test::fresh_dir("pricing_range");
  for (const char* value : {".nan", ".inf", "-.inf", "-0.5", "1e999", "0x10", "1000001", "cheap"}) {
    test::write_file(dir / "p.yaml", fmt::format("models:\n  - model: x\n    input: 1\n    cached_input: 0.5\n"
                                                 "    cache_write: 1\n    output: {}\n    source: s\n    as_of: d\n",
                                                 value));
    try {
      PricingTable::load(dir / "p.yaml");
      ADD_FAILURE() << value;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), fmt::format("{}:6: price 'output' of 'x': expected a number from 0 to 1000000, "
                                                   "got \"{}\"", (dir / "p.yaml").string(), value));
    }
  }
}

TEST(Pricing, RepeatedKeysAreErrors) {
  auto dir = test::fresh_dir("pricing_repeat");
  test::write_file(dir / "p.yaml", "models:\n  - model: x\n    input: 1\n    cached_input: 0.5\n    cache_write: 1\n"
                                   "    output: 4\n    source: s\n    as_of: d\n    input: 0.1\n");
  try {
    PricingTable::load(dir / "p.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "p.yaml").string() + ":9: models[0].input: duplicate key (first at line 3); "
                                                                 "YAML keys must be unique, keep one");
  }
}

TEST(Pricing, ShippedTableLoadsAndHasDatedSourcedRows) {
  PricingTable t = PricingTable::load(test::source_dir() / "datasets" / "pricing.yaml");
  ASSERT_GE(t.rows().size(), 5u);
  for (const auto& row : t.rows()) {
    EXPECT_FALSE(row.source.empty()) << row.model;
    EXPECT_EQ(row.as_of.size(), 10u) << row.model;
    EXPECT_LE(row.cached_input, row.input) << row.model;
  }
  ASSERT_NE(t.find("sim"), nullptr);
  ASSERT_NE(t.find("gpt-4.1-mini-2025-04-14"), nullptr);
  EXPECT_EQ(t.find("gpt-4.1-mini-2025-04-14")->model, "gpt-4.1-mini");
}

}  // namespace
}  // namespace okfbench::reports
