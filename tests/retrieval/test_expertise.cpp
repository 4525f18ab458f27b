// Expertise packs: the structure checks, select_expertise and
// detect_conflicts, on the fixture packs tests/data/expertise/python-pack
// (11 nodes: two api-style constraints that disagree, three pytest/nose
// commands of which two say the same, one expired, one deprecated, one
// rejected, one for services only) and tests/data/expertise/broken-pack.
#include "retrieval/expertise.hpp"

#include <gtest/gtest.h>

#include "retrieval/context.hpp"
#include "core/error.hpp"
#include "retrieval/search.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {

using Ids = std::vector<std::string>;
using Exclusions = std::vector<Exclusion>;
using Conflicts = std::vector<Conflict>;

Bundle load_pack(const std::filesystem::path& path) {
  LoadOptions options;
  options.profile = Profile::expertise;
  return Bundle::load(path, options);
}

Bundle fixture(const std::string& name) { return load_pack(okfbench::test::source_dir() / "tests/data/expertise" / name); }

ExpertisePolicy policy(std::string now, std::vector<std::string> tags = {}) { return {std::move(tags), std::move(now)}; }

TEST(ExpertisePack, ReadsVersionKeysAppliesToAndStatus) {
  Bundle pack = fixture("python-pack");
  EXPECT_TRUE(pack.diagnostics().empty());
  EXPECT_EQ(pack.concepts().size(), 10u);
  EXPECT_EQ(pack_version(pack), "1.2.0");
  const Concept* classes = pack.find("constraints/api-classes");
  ASSERT_NE(classes, nullptr);
  EXPECT_EQ(classes->lifecycle->key, "api-style");
  EXPECT_EQ(classes->lifecycle->applies_to, (Ids{"python-library", "python-service"}));
  EXPECT_EQ(pack.find("constraints/api-handlers")->lifecycle->applies_to, Ids{"python-service"});  // a plain tag
  EXPECT_EQ(pack.find("constraints/api-legacy")->status, Status::deprecated);
  EXPECT_EQ(pack.find("verification/test-command-tox")->lifecycle->status, LessonStatus::rejected);
  EXPECT_EQ(pack.find("verification/test-command-tox")->status, Status::stable);
}

TEST(ExpertisePack, StructureProblemsNameFileLineAndKey) {
  Bundle pack = fixture("broken-pack");
  const std::vector<Diagnostic>& d = pack.diagnostics();
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0], (Diagnostic{Severity::error, "bad-expiry.md", 5,
                              "`expires_at: next year` is not a date; write YYYY-MM-DD or a timestamp like "
                              "2026-06-30T14:00:00Z. It is excluded from selection until fixed"}));
  EXPECT_EQ(d[1], (Diagnostic{Severity::error, "index.md", 2,
                              "the root index.md declares no `version`; add `version: \"1.0.0\"` (the pack's "
                              "version) to its frontmatter"}));
  EXPECT_EQ(d[2].path, "no-key.md");
  EXPECT_EQ(d[2].severity, Severity::error);
  EXPECT_EQ(d[2].message,
            "the expertise node has no `key`; add one that names the constraint it belongs to, such as `key: "
            "api-style` (nodes with one key are checked for conflicts)");
  EXPECT_EQ(pack_version(pack), "");
  // Both nodes stay: the keyless one is eligible, the bad expiry is not.
  EXPECT_EQ(select_expertise(pack, policy("2026-06-01")).excluded, (Exclusions{{"bad-expiry", "expires_at:invalid"}}));
}

TEST(ExpertisePack, AMissingIndexAndAListVersionAreErrors) {
  const std::string node = okfbench::test::concept_md("type: Constraint\nkey: k\n", "Text.");
  Bundle none = load_pack(okfbench::test::make_bundle("pack-no-index", {{"a.md", node}}));
  ASSERT_EQ(none.diagnostics().size(), 1u);
  EXPECT_EQ(none.diagnostics()[0].path, "index.md");
  EXPECT_EQ(none.diagnostics()[0].line, 0);
  EXPECT_EQ(none.diagnostics()[0].message,
            "the expertise pack has no root index.md with frontmatter; add one that declares the pack's version, such "
            "as `version: \"1.0.0\"`");
  Bundle listed = load_pack(okfbench::test::make_bundle(
      "pack-list-version", {{"a.md", node}, {"index.md", "---\ntitle: P\nversion:\n  - 1\n  - 2\n---\n# P\n"}}));
  ASSERT_EQ(listed.diagnostics().size(), 1u);
  EXPECT_EQ(listed.diagnostics()[0],
            (Diagnostic{Severity::error, "index.md", 4,
                        "`version` in the root index.md is a list; write a plain value such as `version: \"1.0.0\"`"}));
  // The okf profile asks for no version.
  EXPECT_TRUE(Bundle::load(okfbench::test::make_bundle("okf-no-index", {{"a.md", node}})).diagnostics().empty());
}

TEST(SelectExpertise, ExcludesEachNodeWithItsFirstReason) {
  Bundle pack = fixture("python-pack");
  Selection s = select_expertise(pack, policy("2026-06-01", {"python-library"}));
  EXPECT_EQ(s.excluded, (Exclusions{{"constraints/api-handlers", "inapplicable"},
                                    {"constraints/api-legacy", "status:deprecated"},
                                    {"verification/test-command-old", "expired"},
                                    {"verification/test-command-tox", "status:rejected"}}));
  EXPECT_TRUE(s.preferred.empty());
  EXPECT_EQ(s.policy,
            "expertise pack 1.2.0 as of 2026-06-01 for task tags python-library: rejected, deprecated, expired and "
            "inapplicable nodes excluded");
  s = select_expertise(pack, policy("2026-06-01", {"python-service"}));
  EXPECT_EQ(s.excluded, (Exclusions{{"constraints/api-functions", "inapplicable"},
                                    {"constraints/api-legacy", "status:deprecated"},
                                    {"verification/test-command-old", "expired"},
                                    {"verification/test-command-tox", "status:rejected"}}));
}

TEST(SelectExpertise, WithoutTaskTagsEveryNodeAppliesAndExpiryIsMidnightUtc) {
  Bundle pack = fixture("python-pack");
  Selection s = select_expertise(pack, policy("2025-12-31T23:59:59Z"));
  EXPECT_EQ(s.excluded, (Exclusions{{"constraints/api-legacy", "status:deprecated"},
                                    {"verification/test-command-tox", "status:rejected"}}));
  EXPECT_EQ(select_expertise(pack, policy("2026-01-01")).find("verification/test-command-old")->reason, "expired");
  EXPECT_THROW(select_expertise(pack, policy("soon")), InputError);
}

TEST(DetectConflicts, SameKeyDifferentTextAmongLiveApplicableNodes) {
  Bundle pack = fixture("python-pack");
  // The two pytest nodes say the same; nose expired, tox was rejected, the
  // deprecated singleton style does not count.
  EXPECT_EQ(detect_conflicts(pack, policy("2026-06-01", {"python-library"})),
            (Conflicts{{"api-style", {"constraints/api-classes", "constraints/api-functions"}, 2}}));
  // A service task sees only the class style.
  EXPECT_TRUE(detect_conflicts(pack, policy("2026-06-01", {"python-service"})).empty());
  // Before nose expired it disagrees with pytest.
  EXPECT_EQ(detect_conflicts(pack, policy("2025-06-01")),
            (Conflicts{{"api-style", {"constraints/api-classes", "constraints/api-functions"}, 2},
                       {"verification-command",
                        {"verification/test-command", "verification/test-command-copy", "verification/test-command-old"},
                        2}}));
}

TEST(DetectConflicts, KeylessNodesAndTrailingWhitespaceDoNotConflict) {
  const auto node = [](const std::string& key, const std::string& body) {
    return okfbench::test::concept_md("type: Constraint\n" + (key.empty() ? "" : "key: " + key + "\n"), body);
  };
  Bundle pack = load_pack(okfbench::test::make_bundle(
      "pack-whitespace", {{"index.md", "---\nversion: 1\n---\n"},
                          {"a.md", node("k", "Use tabs.")},
                          {"b.md", node("k", "Use tabs.\n\n\n")},
                          {"c.md", node("", "Use spaces.")}}));
  EXPECT_EQ(pack_version(pack), "1");
  EXPECT_TRUE(detect_conflicts(pack, policy("2026-06-01")).empty());
}

TEST(SelectExpertise, ContextLeavesExcludedNodesOut) {
  Bundle pack = fixture("python-pack");
  SearchIndex index = SearchIndex::build(pack);
  ContextOptions options;
  options.k = 10;
  options.expand_hops = 0;
  options.budget_tokens = 4000;
  options.filters.selection =
      std::make_shared<const Selection>(select_expertise(pack, policy("2026-06-01", {"python-library"})));
  ContextPack pack_out = pack_context(pack, index, "run the tests public API", options);
  Ids ids;
  for (const PackEntry& e : pack_out.concepts) ids.push_back(e.id);
  // Every kept node matches a word ("the" is no stop word here); the four
  // excluded ones never enter, whatever they score.
  EXPECT_EQ(ids, (Ids{"constraints/api-functions", "constraints/api-classes", "verification/test-command",
                      "verification/test-command-copy", "failure-modes/mutable-defaults", "assumptions/python-version"}));
  EXPECT_EQ(pack_out.excluded, (Exclusions{{"constraints/api-handlers", "inapplicable"},
                                           {"constraints/api-legacy", "status:deprecated"},
                                           {"verification/test-command-old", "expired"},
                                           {"verification/test-command-tox", "status:rejected"}}));
}

}  // namespace
}  // namespace okfbench::retrieval
