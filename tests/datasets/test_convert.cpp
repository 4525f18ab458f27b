#include "datasets/convert.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "datasets/questions.hpp"
#include "retrieval/bundle.hpp"
#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::datasets {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using retrieval::Bundle;
using retrieval::Severity;

std::size_t errors_in(const Bundle& bundle) {
  std::size_t n = 0;
  for (const auto& d : bundle.diagnostics()) n += d.severity == Severity::error ? 1 : 0;
  return n;
}

TEST(SafeConceptId, KeepsSafeIdsAndRewritesOthersDistinctly) {
  EXPECT_EQ(safe_concept_id("31715818"), "31715818");
  EXPECT_EQ(safe_concept_id("MED-10_a.b"), "MED-10_a.b");
  std::string slash = safe_concept_id("a/b");
  EXPECT_THAT(slash, ::testing::MatchesRegex("a_b-[0-9a-f]{8}"));
  EXPECT_NE(slash, safe_concept_id("a b"));
  EXPECT_THAT(safe_concept_id("index"), ::testing::MatchesRegex("index-[0-9a-f]{8}"));
  EXPECT_THAT(safe_concept_id("log"), ::testing::StartsWith("log-"));
  EXPECT_THAT(safe_concept_id(".."), ::testing::MatchesRegex("doc\\.\\.-[0-9a-f]{8}"));
  EXPECT_THAT(safe_concept_id("../x"), ::testing::MatchesRegex("doc\\.\\._x-[0-9a-f]{8}"));
  EXPECT_THAT(safe_concept_id(""), ::testing::MatchesRegex("doc-[0-9a-f]{8}"));
  EXPECT_EQ(safe_concept_id(std::string(300, 'x')).size(), 109u);
}

TEST(ConvertBeir, WritesOneConceptPerDocumentAndRenamesUnsafeIds) {
  fs::path src = test::fresh_dir("beir-src");
  test::write_file(src / "corpus.jsonl",
                   "{\"_id\": \"d1\", \"title\": \"Cats: a \\\"study\\\"\", \"text\": \"Cats purr.\"}\n"
                   "{\"_id\": \"../x\", \"title\": \"\", \"text\": \"Escaping ids are renamed.\"}\n");
  test::write_file(src / "queries.jsonl", "{\"_id\": \"q1\", \"text\": \"purring\"}\n");
  test::write_file(src / "qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\t../x\t2\n");
  fs::path out = test::fresh_dir("beir-out");
  ConvertResult result = convert_beir(src, out);
  EXPECT_EQ(result.documents, 2u);
  EXPECT_EQ(result.renamed, 1u);
  EXPECT_EQ(result.question_count, 1u);
  Bundle bundle = Bundle::load(result.bundle);
  ASSERT_EQ(bundle.concepts().size(), 2u);
  EXPECT_EQ(errors_in(bundle), 0u);
  const auto* d1 = bundle.find("d1");
  ASSERT_NE(d1, nullptr);
  EXPECT_EQ(d1->title, "Cats: a \"study\"");
  EXPECT_EQ(d1->type, "Document");
  std::string renamed = safe_concept_id("../x");
  const auto* x = bundle.find(renamed);
  ASSERT_NE(x, nullptr);
  EXPECT_TRUE(x->extra.count("source_id"));
  EXPECT_FALSE(fs::exists(out / "x.md"));
  QuestionSet set = load_questions(result.questions);
  ASSERT_EQ(set.questions.size(), 1u);
  EXPECT_EQ(set.questions[0].relevant, (std::map<std::string, int>{{"d1", 1}, {renamed, 2}}));
  EXPECT_NO_THROW(check_concepts(set, bundle));
  // Nothing is overwritten.
  EXPECT_THROW(convert_beir(src, out), InputError);
}

TEST(ConvertCranfield, RealCollectionBecomesABundleAndGradedQuestions) {
  if (!test::have_data()) GTEST_SKIP() << "no reference data";
  fs::path out = test::fresh_dir("cran");
  ConvertResult result = convert_cranfield(test::data_root() / "collections/cranfield", out);
  EXPECT_EQ(result.documents, 1400u);
  EXPECT_EQ(result.renamed, 0u);
  EXPECT_EQ(result.question_count, 225u);
  Bundle bundle = Bundle::load(result.bundle);
  EXPECT_EQ(bundle.concepts().size(), 1400u);
  EXPECT_EQ(errors_in(bundle), 0u);
  const auto* doc1 = bundle.find("1");
  ASSERT_NE(doc1, nullptr);
  EXPECT_EQ(doc1->title, "experimental investigation of the aerodynamics of a wing in a slipstream .");
  EXPECT_THAT(doc1->body, HasSubstr("propeller slipstream"));
  QuestionSet set = load_questions(result.questions);
  ASSERT_EQ(set.questions.size(), 225u);
  const Question* q1 = set.find("1");
  ASSERT_NE(q1, nullptr);
  EXPECT_THAT(q1->text, ::testing::StartsWith("what similarity laws must be obeyed"));
  // cranqrel "1 184 2" -> grade 3; "1 486 -1" -> grade 0; code 1 would be grade 4.
  EXPECT_EQ(q1->relevant.at("184"), 3);
  EXPECT_EQ(q1->relevant.at("486"), 0);
  std::size_t judgments = 0, top_grade = 0;
  for (const Question& q : set.questions) {
    judgments += q.relevant.size();
    for (const auto& [doc, grade] : q.relevant) top_grade += grade == 4 ? 1 : 0;
  }
  EXPECT_EQ(judgments, 1837u);
  EXPECT_EQ(top_grade, 128u);  // cranqrel has 128 lines with code 1
  EXPECT_NO_THROW(check_concepts(set, bundle));
}

TEST(ConvertMarkdown, TldrStylePagesGetTitlesDescriptionsAndSeeAlsoLinks) {
  fs::path src = test::fresh_dir("md-src");
  test::write_file(src / "common/tar.md",
                   "# tar\n\n> Archiving utility.\n> Often combined with `gzip`.\n"
                   "> See also: `gzip`, `missing`.\n> More information: <https://example.org/tar>.\n\n"
                   "- Create an archive:\n\n`tar cf {{target.tar}} {{file}}`\n");
  test::write_file(src / "common/gzip.md", "# gzip\n\n> Compress files.\n> See also: `tar`, `log`.\n");
  test::write_file(src / "linux/gzip.md", "# gzip\n\n> Linux gzip.\n");
  test::write_file(src / "osx/log.md", "# log\n\n> View system logs.\n");
  test::write_file(src / ".hidden/x.md", "# hidden\n");
  fs::path out = test::fresh_dir("md-out");
  ConvertResult result = convert_markdown(src, out);
  EXPECT_EQ(result.documents, 4u);
  EXPECT_EQ(result.renamed, 1u);  // osx/log is a reserved name
  EXPECT_EQ(result.links, 3u);    // tar->gzip, gzip->tar, gzip->log
  EXPECT_TRUE(result.questions.empty());
  Bundle bundle = Bundle::load(result.bundle);
  EXPECT_EQ(bundle.concepts().size(), 4u);
  EXPECT_EQ(errors_in(bundle), 0u);
  const auto* tar = bundle.find("common/tar");
  ASSERT_NE(tar, nullptr);
  EXPECT_EQ(tar->title, "tar");
  EXPECT_EQ(tar->description, "Archiving utility. Often combined with `gzip`.");
  EXPECT_EQ(tar->layer, "common");
  EXPECT_THAT(tar->body, HasSubstr("More information: <https://example.org/tar>."));
  ASSERT_EQ(tar->links.size(), 1u);
  EXPECT_EQ(tar->links[0].target, "common/gzip");  // same directory preferred over linux/gzip
  EXPECT_EQ(tar->links[0].relation, "SEE_ALSO");
  const auto* gzip = bundle.find("common/gzip");
  ASSERT_NE(gzip, nullptr);
  ASSERT_EQ(gzip->links.size(), 2u);
  EXPECT_EQ(gzip->links[1].target, "osx/" + safe_concept_id("log"));
  EXPECT_TRUE(gzip->links[1].resolved);
}

TEST(ConvertErrors, MissingSourcesAreInputErrors) {
  fs::path out = test::fresh_dir("missing");
  EXPECT_THROW(convert_cranfield(out / "nope", out), InputError);
  EXPECT_THROW(convert_beir(out / "nope", out), InputError);
  EXPECT_THROW(convert_markdown(out / "nope", out), InputError);
}

}  // namespace
}  // namespace okfbench::datasets
