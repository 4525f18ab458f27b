#include "datasets/questions.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "reports/graders.hpp"
#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::datasets {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const char* kSet = R"(name: demo
questions:
  - id: q1
    text: "How are active users counted?"
    relevant:
      metrics/active-users: 2
      tables/events: 1
    answer_facts:
      - "one qualifying event a day"
  - id: q2
    text: Which table holds orders?
)";

std::string error_of(const std::string& yaml) {
  try {
    parse_questions(yaml, "q.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Questions, ParsesIdsTextsGradesAndFacts) {
  QuestionSet set = parse_questions(kSet, "q.yaml");
  EXPECT_EQ(set.name, "demo");
  EXPECT_EQ(set.source, "q.yaml");
  ASSERT_EQ(set.questions.size(), 2u);
  const Question& q1 = set.questions[0];
  EXPECT_EQ(q1.id, "q1");
  EXPECT_EQ(q1.text, "How are active users counted?");
  EXPECT_EQ(q1.relevant, (std::map<std::string, int>{{"metrics/active-users", 2}, {"tables/events", 1}}));
  EXPECT_EQ(q1.answer_facts, std::vector<std::string>{"one qualifying event a day"});
  EXPECT_EQ(q1.line, 3);
  EXPECT_EQ(q1.relevant_line.at("tables/events"), 7);
  EXPECT_TRUE(set.questions[1].relevant.empty());
  EXPECT_EQ(set.find("q2"), &set.questions[1]);
  EXPECT_EQ(set.find("q3"), nullptr);
}

TEST(Questions, RoundTripsThroughYaml) {
  QuestionSet set = parse_questions(kSet, "q.yaml");
  set.questions[1].text = "quotes \" and: colons\nand newlines";
  QuestionSet again = parse_questions(to_yaml(set), "again.yaml");
  ASSERT_EQ(again.questions.size(), 2u);
  EXPECT_EQ(again.name, set.name);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(again.questions[i].id, set.questions[i].id);
    EXPECT_EQ(again.questions[i].text, set.questions[i].text);
    EXPECT_EQ(again.questions[i].relevant, set.questions[i].relevant);
    EXPECT_EQ(again.questions[i].answer_facts, set.questions[i].answer_facts);
  }
}

// Found by fuzz_questions: 300 control characters are 300 bytes to yaml-cpp's
// emitter but 1,200 once escaped, past the 1024 a reader allows a plain key.
TEST(Questions, RoundTripsJudgedIdsThatAreLongOnceEscaped) {
  QuestionSet set = parse_questions(kSet, "q.yaml");
  const std::string escaped_long(300, '\x01');
  const std::string long_plain(1500, 'a');
  set.questions[0].relevant = {{escaped_long, 2}, {long_plain, 1}, {"short", 3}};
  QuestionSet again = parse_questions(to_yaml(set), "again.yaml");
  ASSERT_EQ(again.questions.size(), 2u);
  EXPECT_EQ(again.questions[0].relevant, set.questions[0].relevant);
}

TEST(Questions, ErrorsNameTheFileLineAndProblem) {
  EXPECT_THAT(error_of("questions:\n  - id: a\n    text: x\n  - id: a\n    text: y\n"),
              HasSubstr("q.yaml:4: duplicate question id 'a'"));
  EXPECT_THAT(error_of("questions:\n  - id: a\n    text: x\n    relevant:\n      c1: high\n"),
              HasSubstr("q.yaml:5: grade of 'c1': expected an integer from -1000000 to 1000000, got \"high\""));
  EXPECT_THAT(error_of("questions:\n  - id: a\n    text: x\n    relevant: {c1: 1.5}\n"),
              HasSubstr("grade of 'c1': expected an integer from -1000000 to 1000000, got \"1.5\""));
  EXPECT_THAT(error_of("questions:\n  - id: a\n    txt: x\n"), HasSubstr("q.yaml:3: unknown key 'txt'"));
  EXPECT_THAT(error_of("questions:\n  - text: x\n"), HasSubstr("q.yaml:2: question has no `id`"));
  EXPECT_THAT(error_of("questions:\n  - id: a\n"), HasSubstr("question 'a' has no `text`"));
  EXPECT_THAT(error_of("questions: [\n"), HasSubstr("not valid YAML"));
  EXPECT_THAT(error_of("- a\n"), HasSubstr("expected a mapping with a `questions` list"));
  EXPECT_THROW(load_questions("/nonexistent/q.yaml"), InputError);
}

TEST(Questions, RepeatedKeysAreErrorsNamingBothLines) {
  // yaml-cpp keeps both pairs: the loop over a question's keys took the last id, a lookup would take the first.
  EXPECT_EQ(error_of("questions:\n  - id: a\n    text: x\n    id: b\n"),
            "q.yaml:4: questions[0].id: duplicate key (first at line 2); YAML keys must be unique, keep one");
  EXPECT_EQ(error_of("questions:\n  - id: a\n    text: x\n    relevant:\n      c1: 1\n      c2: 0\n      c1: 2\n"),
            "q.yaml:7: questions[0].relevant.c1: duplicate key (first at line 5); YAML keys must be unique, keep one");
  // Keys compare as the reader takes them: "7" and 7 judge the same concept.
  EXPECT_EQ(error_of("questions:\n  - id: a\n    text: x\n    relevant: {\"7\": 1, 7: 2}\n"),
            "q.yaml:4: questions[0].relevant.7: duplicate key (first at line 4); YAML keys must be unique, keep one");
  EXPECT_EQ(error_of("name: a\nquestions: []\nname: b\n"),
            "q.yaml:3: name: duplicate key (first at line 1); YAML keys must be unique, keep one");
}

TEST(Questions, GradesAreRangeCheckedIntegers) {
  auto grade_error = [](const std::string& grade) {
    return error_of("questions:\n  - id: a\n    text: x\n    relevant: {c1: " + grade + "}\n");
  };
  for (const char* grade : {"2147483648", "-2147483649", "4294967297", "1000001", "-1000001", "1e3", "0x10", "+1", "01",
                            ".nan", ".inf", "2.0", "[1]", "yes", "\"\""}) {
    EXPECT_THAT(grade_error(grade), HasSubstr("q.yaml:4: grade of 'c1': expected an integer from -1000000 to 1000000, got"))
        << grade;
  }
  const QuestionSet set = parse_questions("questions:\n  - id: a\n    text: x\n    relevant: {c1: 1000000, c2: -1000000, c3: \"2\"}\n",
                                          "q.yaml");
  EXPECT_EQ(set.questions[0].relevant, (std::map<std::string, int>{{"c1", 1'000'000}, {"c2", -1'000'000}, {"c3", 2}}));
}

TEST(Questions, AnswerFactsCarryAnImportance) {
  const std::string head = "questions:\n  - id: a\n    text: x\n";
  const QuestionSet set = parse_questions(
      head + "    answer_facts:\n      - plain\n      - {fact: \"30 s\", importance: okay}\n      - {fact: v, importance: vital}\n",
      "q.yaml");
  const Question& q = set.questions[0];
  EXPECT_EQ(q.answer_facts, (std::vector<std::string>{"plain", "30 s", "v"}));
  EXPECT_EQ(q.fact_importance, (std::vector<FactImportance>{FactImportance::vital, FactImportance::okay, FactImportance::vital}));
  const QuestionSet again = parse_questions(to_yaml(set), "again.yaml");
  EXPECT_EQ(again.questions[0].fact_importance, q.fact_importance);
  EXPECT_EQ(again.questions[0].answer_facts, q.answer_facts);
  EXPECT_THAT(error_of(head + "    answer_facts:\n      - {fact: a, importance: high}\n"),
              HasSubstr("q.yaml:5: `importance: high`: use vital or okay"));
  EXPECT_THAT(error_of(head + "    answer_facts:\n      - {importance: okay}\n"), HasSubstr("`fact` is missing"));
  EXPECT_THAT(error_of(head + "    answer_facts:\n      - {fact: a, weight: 2}\n"), HasSubstr("unknown key 'weight'"));
}

TEST(Questions, AnswerFactsMustBeAListOfNonEmptyStrings) {
  const std::string head = "questions:\n  - id: a\n    text: x\n";
  EXPECT_THAT(error_of(head + "    answer_facts: 30 s\n"),
              HasSubstr("q.yaml:4: `answer_facts` must be a list of non-empty strings"));
  EXPECT_THAT(error_of(head + "    answer_facts: {a: 1}\n"), HasSubstr("q.yaml:4: `answer_facts` must be a list"));
  EXPECT_THAT(error_of(head + "    answer_facts:\n      - \"30 s\"\n      - \"\"\n"),
              HasSubstr("q.yaml:6: `answer_facts` must be a list of non-empty strings, e.g. [\"30 s\", "
                        "\"CALL db.checkpoint()\"]: an entry is empty"));
  EXPECT_THAT(error_of(head + "    answer_facts: [\"ok\", \"  \"]\n"), HasSubstr("q.yaml:4:"));
  EXPECT_THAT(error_of(head + "    answer_facts: [\"ok\", \"  \"]\n"), HasSubstr("an entry is empty"));
  EXPECT_THAT(error_of(head + "    answer_facts:\n      - ok\n      - [nested]\n"),
              HasSubstr("q.yaml:6: `answer_facts` must be a list of non-empty strings, e.g. [\"30 s\", "
                        "\"CALL db.checkpoint()\"]: an entry is not a string"));
  EXPECT_THAT(error_of(head + "    answer_facts:\n      - ok\n      -\n"), HasSubstr("q.yaml:6: `answer_facts`"));
  EXPECT_THAT(error_of(head + "    answer_facts:\n      -\n      - ok\n    relevant: {}\n"),
              HasSubstr("q.yaml:5: `answer_facts` must be a list of non-empty strings, e.g. [\"30 s\", "
                        "\"CALL db.checkpoint()\"]: an entry is empty"));
  // Numbers are facts too: YAML scalars are read as their text.
  QuestionSet set = parse_questions(head + "    answer_facts: [1000, \"k = 60\"]\n", "q.yaml");
  EXPECT_EQ(set.questions[0].answer_facts, (std::vector<std::string>{"1000", "k = 60"}));
}

// Every shipped question has answer facts, and each fact is text of one of its
// relevant concepts by the facts grader's own matching rule.
void expect_facts_from_relevant_concepts(const fs::path& questions, const fs::path& bundle_root) {
  const QuestionSet set = load_questions(questions);
  const retrieval::Bundle bundle = retrieval::Bundle::load(bundle_root);
  ASSERT_FALSE(set.questions.empty());
  for (const Question& q : set.questions) {
    EXPECT_FALSE(q.answer_facts.empty()) << questions << ": " << q.id;
    std::string text;
    for (const auto& [id, grade] : q.relevant) {
      const retrieval::Concept* c = bundle.find(id);
      ASSERT_NE(c, nullptr) << id;
      if (grade > 0) text += c->title + "\n" + c->description + "\n" + c->body + "\n";
    }
    const reports::FactsMatch match = reports::match_facts(q.answer_facts, text);
    EXPECT_TRUE(match.missing.empty()) << questions << ": " << q.id << ": not in its relevant concepts: "
                                       << ::testing::PrintToString(match.missing);
  }
}

TEST(Questions, ShippedSetsCarryAnswerFactsFromTheirRelevantConcepts) {
  const fs::path questions = test::source_dir() / "datasets/experiments/questions";
  expect_facts_from_relevant_concepts(questions / "demo.yaml", test::source_dir() / "datasets/bundles/demo");
  if (!test::have_data()) GTEST_SKIP() << "no reference data: the four real bundles' sets were not checked";
  for (const char* name : {"acme_retail", "ga4", "stackoverflow", "crypto_bitcoin"})
    expect_facts_from_relevant_concepts(questions / (std::string(name) + ".yaml"), test::data_root() / "okf" / name);
}

TEST(Questions, CheckConceptsNamesUnknownIdsWithTheirLines) {
  fs::path dir = test::fresh_dir("questions-bundle");
  test::write_file(dir / "metrics/active-users.md", "---\ntype: Metric\ntitle: Active users\n---\nBody.\n");
  retrieval::Bundle bundle = retrieval::Bundle::load(dir);
  QuestionSet set = parse_questions(kSet, "q.yaml");
  try {
    check_concepts(set, bundle);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("q.yaml:7: question 'q1' judges 'tables/events', which is not a concept"));
    EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("active-users'")));
  }
  set.questions[0].relevant.erase("tables/events");
  EXPECT_NO_THROW(check_concepts(set, bundle));
}

TEST(QuestionsTrec, ReadsSgmlTopicsAndQrels) {
  fs::path dir = test::fresh_dir("trec");
  test::write_file(dir / "topics.txt",
                   "<top>\n<num> Number: 301\n<title> Topic: International Organized Crime\n\n"
                   "<desc> Description:\nIdentify organizations.\n\n<narr> Narrative:\nA relevant doc...\n</top>\n\n"
                   "<top>\n<num> Number: 302\n<title> Poliomyelitis\n<desc>\nIs polio under control?\n</top>\n"
                   "<top>\n<num> Number: 303\n<title> Unjudged\n</top>\n");
  test::write_file(dir / "qrels.txt", "301 0 FBIS3-1 1\n301 0 FBIS3-2 0\n\n302 0 LA-9 2\n");
  QuestionSet set = read_trec(dir / "topics.txt", dir / "qrels.txt");
  ASSERT_EQ(set.questions.size(), 2u);
  EXPECT_EQ(set.questions[0].id, "301");
  EXPECT_EQ(set.questions[0].text, "International Organized Crime");
  EXPECT_EQ(set.questions[0].relevant, (std::map<std::string, int>{{"FBIS3-1", 1}, {"FBIS3-2", 0}}));
  EXPECT_EQ(set.questions[1].text, "Poliomyelitis");
  QuestionSet both = read_trec(dir / "topics.txt", dir / "qrels.txt", TopicField::title_and_description);
  EXPECT_EQ(both.questions[0].text, "International Organized Crime Identify organizations.");

  test::write_file(dir / "topics.tsv", "301\tcrime\n302\tpolio\n");
  EXPECT_EQ(read_trec(dir / "topics.tsv", dir / "qrels.txt").questions[1].text, "polio");
}

TEST(QuestionsTrec, BadQrelsLinesAreErrorsWithTheirLine) {
  fs::path dir = test::fresh_dir("trec-bad");
  test::write_file(dir / "bad.qrels", "1 0 d1 1\n1 0 d2 yes\n");
  EXPECT_THROW(
      {
        try {
          read_trec_qrels(dir / "bad.qrels");
        } catch (const InputError& e) {
          EXPECT_THAT(e.what(), HasSubstr("bad.qrels:2: grade of 'd2': expected an integer from -1000000 to 1000000, got \"yes\""));
          throw;
        }
      },
      InputError);
  for (const char* grade : {"2147483648", "1e3", "0x1", "+1", "1.0", "nan"}) {
    test::write_file(dir / "range.qrels", std::string("1 0 d1 ") + grade + "\n");
    EXPECT_THROW(read_trec_qrels(dir / "range.qrels"), InputError) << grade;
  }
  test::write_file(dir / "dup.qrels", "1 0 d1 1\n1 0 d1 2\n");
  EXPECT_THROW(read_trec_qrels(dir / "dup.qrels"), InputError);
  test::write_file(dir / "short.qrels", "1 d1 1\n");
  EXPECT_THROW(read_trec_qrels(dir / "short.qrels"), InputError);
  test::write_file(dir / "topics.tsv", "9\tnine\n");
  test::write_file(dir / "orphan.qrels", "1 0 d1 1\n");
  EXPECT_THROW(read_trec(dir / "topics.tsv", dir / "orphan.qrels"), InputError);
}

TEST(QuestionsBeir, ReadsSciFactTestSplit) {
  if (!test::have_data()) GTEST_SKIP() << "no reference data";
  QuestionSet set = read_beir(test::data_root() / "collections/scifact", "test");
  ASSERT_EQ(set.questions.size(), 300u);
  std::size_t judgments = 0;
  for (const Question& q : set.questions) judgments += q.relevant.size();
  EXPECT_EQ(judgments, 339u);
  const Question* q1 = set.find("1");
  ASSERT_NE(q1, nullptr);
  EXPECT_EQ(q1->text, "0-dimensional biomaterials show inductive properties.");
  EXPECT_EQ(q1->relevant, (std::map<std::string, int>{{"31715818", 1}}));
}

TEST(QuestionsBeir, BadLinesAreErrorsWithTheirLine) {
  fs::path dir = test::fresh_dir("beir-bad");
  test::write_file(dir / "queries.jsonl", "{\"_id\": \"1\", \"text\": \"q\"}\nnot json\n");
  test::write_file(dir / "qrels/test.tsv", "query-id\tcorpus-id\tscore\n1\td1\t1\n");
  try {
    read_beir(dir);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("queries.jsonl:2:"));
  }
}

}  // namespace
}  // namespace okfbench::datasets
