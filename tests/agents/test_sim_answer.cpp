#include "agents/sim_answer.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/agents/fake_kb.hpp"

namespace okfbench::agents {
namespace {

std::vector<std::string> texts(const std::vector<Statement>& list) {
  std::vector<std::string> out;
  for (const Statement& s : list) out.push_back(s.code ? "CODE:" + s.text : s.text);
  return out;
}

TEST(SimAnswer, StatementsAreSentencesItemsRowsAndCodeBlocks) {
  const std::string markdown =
      "Alert at 30 s. Runbook: [replica lag](/runbooks/replica-lag.md), e.g. `lag` per replica.[^x]\n"
      "It pages the on-call.\n"
      "\n"
      "# Steps\n"
      "\n"
      "1. **Get the plan.** Run the query with `PROFILE`\n"
      "   and compare it.\n"
      "- Check `SHOW INDEXES`.\n"
      "- [Rebuild an index](rebuild-index.md)\n"
      "\n"
      "| Index | Serves |\n"
      "|---|---|\n"
      "| range | `=` on one property |\n"
      "\n"
      "```sql\n"
      "SELECT 1;\n"
      "```\n"
      "[^x]: A footnote\n"
      "[truncated: 10 of 90 tokens shown]\n";
  const std::vector<std::string> expected{"Alert at 30 s.",
                                          "Runbook: replica lag, e.g. `lag` per replica.",
                                          "It pages the on-call.",
                                          "**Get the plan.** Run the query with `PROFILE` and compare it.",
                                          "Check `SHOW INDEXES`.",
                                          "Index | Serves",
                                          "range | `=` on one property",
                                          "CODE:SELECT 1;"};
  EXPECT_EQ(texts(statements(markdown)), expected);
}

TEST(SimAnswer, TermsAreWholeWordsWithPluralsBothWays) {
  const std::vector<std::string> terms = question_terms("How do the replicas log queries in the catalog?");
  EXPECT_EQ(terms, (std::vector<std::string>{"replicas", "log", "queries", "catalog"}));
  EXPECT_EQ(terms_in("A replica writes its logs.", terms), (std::vector<std::string>{"replicas", "log"}));
  EXPECT_TRUE(terms_in("catalogs of blogs and dialogue", {"log"}).empty());  // not inside other words
  EXPECT_EQ(terms_in("the catalogs", {"catalog"}), std::vector<std::string>{"catalog"});
  EXPECT_TRUE(terms_in("querying", {"query"}).empty());  // a final s only, nothing looser
}

TEST(SimAnswer, CitesTheRelevantSourcesAndRestatesWhatCarriesTheTerms) {
  ByteCounter counter;  // one token per byte: the budget below is worked out by hand
  const std::vector<SimSource> read{
      {"metrics/lag", "Replica lag", "Seconds behind the primary.", "Alert at 30 s. Dashboards refresh hourly."},
      {"glossary/page", "Page", "", "Memory pages."},
      {"runbooks/lag", "", "", "Check the replica lag on disk."},
      {"glossary/replica", "Replica", "", "A read copy."}};
  // Terms: replica, lag, alert. metrics/lag shares 3 (the main source), runbooks/lag 2 (at least half
  // of 3: relevant), glossary/replica 1 (less than half, and "replica" is covered: not relevant),
  // glossary/page none. Fixed part: "Sources: [metrics/lag], [runbooks/lag]" (38). The main source's
  // heading line and blank line (30+1) and best statement "- Alert at 30 s." (16+1): 86, exactly the
  // answer below. Its other statements, in order, cost 29+1 and 28+1; runbooks/lag's best statement
  // costs 32+1 plus its heading lines (31+1+1). Each is taken when it lands closer to the target.
  EXPECT_EQ(compose_answer("When does replica lag alert?", read, 90, counter),
            "**Replica lag** [metrics/lag]\n- Alert at 30 s.\n\nSources: [metrics/lag], [runbooks/lag]");
  EXPECT_EQ(compose_answer("When does replica lag alert?", read, 90, counter).size(), 86u);
  EXPECT_EQ(compose_answer("When does replica lag alert?", read, 150, counter),
            "**Replica lag** [metrics/lag]\n- Seconds behind the primary.\n- Alert at 30 s.\n- Dashboards refresh hourly.\n\n"
            "Sources: [metrics/lag], [runbooks/lag]");
  // A larger target restates the rest of the relevant sources, and nothing of the others.
  EXPECT_EQ(compose_answer("When does replica lag alert?", read, 1000, counter),
            "**Replica lag** [metrics/lag]\n- Seconds behind the primary.\n- Alert at 30 s.\n- Dashboards refresh hourly.\n\n"
            "**runbooks/lag** [runbooks/lag]\n- Check the replica lag on disk.\n\n"
            "Sources: [metrics/lag], [runbooks/lag]");
}

TEST(SimAnswer, TheMainSourceIsTheOneWhoseTitleAndDescriptionCarryTheTerms) {
  ByteCounter counter;
  // The table mentions more of the question's terms in its long body; the reference is about them.
  const std::vector<SimSource> read{
      {"tables/posts", "Posts", "Every post.", "Rows carry a license, a date and a score. Licenses change by date."},
      {"references/licenses", "Content licenses", "Which license a post has by date.", "CC BY-SA 4.0 from 2018-05-02."}};
  const std::string answer = compose_answer("Which license did a post have on a date?", read, 40, counter);
  EXPECT_TRUE(answer.starts_with("**Content licenses** [references/licenses]\n- Which license a post has by date.\n"))
      << answer;
  EXPECT_NE(answer.find("Sources: [tables/posts], [references/licenses]"), std::string::npos) << answer;
}

TEST(SimAnswer, NothingRelevantIsSaidPlainlyWithoutCitations) {
  ByteCounter counter;
  EXPECT_EQ(compose_answer("Why is the replica lagging?", {}, 300, counter),
            "I found nothing in the bundle about replica, lagging, so I cannot answer this.");
  EXPECT_EQ(compose_answer("Why is the replica lagging?", {{"glossary/page", "Page", "", "Memory pages."}}, 300, counter),
            "None of what I read (glossary/page) mentions replica, lagging, so I cannot answer this from the bundle.");
}

TEST(SimAnswer, AnswerTargetIsTheMeanWithoutSeedAndANormalDrawWithOne) {
  EXPECT_EQ(answer_target(300, 100, 0, "q"), 300u);
  EXPECT_EQ(answer_target(300, 100, 7, "q"), answer_target(300, 100, 7, "q"));
  EXPECT_EQ(answer_target(300, 0, 7, "q"), 300u);
  double sum = 0, squares = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    const auto t = static_cast<double>(answer_target(300, 100, 1, "question " + std::to_string(i)));
    sum += t;
    squares += t * t;
  }
  const double mean = sum / n;
  const double sd = std::sqrt(squares / n - mean * mean);
  EXPECT_NEAR(mean, 300.0, 6.0);  // 4 standard errors
  EXPECT_NEAR(sd, 100.0, 6.0);
  EXPECT_GE(answer_target(1, 1000, 3, "q"), 1u);
}

}  // namespace
}  // namespace okfbench::agents
