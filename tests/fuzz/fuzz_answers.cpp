// An answers file for `okfbench grade` (engine/answers.hpp) against a
// two-question set, each answer then graded by facts, citations and
// answered.
//
// Invariants: a bad file is an InputError, nothing else; check_answers
// counts what for_each_answer gives; line numbers rise; every grade has a
// score in [0, 1] exactly when it is graded.
#include <cstddef>
#include <cstdint>
#include <fstream>

#include "core/error.hpp"
#include "engine/answers.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace okfbench;

const datasets::QuestionSet& questions() {
  static const datasets::QuestionSet set = datasets::parse_questions(
      "name: fuzz\nquestions:\n"
      "  - id: lag\n    text: How far behind may a replica be?\n    relevant: {runbooks/lag: 2}\n"
      "    answer_facts: [30 seconds]\n"
      "  - id: \"7\"\n    text: What is seven?\n    relevant: {}\n",
      "fuzz.yaml");
  return set;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  const std::filesystem::path file = fuzz::scratch_dir() / "answers.jsonl";
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(text.data(), static_cast<std::streamsize>(text.size()));
  std::size_t checked = 0;
  try {
    checked = engine::check_answers(file, questions(), "fuzz.yaml");
  } catch (const InputError&) {
    return 0;
  }
  std::size_t seen = 0;
  int last = 0;
  std::vector<reports::Grader> graders;
  for (const char* name : {"facts", "citations", "answered"}) graders.push_back(*reports::find_builtin_grader(name));
  engine::for_each_answer(file, questions(), "fuzz.yaml", [&](engine::AnswerLine&& line) {
    fuzz::check(line.line > last, "line numbers that do not rise");
    last = line.line;
    ++seen;
    for (const auto& g : reports::grade_all(graders, engine::grade_input(line, nullptr, false)).grades) {
      const bool graded = g.status == reports::GradeStatus::graded;
      fuzz::check(graded == g.score.has_value(), "a score without a grade, or a grade without one");
      fuzz::check(!g.score || (*g.score >= 0 && *g.score <= 1), "a score outside [0, 1]");
    }
  });
  fuzz::check(seen == checked, "check_answers counts other answers than for_each_answer gives");
  return 0;
}
