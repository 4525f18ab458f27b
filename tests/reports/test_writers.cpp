#include "reports/writers.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "reports/pareto.hpp"
#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

struct Built {
  std::vector<TrialRecord> records = fixtures::small_run();
  Summary summary = summarize(records, fixtures::pricing());
};

TEST(Writers, MarkdownIsGolden) {
  Built b;
  std::string md = markdown_report(fixtures::manifest(), b.summary, b.records, fixtures::pricing());
  fixtures::expect_golden("report.md", md);
  EXPECT_NE(md.find("git: 0123456789abcdef"), std::string::npos);
  EXPECT_NE(md.find("model timeout after 3 retries"), std::string::npos);
}

TEST(Writers, CsvIsGoldenAndQuotes) {
  Built b;
  fixtures::expect_golden("summary.csv", summary_csv(b.summary));
  fixtures::expect_golden("trials.csv", trials_csv(b.records, fixtures::pricing()));
  std::vector<TrialRecord> odd = {fixtures::context_trial("q,\"1\"", 10, 1, 1)};
  std::string csv = trials_csv(odd, fixtures::pricing());
  EXPECT_NE(csv.find(",\"q,\"\"1\"\"\","), std::string::npos) << csv;
}

TEST(Writers, JsonHasUnknownsAsNullAndIsGolden) {
  Built b;
  std::string text = json_report(fixtures::manifest(), b.summary, run_verdicts(b.records, b.summary, fixtures::pricing()));
  fixtures::expect_golden("report.json", text);
  auto j = nlohmann::json::parse(text);
  ASSERT_EQ(j["verdicts"].size(), 1u);
  EXPECT_EQ(j["verdicts"][0]["pairs"], 2);
  EXPECT_EQ(j["verdicts"][0]["unpaired"], 1);  // the failed agent trial of q3
  EXPECT_EQ(j["verdicts"][0]["correct"]["mcnemar_p"], 1.0);
  EXPECT_EQ(j["verdicts"][0]["baseline_reason"], "cheapest context configuration by input tokens");
  EXPECT_EQ(j["report"], "okfbench-summary");
  EXPECT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][1]["cached_tokens"]["unknown"], 1);
  EXPECT_TRUE(j["rows"][0]["one_shot_ratio"].is_null());
  EXPECT_EQ(j["manifest"]["git_sha"], "0123456789abcdef");
}

TEST(Writers, RepeatsListFlakyQuestions) {
  // q1 is correct in two repeats of three, q2 in all three, q3 in none.
  std::vector<TrialRecord> records;
  const double scores[3][3] = {{1.0, 0.5, 1.0}, {1.0, 1.0, 1.0}, {0.0, 0.5, 0.0}};
  for (int q = 0; q < 3; ++q) {
    for (int repeat = 0; repeat < 3; ++repeat) {
      TrialRecord r = fixtures::with_grades(fixtures::context_trial("q" + std::to_string(q + 1), 2000, 1, 1),
                                            scores[q][repeat], true);
      r.config.repeat = repeat;
      records.push_back(r);
    }
  }
  Summary s = summarize(records, fixtures::pricing());
  const std::string md = markdown_report(fixtures::manifest(), s, records, fixtures::pricing());
  EXPECT_NE(md.find("| demo | context budget=2000 k=5 hops=1 model=sim cache=openai | 3 | 3 | 1 | 1 | 1 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| demo | context budget=2000 k=5 hops=1 model=sim cache=openai | q1 | 2/3 (66.7%) | 0.289 | "
                    "1.00, 0.50, 1.00 |"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("| q2 |"), std::string::npos);  // always correct: not flaky
  EXPECT_EQ(md.find("| q3 |"), std::string::npos);  // never correct: not flaky
  auto j = nlohmann::json::parse(json_report(fixtures::manifest(), s));
  EXPECT_EQ(j["rows"][0]["repeats"], 3);
  EXPECT_EQ(j["rows"][0]["pass_rates"][0]["flaky"], true);
  EXPECT_EQ(j["rows"][0]["pass_rates"][2]["correct"], 0);
  // Without repeats there is no such section.
  EXPECT_EQ(markdown_report(fixtures::manifest(), summarize(fixtures::small_run(), fixtures::pricing()),
                            fixtures::small_run(), fixtures::pricing())
                .find("Pass rate across repeats"),
            std::string::npos);
}

TEST(Writers, JunitForRunFailsConfigurationsWithFailedTrials) {
  Built b;
  std::string xml = junit_for_run(b.summary, b.records);
  fixtures::expect_golden("run.junit.xml", xml);
  EXPECT_NE(xml.find("failures=\"1\""), std::string::npos);
  EXPECT_NE(xml.find("1 of 3 trials failed"), std::string::npos);
}

TEST(Writers, JunitForComparisonHasOneCasePerCheckAndEscapes) {
  Comparison c;
  ThresholdCheck ok{{"evidence_recall", 0.05, AmountKind::absolute, "evidence_recall=0.05"}, "b", "qs", "agent <x>",
                    0.01, false, "held"};
  ThresholdCheck bad = ok;
  bad.threshold = {"input_tokens", 10, AmountKind::percent, "input_tokens=10%"};
  bad.crossed = true;
  bad.message = "grew by 25% & more";
  c.checks = {ok, bad};
  std::string xml = junit_for_comparison(c);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("agent &lt;x&gt;"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"grew by 25% &amp; more\"/>"), std::string::npos) << xml;
}

TEST(Pareto, FrontByHand) {
  // (cost, quality): b dominates a; c is dearer but better; d is dominated by c; e equals b.
  std::vector<CostQuality> pts = {{2, 0.5}, {1, 0.6}, {3, 0.9}, {4, 0.9}, {1, 0.6}};
  auto front = pareto_front(pts);
  ASSERT_EQ(front.size(), 3u);
  EXPECT_EQ(front[0], 1u);
  EXPECT_EQ(front[1], 4u);
  EXPECT_EQ(front[2], 2u);
  EXPECT_TRUE(pareto_front({}).empty());
}

TEST(Writers, CostRecallPointsMarkTheFront) {
  Built b;
  auto points = cost_recall_points(b.summary, "demo", "demo-questions");
  ASSERT_EQ(points.size(), 2u);
  // Same recall (0.75), context is cheaper: only context is on the front.
  EXPECT_EQ(points[0].row->config.kind, PathKind::context);
  EXPECT_TRUE(points[0].on_front);
  EXPECT_FALSE(points[1].on_front);
}

}  // namespace
}  // namespace okfbench::reports
