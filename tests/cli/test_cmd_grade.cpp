// `okfbench grade` end to end (the built program): golden Markdown and JSON
// output for hand-written answers, and errors that name the line.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "tests/reports/fixtures.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::cli {
namespace {

namespace fs = std::filesystem;

// Runs from the source tree with relative paths, so the output names the
// same files in every checkout.
test::CommandResult grade(const std::string& args) {
  return test::run_command(fmt::format("cd {} && {} grade {}", test::source_dir().string(),
                                       test::okfbench_binary().string(), args));
}

std::string cache_flag() { return "--judge-cache " + (test::fresh_dir("grade_cache") / "judge.sqlite").string(); }

constexpr const char* kFiles = "--questions tests/data/grade/questions.yaml --answers tests/data/grade/answers.jsonl "
                               "--bundle datasets/bundles/demo";

TEST(GradeCommand, MarkdownIsGolden) {
  test::CommandResult r = grade(fmt::format("{} --grader facts --grader citations --grader answered --grader judge:sim {}",
                                            kFiles, cache_flag()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  reports::fixtures::expect_golden("grade.md", r.out);
}

TEST(GradeCommand, JsonIsGolden) {
  test::CommandResult r = grade(fmt::format("{} --grader facts --grader judge:sim --votes 3 --json {}", kFiles, cache_flag()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  reports::fixtures::expect_golden("grade.json", r.out);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["grades"].size(), 10u);  // 5 answers x 2 graders
  EXPECT_EQ(j["grades"][0]["line"], 1);
  EXPECT_EQ(j["grades"][4]["line"], 4);  // line 3 is blank
  EXPECT_EQ(j["summary"]["judge"]["calls"], 15);
}

TEST(GradeCommand, DefaultGradersWithoutABundle) {
  test::CommandResult r = grade("--questions tests/data/grade/questions.yaml --answers tests/data/grade/answers.jsonl --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["grades"].size(), 15u);
  EXPECT_EQ(j["grades"][0]["grader"], "facts");
  EXPECT_EQ(j["grades"][1]["grader"], "citations");
  EXPECT_EQ(j["grades"][2]["grader"], "answered");
  // Without the bundle every bracketed id is a citation: line 2 also cites [not/a-concept].
  EXPECT_EQ(j["grades"][4]["detail"], "cites 1 of 2 relevant (metrics/replica-lag-seconds); precision 0.500, recall "
                                      "0.500; not relevant: not/a-concept");
  EXPECT_TRUE(j["summary"]["judge"].is_null());
}

TEST(GradeCommand, MarkdownCellsEscapePipesAndLineBreaks) {
  const fs::path dir = test::fresh_dir("grade_cells");
  test::write_file(dir / "q.yaml", "questions:\n  - id: \"a|b\"\n    text: t\n    answer_facts: [\"x | y\", \"two\\nlines\"]\n");
  test::write_file(dir / "a.jsonl", "{\"question_id\": \"a|b\", \"answer\": \"nothing\"}\n");
  test::CommandResult r = grade(fmt::format("--questions {} --answers {} --grader facts", (dir / "q.yaml").string(),
                                            (dir / "a.jsonl").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| 1 | a\\|b | facts | graded | 0.000 | no | 0 of 2 fact(s) stated; missing: \"x \\| y\", "
                       "\"two lines\" |\n"),
            std::string::npos)
      << r.out;
}

struct BadCase {
  const char* lines;
  const char* message;
};

TEST(GradeCommand, BadLinesAreErrorsNamingTheLine) {
  const BadCase cases[] = {
      {"{\"question_id\": \"lag\", \"answer\": \"x\"}\n{\"question_id\": \"lag\", \"answer\": \"y\"\n",
       "answers.jsonl:2: not valid JSON; each line must be one JSON object"},
      {"\n{\"answer\": \"x\"}\n", "answers.jsonl:2: key \"question_id\" is missing"},
      {"{\"question_id\": \"lag\"}\n", "answers.jsonl:1: key \"answer\" is missing"},
      {"{\"question_id\": \"nope\", \"answer\": \"x\"}\n",
       "answers.jsonl:1: question_id \"nope\" is not in tests/data/grade/questions.yaml"},
      {"{\"question_id\": \"lag\", \"answer\": 3}\n", "answers.jsonl:1: \"answer\" must be a string, not number"},
      {"{\"question_id\": [1], \"answer\": \"x\"}\n", "answers.jsonl:1: \"question_id\" must be a string"},
      {"[1, 2]\n", "answers.jsonl:1: expected a JSON object, got array"},
      {"\n\n", "answers.jsonl: no answers (the file is empty)"},
  };
  for (const auto& c : cases) {
    const fs::path dir = test::fresh_dir("grade_bad");
    test::write_file(dir / "answers.jsonl", c.lines);
    test::CommandResult r = grade(fmt::format("--questions tests/data/grade/questions.yaml --answers {} --grader judge:sim {}",
                                              (dir / "answers.jsonl").string(), cache_flag()));
    EXPECT_EQ(r.exit_code, 1) << c.lines;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "nothing is graded before every line is read: " << r.out;
  }
}

TEST(GradeCommand, UsageErrorsExitTwo) {
  const std::string files = "--questions tests/data/grade/questions.yaml --answers tests/data/grade/answers.jsonl";
  for (const char* bad : {"--grader vibes", "--grader judge", "--grader judge:gpt-4", "--grader facts --grader facts",
                          "--grader judge:sim --grader judge:sim", "--grader judge:sim --votes 0", "--votes 10"}) {
    test::CommandResult r = grade(files + " " + bad + " " + cache_flag());
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.err;
  }
  EXPECT_EQ(grade("--answers tests/data/grade/answers.jsonl").exit_code, 2);  // --questions is required
  test::CommandResult missing = grade("--questions tests/data/grade/questions.yaml --answers nope.jsonl");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nope.jsonl: cannot be read"), std::string::npos) << missing.err;
}

// A FIFO in place of the answers file is refused at once, not waited on.
TEST(GradeCommand, AnswersThatAreNotARegularFileAreRefusedWithoutBlocking) {
  const fs::path dir = test::fresh_dir("grade_fifo");
  ASSERT_EQ(::mkfifo((dir / "answers.jsonl").c_str(), 0600), 0);
  test::CommandResult r = grade(fmt::format("--questions tests/data/grade/questions.yaml --answers {}",
                                            (dir / "answers.jsonl").string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// Grading holds one answer at a time: 32 MB of answers are graded, in
// Markdown and in JSON, by a process that stays under 40 MB resident (it
// held every answer twice before, 90 MB for these).
TEST(GradeCommand, ALongAnswersFileIsGradedWithoutHoldingIt) {
  const fs::path dir = test::fresh_dir("grade_long");
  const std::string filler(128 * 1024, 'x');
  std::string lines;
  for (int i = 0; i < 250; ++i) {
    lines += fmt::format("{{\"question_id\": \"{}\", \"answer\": \"{} Check Replica-Lag per replica\"}}\n",
                         i % 2 ? "lag" : "disk", filler);
  }
  test::write_file(dir / "answers.jsonl", lines);
  lines = std::string();
  const std::string args = "--questions tests/data/grade/questions.yaml --answers " + (dir / "answers.jsonl").string() +
                           " --grader facts";
  test::CommandResult markdown = grade(args);
  ASSERT_EQ(markdown.exit_code, 0) << markdown.err;
  EXPECT_NE(markdown.out.find("| 250 | lag | facts |"), std::string::npos);
  // GNU time's %M is the grading process's own peak, not the test's.
  const fs::path peak = dir / "peak";
  test::CommandResult r = test::run_command(fmt::format("cd {} && /usr/bin/time -f %M -o {} {} grade {} --json",
                                                        test::source_dir().string(), peak.string(),
                                                        test::okfbench_binary().string(), args));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["summary"]["answers"], 250);
  ASSERT_EQ(j["grades"].size(), 250u);
  EXPECT_EQ(j["grades"][249]["line"], 250);
  EXPECT_EQ(j["summary"]["graders"]["facts"]["graded"], 250);
  if (!kSanitized) {
    EXPECT_LT(std::stol(test::read_file(peak)), 40 * 1024) << "KiB at most resident in the grading process";
  }
}

}  // namespace
}  // namespace okfbench::cli
