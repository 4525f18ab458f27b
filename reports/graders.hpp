#pragma once
// Graders: what a trial's answer is worth. Each grader is a small record
// (name, help, threshold, grade) in a registry, like the measures; it takes
// the question (text, relevant concepts, answer_facts), the trial's answer and
// how the trial ended, and returns a Grade (reports/record.hpp): a score in
// [0, 1], `correct` (score >= the grader's threshold) and a detail saying why.
//
//   facts      each answer_facts entry matched in the answer by the rule
//              below; score = share of facts matched; threshold 1 (correct
//              when every fact matches); not graded without answer_facts
//   citations  F1 of citation precision and recall (measures.hpp
//              citation_scores) over the concepts with grade > 0; threshold
//              0.5; not graded when the question has no relevant concept
//   answered   1 when the trial ended with an answer, 0 when it hit max_turns,
//              gave an empty answer or failed; threshold 1
//   judge      an LLM-as-judge (reports/judge.hpp), built with make_judge_grader
//
// The facts rule. Answer and fact are normalised the same way:
//   1. Unicode NFKC with case folding (utf8proc; invalid UTF-8 bytes become
//      spaces): "ＡＢＣ" -> "abc", "Straße" -> "strasse", "１２" -> "12".
//   2. A comma between digits that groups thousands is removed: a comma with
//      a digit before it and exactly three digits after it (the fourth
//      character not a digit) -> "1,000" -> "1000", "12,345,678" ->
//      "12345678"; "1,5" and "1,2,3" keep their commas.
//   3. Every run of characters that is not a letter (L*), a number (N*) or a
//      combining mark (M*) continuing a word becomes one space, and the text
//      is split there into tokens: "p95-latency (ms)" -> [p95, latency, ms].
// A fact matches when its tokens occur contiguously in the answer's tokens,
// each on whole-token boundaries ("12" does not match "121"; "12 ms" does not
// match "12 s ms"). A fact token also matches an answer token that is itself
// with a final "s" added or removed ("index" ~ "indexs", "runbook" ~
// "runbooks"), and nothing looser: "query" does not match "queries", "café"
// does not match "cafe". A fact without any letter or digit never matches.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/record.hpp"
#include "reports/trec.hpp"

namespace okfbench::reports {

// How the trial ended, for the `answered` grader.
enum class TrialEnd { answered, no_answer, error };

// A relevant concept's text, the judge's reference.
struct ReferenceConcept {
  std::string id;
  std::string text;
};

// A fact's weight as a nugget (TREC 2024 RAG): vital facts must be in a good
// answer, okay ones are good to have.
enum class NuggetImportance { vital, okay };
// How far the answer supports one fact, as the judge labels it.
enum class NuggetLabel { support, partial_support, not_support };
std::string_view to_string(NuggetImportance importance);
std::string_view to_string(NuggetLabel label);
std::optional<NuggetLabel> parse_nugget_label(std::string_view text);

// The four scores of record.hpp's NuggetScores; `importance` empty means
// every fact is vital, else one per label (a mismatch is treated as vital).
NuggetScores nugget_scores(const std::vector<NuggetImportance>& importance, const std::vector<NuggetLabel>& labels);

struct GradeInput {
  std::string question_id;
  std::string question;
  Judgments relevant;                     // concept id -> grade; grade > 0 is relevant
  std::vector<std::string> answer_facts;  // what a good answer states
  std::vector<NuggetImportance> fact_importance;  // one per answer fact, or empty: all vital
  std::string answer;
  std::vector<std::string> citations;  // concept ids the answer cites
  TrialEnd end = TrialEnd::answered;
  std::vector<ReferenceConcept> references;  // relevant concepts' text (used by the judge only)
};

// A grader's result: the grade and, for the judge, what it spent.
struct GraderResult {
  Grade grade;
  std::optional<JudgeUsage> usage;
};

struct Grader {
  std::string name;
  std::string help;
  double threshold = 1.0;  // correct when score >= threshold
  std::function<GraderResult(const GradeInput&)> grade;
};

// facts, citations, answered: the graders a run uses by default, in that order.
const std::vector<Grader>& builtin_graders();
// The built-in grader of that name, or nullptr.
const Grader* find_builtin_grader(std::string_view name);
// "facts", "citations", "answered", "judge": the names any grade may carry.
const std::vector<std::string>& grader_names();

// Runs every grader on one input; grades come out in the graders' order. A
// judge's usage is returned apart (several judges: their usage summed).
struct Grading {
  std::vector<Grade> grades;
  std::optional<JudgeUsage> judge_usage;
};
Grading grade_all(const std::vector<Grader>& graders, const GradeInput& input);

// ---- The facts rule ----
// The normalised tokens of `text` (steps 1-3 above).
std::vector<std::string> fact_tokens(std::string_view text);
// True when `fact` (tokens) occurs in `answer` (tokens) by the rule above.
bool tokens_match(const std::vector<std::string>& fact, const std::vector<std::string>& answer);

struct FactsMatch {
  std::vector<std::string> matched;  // facts as written, in order
  std::vector<std::string> missing;
};
FactsMatch match_facts(const std::vector<std::string>& facts, std::string_view answer);

// ---- Inputs from records ----
// Concept ids cited in an answer: every "[id]" on one line with no bracket
// inside (spaces and commas allowed, as vault ids have them; leading and
// trailing spaces, a leading "/" and a trailing ".md" dropped; percent
// escapes such as "%20" decoded when the text as written is no concept),
// else each comma- or semicolon-separated part of it ("[a, b]"), each once in
// order of first appearance, kept when `is_concept(id)` says so.
std::vector<std::string> cited_ids(std::string_view answer, const std::function<bool(const std::string&)>& is_concept);

// How a stored trial ended: error when it failed; no_answer when its answer
// is blank or, on the agent path, when its last model call asked for tools
// (it stopped at max_turns); answered otherwise.
TrialEnd trial_end(const TrialRecord& record);

// The grade of `grader` in a record, or nullptr.
const Grade* find_grade(const TrialRecord& record, std::string_view grader);

// ---- Agreement between two graders ----
// Over the trials both graded (status graded for both): the share whose
// `correct` agrees, and Cohen's kappa of the two correct/incorrect labels,
// kappa = (p_o - p_e) / (1 - p_e) with p_e from each grader's share correct
// (Cohen, "A coefficient of agreement for nominal scales", 1960); kappa is
// nullopt when p_e = 1 (both graders gave one label to every trial).
struct Agreement {
  int pairs = 0;
  std::optional<double> share;
  std::optional<double> kappa;
};
Agreement agreement(const std::vector<const TrialRecord*>& records, std::string_view a, std::string_view b);

// agreement() a record at a time (okfbench grade over a long answers file).
class AgreementTally {
 public:
  AgreementTally(std::string a, std::string b) : a_(std::move(a)), b_(std::move(b)) {}
  void add(const TrialRecord& record);
  Agreement agreement() const;

 private:
  std::string a_, b_;
  int pairs_ = 0, agree_ = 0, a_correct_ = 0, b_correct_ = 0;
};

}  // namespace okfbench::reports
