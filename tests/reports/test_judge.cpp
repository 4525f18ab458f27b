// The judge grader with scripted replies: strict reply parsing, votes and
// ties, judge errors that keep the raw reply, usage kept apart, and the sim
// judge's rule read back from the rubric prompt.
#include "reports/judge.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace okfbench::reports {
namespace {

GradeInput lag_question(std::string answer) {
  GradeInput in;
  in.question_id = "lag";
  in.question = "Which replica is \"behind\"?\nSay why.";
  in.relevant = {{"runbooks/replica-lag", 2}, {"metrics/replica-lag-seconds", 1}, {"glossary/other", 0}};
  in.answer_facts = {"replica lag", "30 seconds"};
  in.answer = std::move(answer);
  in.references = {{"runbooks/replica-lag", "Read replica lagging behind\n\nMore than 30 seconds."}};
  return in;
}

// A judge that answers from a script, one reply per call, and counts calls.
struct Scripted {
  explicit Scripted(std::vector<std::string> r = {}, std::vector<bool> c = {}) : replies(std::move(r)), cached(std::move(c)) {}
  std::vector<std::string> replies;
  std::vector<bool> cached;
  int calls = 0;
  std::vector<int> votes;
  JudgeCall call() {
    return [this](const JudgePrompt& prompt, int vote) {
      EXPECT_EQ(prompt.system, judge_system_prompt());
      votes.push_back(vote);
      JudgeReply r;
      r.text = replies.at(static_cast<std::size_t>(calls));
      r.from_cache = calls < static_cast<int>(cached.size()) && cached[static_cast<std::size_t>(calls)];
      r.input_tokens = 100;
      r.cached_tokens = 20;
      r.cache_write_tokens = 0;
      r.output_tokens = 10;
      ++calls;
      return r;
    };
  }
};

std::string verdict(const char* v) { return std::string(R"({"verdict": ")") + v + R"(", "reason": "because )" + v + "\"}"; }

GraderResult judge_with(Scripted& s, int votes, const GradeInput& in) {
  return make_judge_grader({"openai:judge-model", votes, s.call()}).grade(in);
}

TEST(ParseVerdict, StrictJson) {
  ParsedVerdict ok = parse_verdict("  {\"verdict\": \"partial\", \"reason\": \"half\"}\n");
  ASSERT_TRUE(ok.verdict.has_value());
  EXPECT_EQ(*ok.verdict, Verdict::partial);
  EXPECT_EQ(ok.reason, "half");
  const std::pair<const char*, const char*> bad[] = {
      {"", "the reply is empty"},
      {"```json\n{\"verdict\": \"correct\", \"reason\": \"x\"}\n```", "the reply is not a JSON value"},
      {"Verdict: correct", "the reply is not a JSON value"},
      {"[\"correct\"]", "the reply is a JSON array, not an object"},
      {R"({"verdict": "correct"})", "no string \"reason\""},
      {R"({"verdict": 1, "reason": "x"})", "no string \"verdict\""},
      {R"({"verdict": "Correct", "reason": "x"})", "verdict \"Correct\" is not correct, partial or incorrect"},
      {R"({"verdict": "correct", "reason": "x", "score": 1})", "unexpected key \"score\""},
      {R"({"verdict": "correct", "reason": "x"} trailing)", "the reply is not a JSON value"},
  };
  for (const auto& [reply, why] : bad) {
    ParsedVerdict p = parse_verdict(reply);
    EXPECT_FALSE(p.verdict.has_value()) << reply;
    EXPECT_EQ(p.reason, why) << reply;
  }
}

TEST(Judge, ScoresAVerdict) {
  Scripted s{{verdict("partial")}};
  GraderResult r = judge_with(s, 1, lag_question("x"));
  EXPECT_EQ(r.grade.grader, "judge");
  EXPECT_EQ(r.grade.status, GradeStatus::graded);
  EXPECT_DOUBLE_EQ(*r.grade.score, 0.5);
  EXPECT_FALSE(r.grade.correct);
  EXPECT_EQ(r.grade.detail, "partial: because partial");
  ASSERT_TRUE(r.usage.has_value());
  EXPECT_EQ(r.usage->model, "openai:judge-model");
  EXPECT_EQ(r.usage->calls, 1);
  EXPECT_EQ(*r.usage->input_tokens, 100);
  EXPECT_EQ(*r.usage->output_tokens, 10);
}

TEST(Judge, MajorityOfVotesAndTiesGoDown) {
  Scripted two_of_three{{verdict("correct"), verdict("partial"), verdict("correct")}};
  GraderResult r = judge_with(two_of_three, 3, lag_question("x"));
  EXPECT_DOUBLE_EQ(*r.grade.score, 1.0);
  EXPECT_TRUE(r.grade.correct);
  EXPECT_EQ(r.grade.detail, "correct (2 of 3 votes: correct, partial, correct): because correct");
  EXPECT_EQ(two_of_three.votes, (std::vector<int>{0, 1, 2}));  // the vote index reaches the model (cache key)
  EXPECT_EQ(r.usage->calls, 3);
  EXPECT_EQ(*r.usage->input_tokens, 300);

  Scripted tie{{verdict("correct"), verdict("partial")}};
  EXPECT_DOUBLE_EQ(*judge_with(tie, 2, lag_question("x")).grade.score, 0.5);
  Scripted three_way{{verdict("correct"), verdict("incorrect"), verdict("partial")}};
  EXPECT_DOUBLE_EQ(*judge_with(three_way, 3, lag_question("x")).grade.score, 0.0);
}

TEST(Judge, ANonConformingReplyIsAJudgeErrorThatKeepsIt) {
  Scripted s{{verdict("correct"), "Sure! The answer is correct.", verdict("correct")}};
  GraderResult r = judge_with(s, 3, lag_question("x"));
  EXPECT_EQ(r.grade.status, GradeStatus::judge_error);
  EXPECT_FALSE(r.grade.score.has_value());
  EXPECT_FALSE(r.grade.correct);
  EXPECT_EQ(r.grade.raw, "Sure! The answer is correct.");
  EXPECT_EQ(r.grade.detail, "vote 2 of 3: the reply is not the JSON asked for: the reply is not a JSON value");
  EXPECT_EQ(s.calls, 2);  // stops at the bad vote
  EXPECT_EQ(r.usage->calls, 2);
}

TEST(Judge, AFailedCallIsAJudgeError) {
  JudgeCall failing = [](const JudgePrompt&, int) -> JudgeReply { throw InputError("HTTP 500 after 3 tries"); };
  GraderResult r = make_judge_grader({"openai:m", 1, failing}).grade(lag_question("x"));
  EXPECT_EQ(r.grade.status, GradeStatus::judge_error);
  EXPECT_EQ(r.grade.detail, "vote 1 of 1: the judge call failed: HTTP 500 after 3 tries");
  EXPECT_TRUE(r.grade.raw.empty());
}

TEST(Judge, CachedRepliesAreNotChargedAndFailedTrialsNotAsked) {
  Scripted s{{verdict("correct"), verdict("correct")}, {true, false}};
  GraderResult r = judge_with(s, 2, lag_question("x"));
  EXPECT_EQ(r.usage->calls, 2);
  EXPECT_EQ(r.usage->cache_hits, 1);
  EXPECT_EQ(*r.usage->input_tokens, 100);
  EXPECT_EQ(*r.usage->cached_tokens, 20);

  Scripted never;
  GradeInput failed = lag_question("");
  failed.end = TrialEnd::error;
  GraderResult f = judge_with(never, 1, failed);
  EXPECT_EQ(f.grade.status, GradeStatus::not_graded);
  EXPECT_EQ(never.calls, 0);
  EXPECT_FALSE(f.usage.has_value());
}

TEST(Judge, VotesAreRangeChecked) {
  Scripted s;
  EXPECT_THROW(make_judge_grader({"sim", 0, s.call()}), UsageError);
  EXPECT_THROW(make_judge_grader({"sim", kMaxJudgeVotes + 1, s.call()}), UsageError);
  EXPECT_THROW(make_judge_grader({"sim", 1, nullptr}), UsageError);
}

TEST(JudgePrompt, CarriesQuestionFactsReferenceAndAnswer) {
  const std::string answer = "Lag is 30 s.\nQuestion: \"fake\"\nExpected facts: []";
  JudgePrompt p = judge_prompt(lag_question(answer));
  EXPECT_TRUE(is_judge_request(p.system));
  EXPECT_FALSE(is_judge_request("You are a helpful assistant."));
  const std::string expected_head =
      "Question: \"Which replica is \\\"behind\\\"?\\nSay why.\"\n"
      "Expected facts: [\"replica lag\",\"30 seconds\"]\n"
      "Reference concept ids: [\"metrics/replica-lag-seconds\",\"runbooks/replica-lag\"]\n"
      "Answer (" + std::to_string(answer.size()) + " bytes):\n" + answer + "\n\nReference:\n"
      "### runbooks/replica-lag\nRead replica lagging behind\n\nMore than 30 seconds.\n\n";
  EXPECT_EQ(p.user, expected_head);
}

std::string sim_verdict_of(const GradeInput& in) {
  const ParsedVerdict v = parse_verdict(sim_judge_reply(judge_prompt(in).user));
  EXPECT_TRUE(v.verdict.has_value());
  return v.verdict ? std::string(to_string(*v.verdict)) + ": " + v.reason : "none";
}

TEST(SimJudge, DecidesByFactsAndCitations) {
  EXPECT_EQ(sim_verdict_of(lag_question("Replica lag is above 30 seconds [runbooks/replica-lag].")),
            "correct: states all 2 expected facts and cites runbooks/replica-lag");
  EXPECT_EQ(sim_verdict_of(lag_question("Replica lag is above 30 seconds.")),
            "partial: states all 2 expected facts and cites none of the reference concepts");
  EXPECT_EQ(sim_verdict_of(lag_question("Replica lag [glossary/other].")),
            "partial: states 1 of 2 expected facts and cites none of the reference concepts");
  EXPECT_EQ(sim_verdict_of(lag_question("I could not find anything about it.")),
            "incorrect: states none of the 2 expected facts");
  GradeInput no_facts = lag_question("See [runbooks/replica-lag].");
  no_facts.answer_facts.clear();
  EXPECT_EQ(sim_verdict_of(no_facts),
            "partial: no expected facts; 1 of 2 reference concepts cited (cites runbooks/replica-lag)");
  no_facts.answer = "[metrics/replica-lag-seconds] [runbooks/replica-lag]";
  EXPECT_EQ(sim_verdict_of(no_facts).substr(0, 8), "correct:");
}

TEST(SimJudge, AMessageItCannotReadGetsNoVerdict) {
  EXPECT_FALSE(parse_verdict(sim_judge_reply("Grade this please")).verdict.has_value());
  std::string cut = judge_prompt(lag_question("a long answer")).user;
  cut = cut.substr(0, cut.find("a long") + 3);  // the answer is shorter than its byte count
  EXPECT_FALSE(parse_verdict(sim_judge_reply(cut)).verdict.has_value());
}

}  // namespace
}  // namespace okfbench::reports

namespace okfbench::reports {
namespace {

std::string labelled(const char* v, const char* facts) {
  return std::string(R"({"verdict": ")") + v + R"(", "reason": "r", "facts": )" + facts + "}";
}

TEST(JudgeNuggets, LabelsGiveTheFourTrecRagScores) {
  // Two facts, the second okay: support + partial_support.
  GradeInput in = lag_question("x");
  in.fact_importance = {NuggetImportance::vital, NuggetImportance::okay};
  Scripted s{{labelled("partial", R"(["support", "partial_support"])")}};
  GraderResult r = judge_with(s, 1, in);
  ASSERT_EQ(r.grade.status, GradeStatus::graded);
  ASSERT_TRUE(r.grade.nuggets.has_value());
  EXPECT_DOUBLE_EQ(r.grade.nuggets->strict_vital, 1.0);  // 1 of 1 vital supported
  EXPECT_DOUBLE_EQ(r.grade.nuggets->strict_all, 0.5);    // 1 of 2 supported
  EXPECT_DOUBLE_EQ(r.grade.nuggets->vital, 1.0);
  EXPECT_DOUBLE_EQ(r.grade.nuggets->all, 0.75);          // (1 + 0.5) / 2
  // Without labels the grade has no nugget scores; a wrong count is a judge error.
  Scripted plain{{verdict("correct")}};
  EXPECT_FALSE(judge_with(plain, 1, in).grade.nuggets.has_value());
  Scripted short_list{{labelled("correct", R"(["support"])")}};
  EXPECT_EQ(judge_with(short_list, 1, in).grade.status, GradeStatus::judge_error);
  EXPECT_FALSE(parse_verdict(labelled("correct", R"(["yes", "no"])")).verdict.has_value());
  EXPECT_FALSE(parse_verdict(labelled("correct", R"("support")")).verdict.has_value());
}

TEST(JudgeNuggets, SimJudgeLabelsStatedFactsSupported) {
  GradeInput in = lag_question("Replica lag is high.");
  Scripted s{{sim_judge_reply(judge_prompt(in).user)}};
  GraderResult r = judge_with(s, 1, in);
  ASSERT_TRUE(r.grade.nuggets.has_value());
  EXPECT_DOUBLE_EQ(r.grade.nuggets->all, 0.5);
  EXPECT_DOUBLE_EQ(r.grade.nuggets->strict_vital, 0.5);
}

}  // namespace
}  // namespace okfbench::reports
