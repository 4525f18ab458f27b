#pragma once
// The `judge` grader: an LLM-as-judge. reports/ depends on no model client,
// so the judge is given a JudgeCall (engine/judge.hpp implements it over any
// agents::ChatModel: openai:M, anthropic:M, or the offline sim).
//
// The rubric. System prompt: judge_system_prompt() (the verdicts and the
// reply format). User message, built by judge_prompt(), line by line:
//   Question: <the question as a JSON string>
//   Expected facts: <answer_facts as a JSON list>
//   Reference concept ids: <ids of the concepts with grade > 0 as a JSON list>
//   Answer (<N> bytes):
//   <the answer, exactly N bytes>
//   <blank line>
//   Reference:
//   ### <id>            then the concept's text, for each GradeInput::references
//                       entry ("(no reference text was given)" when there is none)
// Temperature 0, at most kJudgeMaxTokens of reply.
//
// The reply must be one JSON object and nothing else (surrounding whitespace
// allowed; no code fence, no other keys):
//   {"verdict": "correct" | "partial" | "incorrect", "reason": "...",
//    "facts": ["support" | "partial_support" | "not_support", ...]}
// "facts" is optional: one label per expected fact, in order (a list of
// another length does not conform). With it the grade carries the four
// TREC 2024 RAG nugget scores (record.hpp NuggetScores) over the facts and
// their importance (vital unless the question set says okay); with several
// votes, the labels of the first vote for the winning verdict.
// Scores: correct 1, partial 0.5, incorrect 0; threshold 1 (correct only
// when the verdict is "correct"). With votes N the judge is asked N times
// (vote index 0..N-1, so a response cache keeps the votes apart) and the
// verdict with most votes wins; a tie goes to the lower verdict, so a split
// jury never rounds up. Any vote whose reply does not conform, or whose call
// fails, makes the grade a judge_error that keeps the raw reply: never a
// crash, never a silent 0. A trial that failed is not graded (nor paid for).
//
// The offline sim judge (sim_judge_reply) is not a language model: it reads
// the user message above and decides by rule, from the same facts rule as the
// `facts` grader and the answer's citations:
//   with expected facts:  every fact stated and at least one reference
//                         concept cited -> correct; every fact stated but
//                         nothing of the reference cited, or some facts
//                         stated -> partial; no fact stated -> incorrect
//   without facts:        every reference concept cited -> correct; some ->
//                         partial; none -> incorrect
//   facts labels:         support for a fact stated, not_support otherwise
// Reports that used it say so (kSimJudgeNote).
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "reports/graders.hpp"

namespace okfbench::reports {

inline constexpr int kJudgeMaxTokens = 300;
inline constexpr const char* kSimJudgeNote =
    "the judge `sim` is okfbench's deterministic rule (facts stated and reference concepts cited), not a language model";

struct JudgePrompt {
  std::string system;
  std::string user;
};

// One judge call's reply text and usage. `from_cache` when a response cache
// answered it (its tokens are then not charged again).
struct JudgeReply {
  std::string text;
  std::optional<std::int64_t> input_tokens;  // includes cached and cache-write tokens
  std::optional<std::int64_t> cached_tokens;
  std::optional<std::int64_t> cache_write_tokens;
  std::optional<std::int64_t> output_tokens;
  bool from_cache = false;
};

// Asks the judge once; `vote` is 0..votes-1. Throws InputError (or any
// std::exception) when the call cannot be completed.
using JudgeCall = std::function<JudgeReply(const JudgePrompt& prompt, int vote)>;

struct JudgeOptions {
  std::string model;  // named in the usage, e.g. "openai:gpt-4.1-mini" or "sim"
  int votes = 1;      // 1..kMaxJudgeVotes
  JudgeCall call;
};
inline constexpr int kMaxJudgeVotes = 9;

const std::string& judge_system_prompt();
JudgePrompt judge_prompt(const GradeInput& input);

enum class Verdict { incorrect, partial, correct };
std::string_view to_string(Verdict verdict);

struct ParsedVerdict {
  std::optional<Verdict> verdict;  // nullopt when the reply does not conform
  std::string reason;              // the judge's reason, or what was wrong with the reply
  std::optional<std::vector<NuggetLabel>> facts = std::nullopt;  // the optional "facts" labels, in order
};
// Strict parsing of one reply, as described above.
ParsedVerdict parse_verdict(std::string_view reply);

// Throws UsageError when votes is out of range or the call is empty.
Grader make_judge_grader(JudgeOptions options);

// True when `system` is the judge's rubric (how sim tells a judge request).
bool is_judge_request(std::string_view system);
// The sim judge's reply (JSON text, as above) to a user message built by
// judge_prompt(); a message it cannot read gets a reply saying so that is not
// a verdict, which the grader turns into a judge_error.
std::string sim_judge_reply(std::string_view user_message);

}  // namespace okfbench::reports
