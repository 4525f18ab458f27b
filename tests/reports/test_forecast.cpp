#include "reports/forecast.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reports/html.hpp"
#include "reports/summary.hpp"
#include "reports/writers.hpp"
#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

const std::string kContext = "context budget=2000 k=5 hops=1 model=sim cache=openai";

std::string agent_label() { return fixtures::small_run()[2].config.label(); }

// small_run's two configurations forecast by hand: the context row close to
// what it spent, the agent row 25.6% high and its interval missing it.
RunManifest manifest_with_forecast() {
  RunManifest m = fixtures::manifest();
  RunForecast f;
  f.rows = {{"demo", kContext, "exact (sim)", 2, {4000, 3800, 4400}, {210, 200, 220}, {2, 2, 2}, ForecastInterval{0.0095, 0.009, 0.011}},
            {"demo", agent_label(), "profile p.yaml", 3, {20000, 18000, 22000}, {300, 250, 350}, {9, 8, 10}, std::nullopt}};
  f.total = {"", "total", "", 5, {24000, 22000, 26000}, {510, 450, 570}, {11, 10, 12}, std::nullopt};
  m.forecast = f;
  return m;
}

TEST(ForecastCheck, TheActualSideSumsEveryStoredTrialOfAConfiguration) {
  const auto checks = check_forecast(manifest_with_forecast(), fixtures::small_run(), fixtures::pricing());
  ASSERT_EQ(checks.size(), 3u);
  // Context q1 2000 + q2 2200 input, 100 + 100 output, one call each; $2 / $8 per million.
  EXPECT_EQ(checks[0].actual.trials, 2u);
  EXPECT_EQ(checks[0].actual.input_tokens, 4200);
  EXPECT_EQ(checks[0].actual.output_tokens, 200);
  EXPECT_EQ(checks[0].actual.calls, 2);
  ASSERT_TRUE(checks[0].actual.usd);
  EXPECT_NEAR(*checks[0].actual.usd, (4200 * 2.0 + 200 * 8.0) / 1e6, 1e-12);
  EXPECT_NEAR(*checks[0].input_error(), 4000.0 / 4200 - 1, 1e-12);
  EXPECT_NEAR(*checks[0].usd_error(), 0.0095 / 0.01 - 1, 1e-12);
  EXPECT_TRUE(checks[0].input_within_interval());
  // Agent: two trials of 1121 + 1582 + 2187 + 3071 input, 4 x 50 output, and the failed one with no turns.
  EXPECT_EQ(checks[1].actual.trials, 3u);
  EXPECT_EQ(checks[1].actual.input_tokens, 2 * 7961);
  EXPECT_EQ(checks[1].actual.output_tokens, 400);
  EXPECT_EQ(checks[1].actual.calls, 8);
  EXPECT_NEAR(*checks[1].input_error(), 20000.0 / 15922 - 1, 1e-12);
  EXPECT_FALSE(checks[1].input_within_interval());
  EXPECT_FALSE(checks[1].usd_error());  // no forecast dollars
  EXPECT_EQ(checks[2].forecast.config, "total");
  EXPECT_EQ(checks[2].actual.trials, 5u);
  EXPECT_EQ(checks[2].actual.input_tokens, 4200 + 2 * 7961);
}

TEST(ForecastCheck, NoErrorWhenNotEveryForecastTrialIsStored) {
  std::vector<TrialRecord> records = fixtures::small_run();
  records.erase(records.begin());  // context q1 not stored: 1 of 2
  const auto checks = check_forecast(manifest_with_forecast(), records, fixtures::pricing());
  EXPECT_EQ(checks[0].actual.trials, 1u);
  EXPECT_FALSE(checks[0].input_error());
  EXPECT_EQ(forecast_cells(checks[0])[3], "1 / 2");
  EXPECT_EQ(forecast_cells(checks[0])[6], "n/a");
}

TEST(ForecastCheck, AManifestWithoutAForecastShowsNoSection) {
  const auto records = fixtures::small_run();
  EXPECT_TRUE(check_forecast(fixtures::manifest(), records, fixtures::pricing()).empty());
  const Summary s = summarize(records, fixtures::pricing());
  EXPECT_EQ(markdown_report(fixtures::manifest(), s, records, fixtures::pricing()).find("Forecast against actual"), std::string::npos);
  EXPECT_EQ(html_report(fixtures::manifest(), s, records, nullptr, fixtures::pricing()).find("id=\"forecast\""), std::string::npos);
}

TEST(ForecastCheck, MarkdownAndHtmlShowForecastAgainstActual) {
  const auto records = fixtures::small_run();
  const auto checks = check_forecast(manifest_with_forecast(), records, fixtures::pricing());
  fixtures::expect_golden("forecast.md", forecast_markdown(checks));
  const Summary s = summarize(records, fixtures::pricing());
  const std::string md = markdown_report(manifest_with_forecast(), s, records, fixtures::pricing());
  EXPECT_NE(md.find("| demo | " + kContext + " | exact (sim) | 2 / 2 | 4,000 [3,800..4,400] | 4,200 | -4.8% | yes |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| profile p.yaml | 3 / 3 | 20,000 [18,000..22,000] | 15,922 | +25.6% | no |"), std::string::npos) << md;
  const std::string html = html_report(manifest_with_forecast(), s, records, nullptr, fixtures::pricing());
  EXPECT_NE(html.find("<table id=\"forecast\">"), std::string::npos);
  EXPECT_NE(html.find("<td>20,000 [18,000..22,000]</td><td>15,922</td><td>+25.6%</td><td>no</td>"), std::string::npos);
  EXPECT_NE(html.find("<td title=\"" + kContext + "\">"), std::string::npos);  // short name, full label on hover
}

TEST(ForecastCheck, CompareSaysHowFarEachSidesForecastWas) {
  const auto with = check_forecast(manifest_with_forecast(), fixtures::small_run(), fixtures::pricing());
  EXPECT_EQ(forecast_compare_line({}, with),
            "Forecast against actual (total; error = forecast / actual - 1): candidate input 24,000 forecast, 20,122 actual "
            "(+19.3%), dollars n/a\n\n");
  EXPECT_NE(forecast_compare_line(with, {}).find("- 1): base input 24,000 forecast, 20,122 actual (+19.3%)"), std::string::npos);
  EXPECT_EQ(forecast_compare_line({}, {}), "");
}

TEST(ForecastCheck, MergedShardsAddUpRowByRowAndASameShardCountsOnce) {
  RunForecast a = *manifest_with_forecast().forecast;
  a.shard = "1/2";
  RunForecast b = a;
  b.shard = "2/2";
  b.rows.pop_back();  // shard 2 planned no agent trial
  b.total = b.rows[0];
  b.total.bundle = "", b.total.config = "total", b.total.basis = "";
  const auto merged = merged_forecast({a, b, a});
  ASSERT_TRUE(merged);
  ASSERT_EQ(merged->rows.size(), 2u);
  EXPECT_EQ(merged->rows[1].config, kContext);  // by bundle, then label ("agent ..." first)
  EXPECT_EQ(merged->rows[1].trials, 4u);
  EXPECT_EQ(merged->rows[1].input_tokens, (ForecastInterval{8000, 7600, 8800}));
  ASSERT_TRUE(merged->rows[1].usd);
  EXPECT_NEAR(merged->rows[1].usd->value, 0.019, 1e-12);
  EXPECT_EQ(merged->rows[0].input_tokens, (ForecastInterval{20000, 18000, 22000}));
  EXPECT_EQ(merged->total.trials, 7u);
  EXPECT_EQ(merged->total.input_tokens, (ForecastInterval{28000, 25800, 30400}));
  EXPECT_FALSE(merged->total.usd);  // shard 1's total has no price
  EXPECT_FALSE(merged_forecast({a, std::nullopt}));
}

}  // namespace
}  // namespace okfbench::reports
