#pragma once
// Answers from any system (another harness, a production log) graded by the
// graders a run uses: what `okfbench grade` reads and grades.
//
// ANSWERS is JSONL: one JSON object a line with "question_id" (a string, or
// an integer read as its decimal text) and "answer" (a string); other keys
// are ignored and blank lines skipped. The file is read a line at a time and
// never held whole, so a file of any length costs memory for one line; a
// line longer than kMaxAnswerLineBytes is an error naming it. The file must
// be a regular file (a FIFO is refused at once rather than waited on).
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>

#include "datasets/questions.hpp"
#include "reports/graders.hpp"
#include "retrieval/bundle.hpp"

namespace okfbench::engine {

// One answer a line: far more than any model's reply, far less than memory.
inline constexpr std::size_t kMaxAnswerLineBytes = std::size_t{64} << 20;

struct AnswerLine {
  int line = 0;  // 1-based line of the file
  const datasets::Question* question = nullptr;  // in the question set read against
  std::string answer;
};

// Calls `each` with every answer of `path`, in file order. Throws InputError
// naming FILE:LINE and the key for a line that is not an answer (not JSON,
// not an object, a key missing or of the wrong type, a question id not in
// `set`, which `questions_file` names), and the file when it holds no answer.
void for_each_answer(const std::filesystem::path& path, const datasets::QuestionSet& set,
                     const std::string& questions_file, const std::function<void(AnswerLine&&)>& each);

// Checks every line as for_each_answer does without keeping any, so that a
// bad line costs no judge call; returns the number of answers.
std::size_t check_answers(const std::filesystem::path& path, const datasets::QuestionSet& set,
                          const std::string& questions_file);

// What the graders see of an answer to `q` but its citations and end: the
// question, its judgments and facts and, when `reference` is set (a judge
// grades), the text of each relevant concept it finds. Shared by a run's
// trials and `okfbench grade`.
reports::GradeInput question_grade_input(const datasets::Question& q, std::string answer,
                                         const std::function<const retrieval::Concept*(const std::string&)>& reference);

// What the graders see of one answer. Without a bundle every bracketed id
// counts as a citation; with one, only its concepts do, and when `judged`
// the judge reads the text of the relevant concepts.
reports::GradeInput grade_input(const AnswerLine& line, const retrieval::Bundle* bundle, bool judged);

}  // namespace okfbench::engine
