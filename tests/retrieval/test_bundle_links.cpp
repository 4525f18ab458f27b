// The pure helpers behind link resolution and frontmatter checks.
#include <gtest/gtest.h>

#include "retrieval/frontmatter.hpp"
#include "retrieval/links.hpp"

namespace okfbench::retrieval {
namespace {

ResolvedHref resolve(std::string_view from, std::string_view href) { return resolve_href(from, href); }

TEST(BundleLinkRules, ResolveHref) {
  EXPECT_EQ(resolve("a/b.md", "/x/y.md").path, "x/y.md");
  EXPECT_EQ(resolve("a/b.md", "y.md").path, "a/y.md");
  EXPECT_EQ(resolve("a/b.md", "./y.md").path, "a/y.md");
  EXPECT_EQ(resolve("a/b/c.md", "../y.md#part").path, "a/y.md");
  EXPECT_EQ(resolve("a/b.md", "my%20file.md?x=1").path, "a/my file.md");
  ResolvedHref dir = resolve("a/b.md", "tables/");
  EXPECT_EQ(dir.path, "a/tables");
  EXPECT_TRUE(dir.directory);
  EXPECT_EQ(resolve("a/b.md", "https://x.org/y.md").kind, HrefKind::external);
  EXPECT_EQ(resolve("a/b.md", "mailto:me@x.org").kind, HrefKind::external);
  EXPECT_EQ(resolve("a/b.md", "//cdn.x.org/y.md").kind, HrefKind::external);
  EXPECT_EQ(resolve("a/b.md", "#top").kind, HrefKind::anchor);
  EXPECT_EQ(resolve("a/b.md", "../../y.md").kind, HrefKind::escapes_root);
  EXPECT_EQ(resolve("a/b.md", "/../y.md").kind, HrefKind::escapes_root);
  EXPECT_EQ(resolve("a/b.md", "%2e%2e/%2e%2e/y.md").kind, HrefKind::escapes_root);
  EXPECT_EQ(resolve("b.md", "x/../y.md").path, "y.md");
}

TEST(BundleLinkRules, PercentDecodeKeepsMalformedEscapes) {
  EXPECT_EQ(percent_decode("a%20b%2Fc"), "a b/c");
  EXPECT_EQ(percent_decode("100%"), "100%");
  EXPECT_EQ(percent_decode("%zz%4"), "%zz%4");
}

TEST(BundleLinkRules, RelationFromHeading) {
  EXPECT_EQ(relation_from_heading("Joins with"), "JOINS_WITH");
  EXPECT_EQ(relation_from_heading("  Depends on: "), "DEPENDS_ON");
  EXPECT_EQ(relation_from_heading("ADR 0005 / supersedes"), "ADR_0005_SUPERSEDES");
  EXPECT_EQ(relation_from_heading(""), "LINKS_TO");
  EXPECT_EQ(relation_from_heading("--"), "LINKS_TO");
}

TEST(BundleLinkRules, NormalizeReference) {
  EXPECT_EQ(normalize_reference("/a/b.md"), "a/b");
  EXPECT_EQ(normalize_reference("./a/b"), "a/b");
  EXPECT_EQ(normalize_reference("a/b.md#x"), "a/b");
  EXPECT_EQ(normalize_reference("../a"), std::nullopt);
  EXPECT_EQ(normalize_reference("https://x.org/a.md"), std::nullopt);
  EXPECT_EQ(normalize_reference(""), std::nullopt);
  // Found by tests/fuzz (fuzz_concept): "...md" lost its ".md" after the dot
  // segments were resolved and became "..", an id that climbs.
  EXPECT_EQ(normalize_reference("/glossary/cardinality-estimate/...md"), std::nullopt);
  EXPECT_EQ(normalize_reference("a/..md"), std::nullopt);
  EXPECT_EQ(normalize_reference("...md"), std::nullopt);
  EXPECT_EQ(normalize_reference("a/....md"), "a/...");  // not a dot segment: it does not climb
}

TEST(BundleFrontmatterRules, Timestamps) {
  EXPECT_EQ(parse_timestamp("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parse_timestamp("1970-01-02"), 86400);
  EXPECT_EQ(parse_timestamp("2026-06-30T14:00:00Z"), 1782828000);
  EXPECT_EQ(parse_timestamp("2026-06-30T16:00:00+02:00"), 1782828000);
  EXPECT_EQ(parse_timestamp("2026-06-30T14:00:00.123Z"), 1782828000);
  EXPECT_EQ(parse_timestamp("2026-06-30T14:00Z"), 1782828000);
  EXPECT_FALSE(parse_timestamp("2026-06-30T14:00:00"));  // no offset
  EXPECT_FALSE(parse_timestamp("2026-02-30"));
  EXPECT_FALSE(parse_timestamp("2026-13-01T00:00:00Z"));
  EXPECT_FALSE(parse_timestamp("2026-06-30T24:00:00Z"));
  EXPECT_FALSE(parse_timestamp("next tuesday"));
  EXPECT_FALSE(parse_timestamp(""));
}

TEST(BundleFrontmatterRules, Actors) {
  EXPECT_EQ(classify_actor("human:ahormati"), ActorKind::human);
  EXPECT_EQ(classify_actor("process:finance-nightly"), ActorKind::process);
  EXPECT_EQ(classify_actor("reference_agent/gemini-2.5-pro"), ActorKind::agent);
  EXPECT_FALSE(classify_actor("human:"));
  EXPECT_FALSE(classify_actor("human:a b"));
  EXPECT_FALSE(classify_actor("alice"));
  EXPECT_FALSE(classify_actor("/1.0"));
  EXPECT_FALSE(classify_actor(""));
}

TEST(BundleFrontmatterRules, SplitFrontmatter) {
  SplitDocument doc = split_frontmatter("---\ntype: X\n---\nBody\n");
  EXPECT_EQ(doc.fence, Fence::closed);
  EXPECT_EQ(doc.yaml, "type: X\n");
  EXPECT_EQ(doc.body, "Body\n");
  EXPECT_EQ(doc.body_line, 4);
  EXPECT_EQ(split_frontmatter("---\ntype: X\n...\n").fence, Fence::closed);
  EXPECT_EQ(split_frontmatter("---\ntype: X\n").fence, Fence::unterminated);
  EXPECT_EQ(split_frontmatter("# Title\n---\n").fence, Fence::none);
  EXPECT_EQ(split_frontmatter("----\n").fence, Fence::none);
}

}  // namespace
}  // namespace okfbench::retrieval
