// Answers files as `okfbench grade` reads them: line numbers kept past blank
// lines, integer ids read as their text, and what the graders are handed.
#include "engine/answers.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::engine {
namespace {
namespace fs = std::filesystem;

const datasets::QuestionSet& questions() {
  static const datasets::QuestionSet set = datasets::parse_questions(
      "name: t\nquestions:\n"
      "  - id: lag\n    text: How far behind?\n    relevant: {runbooks/lag: 2}\n    answer_facts: [30 seconds]\n"
      "  - id: \"7\"\n    text: Seven?\n    relevant: {}\n",
      "t.yaml");
  return set;
}

fs::path answers_file(const std::string& text) {
  const fs::path file = test::fresh_dir("answers") / "a.jsonl";
  test::write_file(file, text);
  return file;
}

TEST(Answers, LinesKeepTheirNumbersPastBlankLinesAndIntegerIdsReadAsText) {
  const fs::path file = answers_file("\n{\"question_id\": \"lag\", \"answer\": \"30 seconds [runbooks/lag]\"}\n"
                                     "  \r\n{\"question_id\": 7, \"answer\": \"\", \"extra\": 1}");
  std::vector<int> lines;
  std::vector<std::string> ids;
  for_each_answer(file, questions(), "t.yaml", [&](AnswerLine&& a) {
    lines.push_back(a.line);
    ids.push_back(a.question->id);
  });
  EXPECT_EQ(lines, (std::vector<int>{2, 4}));
  EXPECT_EQ(ids, (std::vector<std::string>{"lag", "7"}));
  EXPECT_EQ(check_answers(file, questions(), "t.yaml"), 2u);
}

TEST(Answers, TheGradersSeeCitationsAndWhetherAnythingWasAnswered) {
  const fs::path file = answers_file("{\"question_id\": \"lag\", \"answer\": \"30 seconds [runbooks/lag]\"}\n"
                                     "{\"question_id\": \"7\", \"answer\": \" \\n\"}\n");
  std::vector<reports::GradeInput> inputs;
  for_each_answer(file, questions(), "t.yaml",
                  [&](AnswerLine&& a) { inputs.push_back(grade_input(a, nullptr, false)); });
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].citations, std::vector<std::string>{"runbooks/lag"});
  EXPECT_EQ(inputs[0].answer_facts, std::vector<std::string>{"30 seconds"});
  EXPECT_EQ(inputs[0].end, reports::TrialEnd::answered);
  EXPECT_EQ(inputs[1].end, reports::TrialEnd::no_answer);
}

TEST(Answers, ABadLineStopsBeforeAnyLaterLineIsGiven) {
  const fs::path file = answers_file("{\"question_id\": \"lag\", \"answer\": \"x\"}\n{\"question_id\": \"nope\", "
                                     "\"answer\": \"x\"}\n{\"question_id\": \"lag\", \"answer\": \"y\"}\n");
  int given = 0;
  try {
    for_each_answer(file, questions(), "t.yaml", [&](AnswerLine&&) { ++given; });
    FAIL() << "a question id outside the set was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a.jsonl:2: question_id \"nope\" is not in t.yaml"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(given, 1);
}

}  // namespace
}  // namespace okfbench::engine
