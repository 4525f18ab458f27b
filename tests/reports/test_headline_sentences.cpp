#include "reports/headline_sentences.hpp"

#include <gtest/gtest.h>

#include "reports/config_names.hpp"
#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

std::map<std::string, std::string> names_of(const Summary& s) {
  std::vector<PathConfig> configs;
  for (const auto& row : s.rows) configs.push_back(row.config);
  return short_config_names(configs);
}

std::vector<std::string> sentences_of(const std::vector<TrialRecord>& records) {
  Summary s = summarize(records, fixtures::pricing());
  return headline_sentences(s, names_of(s));
}

// Context inputs 2000 and 2200 (mean 2100) against the agent's 7961: 3.8x.
// Costs at $2/M input, $0.5/M cached, $8/M output: context $0.0048 and
// $0.0052 (mean $0.005); agent $0.013682 (2,560 cached) and $0.017522 (cache
// unknown, priced uncached), mean $0.015602: 3.1x. Facts: the agent 2 of 2
// correct, context 1 of 2.
TEST(HeadlineSentences, AgentAgainstOneShotFromTheNumbers) {
  EXPECT_EQ(sentences_of(fixtures::small_run()),
            (std::vector<std::string>{"On 12 concepts (demo), agent reads 3.8x the input tokens of one-shot per question and "
                                      "costs 3.1x ($0.0156 against $0.005), with 100.0% correct against 50.0%."}));
}

TEST(HeadlineSentences, LaterAgentsLeaveOutTheBase) {
  auto records = fixtures::small_run();
  for (auto r : fixtures::small_run()) {
    if (r.config.kind != PathKind::agent || !r.error.empty()) continue;
    r.config.tools = {"browse", "search", "open", "follow"};
    r.turns.pop_back();  // 4890 input tokens: 2.3x the context mean
    r.grades = {fixtures::graded("facts", 0.0, false)};
    records.push_back(r);
  }
  // Rows are in label order: the four-tool agent ("tools=browse+...") first.
  auto sentences = sentences_of(records);
  ASSERT_EQ(sentences.size(), 1u);
  EXPECT_NE(sentences[0].find("agent 4 tools reads 2.3x the input tokens of one-shot per question"), std::string::npos)
      << sentences[0];
  EXPECT_NE(sentences[0].find(", with 0.0% correct against 50.0%; agent search+open reads 3.8x and costs 3.1x ($0.0156), "
                              "with 100.0% correct."),
            std::string::npos)
      << sentences[0];
}

TEST(HeadlineSentences, UnknownCostAndGradesAreLeftOut) {
  auto records = fixtures::small_run();
  for (auto& r : records) {
    r.config.model = "unpriced";
    r.grades.clear();
  }
  EXPECT_EQ(sentences_of(records),
            (std::vector<std::string>{"On 12 concepts (demo), agent reads 3.8x the input tokens of one-shot per question."}));
}

TEST(HeadlineSentences, OnePathOnlySaysSo) {
  std::vector<TrialRecord> records = {fixtures::with_grades(fixtures::context_trial("q1", 2000, 1.0, 1.0), 1.0, true)};
  records[0].concept_count = 10000;
  EXPECT_EQ(sentences_of(records),
            (std::vector<std::string>{"On 10,000 concepts (demo) only one-shot configurations ran (one-shot $0.0048 per "
                                      "question, 100.0% correct), so there is nothing to compare them with."}));
}

}  // namespace
}  // namespace okfbench::reports
