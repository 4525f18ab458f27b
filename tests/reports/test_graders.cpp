// The graders on hand-written answers: exact scores, the facts rule's edges
// (formatting, near misses, token boundaries, plurals, Unicode), citations,
// answered, citation extraction, trial endings and judge/facts agreement.
#include "reports/graders.hpp"

#include <gtest/gtest.h>

#include <set>

#include "tests/reports/fixtures.hpp"

namespace okfbench::reports {
namespace {

using Tokens = std::vector<std::string>;

bool matches(const std::string& fact, const std::string& answer) {
  return tokens_match(fact_tokens(fact), fact_tokens(answer));
}

Grade grade_with(std::string_view grader, const GradeInput& in) {
  const Grader* g = find_builtin_grader(grader);
  EXPECT_NE(g, nullptr) << grader;
  return g->grade(in).grade;
}

GradeInput facts_input(std::vector<std::string> facts, std::string answer) {
  GradeInput in;
  in.answer_facts = std::move(facts);
  in.answer = std::move(answer);
  return in;
}

TEST(FactTokens, NormaliseCaseWidthPunctuationAndDigitGroups) {
  EXPECT_EQ(fact_tokens("The P95-Latency (ms), 1,000 req/s!"), (Tokens{"the", "p95", "latency", "ms", "1000", "req", "s"}));
  EXPECT_EQ(fact_tokens("12,345,678 rows"), (Tokens{"12345678", "rows"}));
  // Not digit groups: one or two digits after the comma, four digits, or a list.
  EXPECT_EQ(fact_tokens("1,5"), (Tokens{"1", "5"}));
  EXPECT_EQ(fact_tokens("1,2,3"), (Tokens{"1", "2", "3"}));
  EXPECT_EQ(fact_tokens("1,0000"), (Tokens{"1", "0000"}));
  EXPECT_EQ(fact_tokens("a,000"), (Tokens{"a", "000"}));
  // NFKC with case folding: full-width letters and digits, ligatures, sharp s.
  EXPECT_EQ(fact_tokens("ＡＰＩ １２３"), (Tokens{"api", "123"}));
  EXPECT_EQ(fact_tokens("ﬁle"), (Tokens{"file"}));
  EXPECT_EQ(fact_tokens("STRASSE Straße"), (Tokens{"strasse", "strasse"}));
  EXPECT_EQ(fact_tokens("１，０００"), (Tokens{"1000"}));  // full-width comma and digits
  EXPECT_EQ(fact_tokens("CAFÉ café"), (Tokens{"café", "café"}));
  // Invalid UTF-8 is a separator; no letters or digits means no tokens.
  EXPECT_EQ(fact_tokens("ab\xff" "cd"), (Tokens{"ab", "cd"}));
  EXPECT_TRUE(fact_tokens("--- ... !!").empty());
  EXPECT_TRUE(fact_tokens("").empty());
}

TEST(FactsRule, FormattingVariantsMatch) {
  EXPECT_TRUE(matches("p95 latency", "Watch the P95-latency."));
  EXPECT_TRUE(matches("CALL db.checkpoint()", "run `call DB.CHECKPOINT()` first"));
  EXPECT_TRUE(matches("1,000 requests", "about 1000 requests per second"));
  EXPECT_TRUE(matches("1000 requests", "about 1,000 requests per second"));
  EXPECT_TRUE(matches("wal/", "files in WAL"));
  EXPECT_TRUE(matches("slow query log", "open the slow\nquery -- log"));
}

TEST(FactsRule, NearMissesDoNotMatch) {
  EXPECT_FALSE(matches("p95 latency", "p99 latency"));
  EXPECT_FALSE(matches("slow query log", "slow log of each query"));  // not contiguous
  EXPECT_FALSE(matches("slow query log", "slow query"));              // a token missing
  EXPECT_FALSE(matches("cafe", "café"));                              // accents are kept
  EXPECT_FALSE(matches("12 ms", "12ms"));                             // one token against two
  EXPECT_FALSE(matches("1,000", "1 000"));
}

TEST(FactsRule, WholeTokenBoundaries) {
  EXPECT_FALSE(matches("12", "121 seconds"));
  EXPECT_FALSE(matches("12", "a 312 b"));
  EXPECT_FALSE(matches("lag", "replicalag"));
  EXPECT_TRUE(matches("12", "after 12 seconds"));
  EXPECT_TRUE(matches("12", "(12)"));
}

TEST(FactsRule, AFinalSAddedOrRemovedAndNothingLooser) {
  EXPECT_TRUE(matches("runbook", "see the runbooks"));
  EXPECT_TRUE(matches("runbooks", "see the runbook"));
  EXPECT_TRUE(matches("replica lag", "replicas lags"));
  EXPECT_FALSE(matches("query", "queries"));
  EXPECT_FALSE(matches("index", "indexes"));
  EXPECT_FALSE(matches("index", "indices"));
  EXPECT_FALSE(matches("run", "runss"));
}

TEST(FactsRule, ACitationIsPartOfTheAnswerText) {
  // The rule reads the whole answer: a cited id's words are tokens like any other.
  EXPECT_TRUE(matches("replica lag", "Nothing found [runbooks/replica-lag]."));
}

TEST(FactsGrader, ScoreIsTheShareOfFactsStated) {
  Grade g = grade_with("facts", facts_input({"replica lag", "30 seconds", "route dashboards to the primary"},
                                            "Check Replica-Lag; 30 seconds is the limit."));
  EXPECT_EQ(g.status, GradeStatus::graded);
  EXPECT_DOUBLE_EQ(*g.score, 2.0 / 3.0);
  EXPECT_FALSE(g.correct);
  EXPECT_EQ(g.detail, "2 of 3 fact(s) stated; missing: \"route dashboards to the primary\"");

  Grade all = grade_with("facts", facts_input({"30 seconds", "replica lag"}, "replica lag above 30 seconds"));
  EXPECT_DOUBLE_EQ(*all.score, 1.0);
  EXPECT_TRUE(all.correct);
  EXPECT_EQ(all.detail, "all 2 fact(s) stated");
}

TEST(FactsGrader, NoFactsIsNotGradedAndNeverCorrect) {
  Grade g = grade_with("facts", facts_input({}, "anything at all"));
  EXPECT_EQ(g.status, GradeStatus::not_graded);
  EXPECT_FALSE(g.score.has_value());
  EXPECT_FALSE(g.correct);
  EXPECT_EQ(g.detail, "the question has no answer_facts");
}

TEST(FactsGrader, AFactWithoutLettersOrDigitsNeverMatches) {
  Grade g = grade_with("facts", facts_input({"...", "lag"}, "lag ..."));
  EXPECT_DOUBLE_EQ(*g.score, 0.5);
  EXPECT_EQ(g.detail, "1 of 2 fact(s) stated; missing: \"...\"");
}

GradeInput cited(std::vector<std::string> ids) {
  GradeInput in;
  in.relevant = {{"a", 2}, {"b", 1}, {"c", 0}};
  in.citations = std::move(ids);
  return in;
}

TEST(CitationsGrader, F1OfPrecisionAndRecall) {
  Grade half = grade_with("citations", cited({"a"}));  // p 1, r 1/2
  EXPECT_NEAR(*half.score, 2.0 / 3.0, 1e-12);
  EXPECT_TRUE(half.correct);
  EXPECT_EQ(half.detail, "cites 1 of 2 relevant (a); precision 1.000, recall 0.500");

  Grade noisy = grade_with("citations", cited({"a", "x", "c", "a"}));  // p 1/3 (c is judged not relevant), r 1/2
  EXPECT_NEAR(*noisy.score, 0.4, 1e-12);
  EXPECT_FALSE(noisy.correct);
  EXPECT_EQ(noisy.detail, "cites 1 of 2 relevant (a); precision 0.333, recall 0.500; not relevant: x, c");

  EXPECT_DOUBLE_EQ(*grade_with("citations", cited({"b", "a"})).score, 1.0);
  Grade none = grade_with("citations", cited({}));
  EXPECT_DOUBLE_EQ(*none.score, 0.0);
  EXPECT_EQ(none.detail, "cites nothing; relevant: a, b");
  EXPECT_DOUBLE_EQ(*grade_with("citations", cited({"c"})).score, 0.0);

  GradeInput unjudged;
  unjudged.relevant = {{"c", 0}};
  EXPECT_EQ(grade_with("citations", unjudged).status, GradeStatus::not_graded);
}

TEST(AnsweredGrader, OneOnlyForAnAnswer) {
  GradeInput in;
  in.end = TrialEnd::answered;
  EXPECT_DOUBLE_EQ(*grade_with("answered", in).score, 1.0);
  EXPECT_TRUE(grade_with("answered", in).correct);
  in.end = TrialEnd::no_answer;
  EXPECT_DOUBLE_EQ(*grade_with("answered", in).score, 0.0);
  in.end = TrialEnd::error;
  EXPECT_FALSE(grade_with("answered", in).correct);
}

TEST(Graders, RegistryOrderAndGradeAll) {
  ASSERT_EQ(builtin_graders().size(), 3u);
  EXPECT_EQ(builtin_graders()[0].name, "facts");
  EXPECT_EQ(builtin_graders()[1].name, "citations");
  EXPECT_EQ(builtin_graders()[2].name, "answered");
  EXPECT_EQ(find_builtin_grader("judge"), nullptr);  // the judge needs a model: make_judge_grader
  GradeInput in = cited({"a"});
  in.answer_facts = {"lag"};
  in.answer = "no";
  Grading g = grade_all(builtin_graders(), in);
  ASSERT_EQ(g.grades.size(), 3u);
  EXPECT_EQ(g.grades[0].grader, "facts");
  EXPECT_DOUBLE_EQ(*g.grades[0].score, 0.0);
  EXPECT_EQ(g.grades[2].grader, "answered");
  EXPECT_FALSE(g.judge_usage.has_value());
}

TEST(CitedIds, BracketedIdsOnceInOrder) {
  auto all = [](const std::string&) { return true; };
  EXPECT_EQ(cited_ids("See [a/b] and [/c.md], not [] or [x\ny], then [a/b] again [[d]]", all),
            (Tokens{"a/b", "c", "d"}));
  auto only_c = [](const std::string& id) { return id == "c"; };
  EXPECT_EQ(cited_ids("[a/b] [c] [c.md]", only_c), (Tokens{"c"}));
  EXPECT_TRUE(cited_ids("no brackets [unclosed", all).empty());
}

TEST(CitedIds, VaultIdsWithSpacesCommasAndEscapes) {
  const std::set<std::string> ids = {"Meeting Notes", "Projects/Q1, Q2 plan", "a", "b", "Café menu"};
  auto known = [&](const std::string& id) { return ids.count(id) > 0; };
  EXPECT_EQ(cited_ids("As [Meeting Notes] and [ /Projects/Q1, Q2 plan.md ] say", known),
            (Tokens{"Meeting Notes", "Projects/Q1, Q2 plan"}));
  EXPECT_EQ(cited_ids("[a, b] [b; a] [not a concept]", known), (Tokens{"a", "b"}));
  EXPECT_EQ(cited_ids("[Meeting%20Notes] [Caf%C3%A9%20menu]", known), (Tokens{"Meeting Notes", "Café menu"}));
  // The citations grader scores such ids like any other.
  GradeInput in;
  in.relevant = {{"Meeting Notes", 1}};
  in.citations = cited_ids("See [Meeting Notes].", known);
  Grading g = grade_all(builtin_graders(), in);
  const Grade* citations = nullptr;
  for (const Grade& grade : g.grades) citations = grade.grader == "citations" ? &grade : citations;
  ASSERT_NE(citations, nullptr);
  EXPECT_DOUBLE_EQ(*citations->score, 1.0);
}

TEST(NuggetScores, HandComputedCases) {
  using I = NuggetImportance;
  using L = NuggetLabel;
  // 3 vital (support, partial, not), 2 okay (support, partial).
  NuggetScores n = nugget_scores({I::vital, I::vital, I::vital, I::okay, I::okay},
                                 {L::support, L::partial_support, L::not_support, L::support, L::partial_support});
  EXPECT_DOUBLE_EQ(n.strict_vital, 1.0 / 3);   // 1 of 3 vital supported
  EXPECT_DOUBLE_EQ(n.strict_all, 2.0 / 5);     // 2 of 5 supported
  EXPECT_DOUBLE_EQ(n.vital, 1.5 / 3);          // (1 + 0.5 + 0) / 3
  EXPECT_DOUBLE_EQ(n.all, 3.0 / 5);            // (1 + 0.5 + 0 + 1 + 0.5) / 5
  // No vital nugget: the vital scores are 0, not undefined.
  NuggetScores okay_only = nugget_scores({I::okay}, {L::support});
  EXPECT_DOUBLE_EQ(okay_only.vital, 0.0);
  EXPECT_DOUBLE_EQ(okay_only.strict_vital, 0.0);
  EXPECT_DOUBLE_EQ(okay_only.all, 1.0);
  // No importance given: every fact is vital.
  NuggetScores plain = nugget_scores({}, {L::partial_support, L::not_support});
  EXPECT_DOUBLE_EQ(plain.vital, 0.25);
  EXPECT_DOUBLE_EQ(plain.strict_all, 0.0);
  EXPECT_EQ(nugget_scores({}, {}), NuggetScores{});
}

TEST(TrialEnd, FromTheRecord) {
  TrialRecord agent = fixtures::agent_trial("q1", true, 1.0);
  EXPECT_EQ(trial_end(agent), TrialEnd::answered);
  agent.turns.back().tool_calls.push_back({"open", "{}", 10, "", false, std::nullopt});  // stopped while asking for tools
  EXPECT_EQ(trial_end(agent), TrialEnd::no_answer);
  TrialRecord context = fixtures::context_trial("q1", 2000, 1.0, 1.0);
  EXPECT_EQ(trial_end(context), TrialEnd::no_answer);  // the fixture's context trial has no answer text
  context.answer = "From the pack: ...";
  EXPECT_EQ(trial_end(context), TrialEnd::answered);
  context.error = "model timeout";
  EXPECT_EQ(trial_end(context), TrialEnd::error);
}

TrialRecord labelled(bool judge, bool facts) {
  TrialRecord r;
  r.grades = {{"facts", GradeStatus::graded, facts ? 1.0 : 0.0, facts, "", ""},
              {"judge", GradeStatus::graded, judge ? 1.0 : 0.0, judge, "", ""}};
  return r;
}

TEST(Agreement, ShareAndCohensKappaByHand) {
  // judge: T T T T F F F F F F; facts: T T T F F F F F F T. Agree on 8 of 10;
  // p_e = 0.4 * 0.4 + 0.6 * 0.6 = 0.52; kappa = (0.8 - 0.52) / 0.48.
  const bool judge[] = {true, true, true, true, false, false, false, false, false, false};
  const bool facts[] = {true, true, true, false, false, false, false, false, false, true};
  std::vector<TrialRecord> records;
  for (int i = 0; i < 10; ++i) records.push_back(labelled(judge[i], facts[i]));
  TrialRecord not_graded;
  not_graded.grades = {{"facts", GradeStatus::not_graded, std::nullopt, false, "", ""},
                       {"judge", GradeStatus::graded, 1.0, true, "", ""}};
  records.push_back(not_graded);  // left out: facts did not grade it
  std::vector<const TrialRecord*> pointers;
  for (const auto& r : records) pointers.push_back(&r);
  Agreement a = agreement(pointers, "judge", "facts");
  EXPECT_EQ(a.pairs, 10);
  EXPECT_DOUBLE_EQ(*a.share, 0.8);
  EXPECT_NEAR(*a.kappa, 0.28 / 0.48, 1e-12);

  // Every trial labelled correct by both: perfect agreement, kappa undefined.
  std::vector<TrialRecord> same = {labelled(true, true), labelled(true, true)};
  Agreement s = agreement({&same[0], &same[1]}, "judge", "facts");
  EXPECT_DOUBLE_EQ(*s.share, 1.0);
  EXPECT_FALSE(s.kappa.has_value());
  EXPECT_EQ(agreement({}, "judge", "facts").pairs, 0);
}

}  // namespace
}  // namespace okfbench::reports
