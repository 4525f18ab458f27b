// Frontmatter scalars with control characters (retrieval/frontmatter.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "retrieval/bundle.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {
using ::testing::HasSubstr;
using okfbench::test::concept_md;
using okfbench::test::make_bundle;

// A NUL in `type:` made a file "conformant"; one in a title cut `search`
// and `browse` lines short, so what followed it read as another hit.
TEST(ReportsEmbedTextSafely, ControlCharactersInFrontmatterAreAnErrorAndNeverKept) {
  const auto root = make_bundle("frontmatter-controls",
                                {{"a.md", concept_md("type: \"Play\\0book\"\ntitle: \"T\\x01itle\"\ntags: [\"x\\by\"]\n", "Body.\n")},
                                 {"b.md", concept_md("type: Playbook\ntitle: Fine\tone\n", "Body.\n")}});
  const Bundle bundle = Bundle::load(root);
  std::size_t errors = 0;
  for (const Diagnostic& d : bundle.diagnostics()) {
    EXPECT_EQ(d.path, "a.md");
    EXPECT_THAT(d.message, HasSubstr("control character"));
    EXPECT_EQ(d.message.find('\0'), std::string::npos);
    if (d.severity == Severity::error) ++errors;
  }
  EXPECT_EQ(errors, 3u);  // type, title, the tag: the bundle is not conformant
  const Concept* a = bundle.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->type, "Play\xEF\xBF\xBD" "book");
  EXPECT_EQ(a->title, "T\xEF\xBF\xBDitle");
  ASSERT_EQ(a->tags.size(), 1u);
  EXPECT_EQ(a->tags[0], "x\xEF\xBF\xBDy");
  EXPECT_EQ(bundle.find("b")->title, "Fine\tone");  // a tab is allowed
}

TEST(ReportsEmbedTextSafely, ControlCharactersInTheRepoProfileAreWarnings) {
  const auto root = make_bundle("frontmatter-controls-repo", {{"a.md", concept_md("type: Note\ntitle: \"a\\x7Fb\"\n", "x\n")}});
  LoadOptions options;
  options.profile = Profile::repo;
  const Bundle bundle = Bundle::load(root, options);
  ASSERT_EQ(bundle.diagnostics().size(), 1u);
  EXPECT_EQ(bundle.diagnostics()[0].severity, Severity::warning);
  EXPECT_EQ(bundle.find("a")->title, "a\xEF\xBF\xBD" "b");
}

}  // namespace
}  // namespace okfbench::retrieval
