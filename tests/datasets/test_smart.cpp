#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "datasets/convert.hpp"
#include "datasets/questions.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/search.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::datasets {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using retrieval::Bundle;

// A CACM-style collection: .K keywords, .C categories, .N, .X triples, and
// marker lines with trailing spaces and tabs.
const char* kCacmDocs =
    ".I 1\n.T \nPreliminary Report on Algebraic Languages\n.W\nA language for algorithms. It is compiled.\n"
    ".B\nCACM December, 1958\n.A\nPerlis, A. J.\nSamelson, K.\n.K \t\nALGOL, programming language,\ncompilers\n"
    ".C\n4.22, 5.24\n.N\nCA581203 JB\n.X\n2\t5\t1\n3\t4\t1\n1\t5\t1\n2\t5\t1\n99\t5\t1\n"
    ".I 2\n.T\nCompiling Algebraic Languages\n.W\nHow compilers read ALGOL? Quickly.\n.A\nBackus, J.\n.X\n1\t5\t2\n"
    ".I 3\n.T\nSorting Methods\n.W\nSorting by merging.\n";

fs::path cacm(const std::string& qrels) {
  return test::make_bundle("smart-cacm", {{"CACM/cacm.all", kCacmDocs},
                                          {"CACM/query.text", ".I 1\n.W\nalgebraic language compilers\n.N\n 1. Someone\n"
                                                              ".I 2\n.W\nsorting\n"},
                                          {"CACM/qrels.text", qrels}}) /
         "CACM";
}

ConvertOptions options(std::string name, fs::path qrels = {}) {
  ConvertOptions o;
  o.name = std::move(name);
  o.qrels = std::move(qrels);
  return o;
}

const retrieval::Concept& concept_of(const Bundle& bundle, std::string_view id) {
  const retrieval::Concept* c = bundle.find(id);
  if (c == nullptr) throw std::runtime_error("no concept " + std::string(id));
  return *c;
}

TEST(ConvertSmart, KeepsEverySmartFieldAndNamesTheBundleAfterTheCollection) {
  fs::path src = cacm("01 1 0 0\n01 2 0 0\n02 3 0 0\n");
  fs::path out = test::fresh_dir("smart-cacm-out");
  ConvertResult result = convert_smart(src, out);
  EXPECT_EQ(result.name, "CACM");
  EXPECT_EQ(result.bundle, out / "CACM");
  EXPECT_EQ(result.documents, 3u);
  EXPECT_EQ(result.links, 3u);  // 1 -> 2, 1 -> 3, 2 -> 1; self and repeated citations once, 99 dropped
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(result.warnings[0].count, 1u);
  EXPECT_THAT(result.warnings[0].examples[0], HasSubstr("cacm.all:23"));
  Bundle bundle = Bundle::load(result.bundle);
  EXPECT_TRUE(bundle.diagnostics().empty());
  const auto& doc = concept_of(bundle, "1");
  EXPECT_EQ(doc.title, "Preliminary Report on Algebraic Languages");
  EXPECT_EQ(doc.description, "A language for algorithms.");
  EXPECT_THAT(doc.tags, ElementsAre("ALGOL", "programming language", "compilers", "Perlis, A. J.", "Samelson, K."));
  EXPECT_THAT(doc.extra.at("categories"), HasSubstr("4.22"));
  EXPECT_THAT(doc.extra.at("categories"), HasSubstr("5.24"));
  EXPECT_THAT(doc.extra.at("authors"), HasSubstr("Samelson, K."));
  EXPECT_THAT(doc.extra.at("bibliography"), HasSubstr("CACM December, 1958"));
  EXPECT_THAT(doc.extra.at("note"), HasSubstr("CA581203 JB"));
  ASSERT_EQ(doc.links.size(), 2u);
  EXPECT_EQ(doc.links[0].target, "2");
  EXPECT_EQ(doc.links[0].relation, "CITES");
  EXPECT_EQ(doc.links[1].target, "3");
  EXPECT_EQ(concept_of(bundle, "2").description, "How compilers read ALGOL?");
  EXPECT_EQ(bundle.neighbors("1", retrieval::Direction::in, "CITES").size(), 1u);
  // An author's name finds the paper (authors are tags, which search indexes).
  retrieval::SearchIndex index = retrieval::SearchIndex::build(bundle);
  auto hits = index.search("Samelson", {});
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].id, "1");
  QuestionSet set = load_questions(result.questions);
  EXPECT_EQ(set.name, "CACM");
  EXPECT_FALSE(result.queries_by_position);
  ASSERT_EQ(set.questions.size(), 2u);
  EXPECT_EQ(set.questions[0].id, "1");  // "01" in the qrels is query 1
  EXPECT_EQ(set.questions[0].relevant, (std::map<std::string, int>{{"1", 1}, {"2", 1}}));
  EXPECT_EQ(set.questions[1].relevant, (std::map<std::string, int>{{"3", 1}}));
}

TEST(ConvertSmart, ReadsTwoThreeAndFourColumnQrels) {
  struct Case {
    const char* qrels;
    std::map<std::string, int> first;
  };
  const std::vector<Case> cases = {
      {"1 1\n1 2\n", {{"1", 1}, {"2", 1}}},            // query doc
      {"1 1 2\n1 2 0\n", {{"1", 2}, {"2", 0}}},        // query doc grade, as written
      {"1 0 1 3\n1 0 2 1\n", {{"1", 3}, {"2", 1}}},    // TREC: query iteration doc grade
      {"1 1 0 0.000000\n1 2 0 0\n", {{"1", 1}, {"2", 1}}},  // CISI: query doc 0 0
  };
  for (const Case& c : cases) {
    fs::path src = cacm(c.qrels);
    fs::path out = test::fresh_dir("smart-cols-out");
    ConvertResult result = convert_smart(src, out, options("cols"));
    QuestionSet set = load_questions(result.questions);
    ASSERT_EQ(set.questions.size(), 1u) << c.qrels;
    EXPECT_EQ(set.questions[0].relevant, c.first) << c.qrels;
  }
}

TEST(ConvertSmart, CranfieldCodesAndQueriesNumberedByPosition) {
  // Query ids have gaps (1, 4); cranqrel numbers queries 1..N and grades by code.
  fs::path src = test::make_bundle("smart-cran", {{"cran.all.1400", ".I 1\r\n.T\r\nwings\r\n.W\r\nlift .  more\r\n.I 2\r\n.W\r\nflow\r\n"},
                                               {"cran.qry", ".I 001\n.W\nlift?\n.I 004\n.W\nflow?\n"},
                                               {"cranqrel", "1 1 1\n2 2 -1\n2 1 4\n"}});
  fs::path out = test::fresh_dir("smart-cran-out");
  ConvertResult result = convert_cranfield(src, out);
  EXPECT_TRUE(result.queries_by_position);
  QuestionSet set = load_questions(result.questions);
  ASSERT_EQ(set.questions.size(), 2u);
  EXPECT_EQ(set.questions[1].id, "2");
  EXPECT_EQ(set.questions[1].text, "flow?");
  EXPECT_EQ(set.questions[0].relevant, (std::map<std::string, int>{{"1", 4}}));
  EXPECT_EQ(set.questions[1].relevant, (std::map<std::string, int>{{"1", 1}, {"2", 0}}));
  Bundle bundle = Bundle::load(result.bundle);
  EXPECT_EQ(concept_of(bundle, "1").description, "lift .");
  EXPECT_EQ(concept_of(bundle, "2").title, "2");  // no .T: the loader's fallback
}

TEST(ConvertSmart, FilesFoundByPatternOrGivenAndAmbiguityNamed) {
  fs::path src = test::make_bundle("smart-cisi", {{"CISI.ALL", ".I 1\n.T\nA\n.W\nText.\n"},
                                               {"CISI.QRY", ".I 1\n.W\nq\n"},
                                               {"CISI.REL", "1 1 0 0.000000\n"},
                                               {"OTHER.REL", "1 1 0 0\n"}});
  try {
    smart_files(src);
    FAIL() << "two qrels files must be ambiguous";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("CISI.REL OTHER.REL"));
    EXPECT_THAT(e.what(), HasSubstr("--qrels"));
  }
  SmartFiles files = smart_files(src, options("", src / "CISI.REL"));
  EXPECT_EQ(files.docs.filename(), "CISI.ALL");
  EXPECT_EQ(files.queries.filename(), "CISI.QRY");
  ConvertResult result = convert_smart(src, test::fresh_dir("smart-cisi-out"), options("cisi", src / "CISI.REL"));
  EXPECT_EQ(result.bundle.filename(), "cisi");
  EXPECT_THROW(smart_files(test::fresh_dir("smart-empty")), InputError);
}

TEST(ConvertSmart, DiagnosticsNameTheLineAndShowTheCharacters) {
  auto error_of = [](const std::string& docs, const std::string& qrels = "1 1\n") -> std::string {
    fs::path src = test::make_bundle("smart-bad", {{"x.all", docs}, {"x.qry", ".I 1\n.W\nq\n"}, {"x.rel", qrels}});
    try {
      convert_smart(src, test::fresh_dir("smart-bad-out"));
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_THAT(error_of(".I 1\n.T\nA\n.Q \n"), HasSubstr("x.all:4: \".Q\\x20\" is not a SMART field"));
  EXPECT_THAT(error_of("stray\n.I 1\n"), HasSubstr("x.all:1: \"stray\" is text outside a field"));
  EXPECT_THAT(error_of(".I 1\nbody\x01\n"), HasSubstr("x.all:2: \"body\\x01\""));
  EXPECT_THAT(error_of(".I 1\n.W\nx\n.I 01\n"), HasSubstr("x.all:4: record 01 again (first at line 1)"));
  EXPECT_THAT(error_of(".I 1\n.W\nx\n", "1 1 a\n"), HasSubstr("x.rel:1: grade \"a\""));
  EXPECT_THAT(error_of(".I 1\n.W\nx\n", "1 1 1 1 1\n"), HasSubstr("x.rel:1: \"1 1 1 1 1\" has 5 columns"));
  EXPECT_THAT(error_of(".I 1\n.W\nx\n", "1 1\n1 1 1\n"), HasSubstr("x.rel:2: 3 columns, but line 1 has 2"));
  EXPECT_THAT(error_of(".I 1\n.W\nx\n", "7 1\n"), HasSubstr("x.rel:1: query 7 is neither"));
  EXPECT_THAT(error_of(".I 1\n.W\nx\n", "1 1 1\n1 1 2\n"), HasSubstr("judged again with another grade"));
}

TEST(ConvertSmart, BadNamesAreUsageErrors) {
  fs::path src = cacm("1 1\n");
  EXPECT_THROW(convert_smart(src, test::fresh_dir("smart-name-out"), options("../x")), UsageError);
  EXPECT_EQ(collection_name("a/CACM/"), "CACM");
}

}  // namespace
}  // namespace okfbench::datasets
