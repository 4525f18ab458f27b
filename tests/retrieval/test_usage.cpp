// classify_usage and selection by usage tag, on the fixture vault tests/data/vault/.
#include "retrieval/usage.hpp"

#include <gtest/gtest.h>

#include "retrieval/context.hpp"
#include "retrieval/search.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {

using Tags = std::vector<std::string>;

Bundle load_vault() {
  LoadOptions repo;
  repo.profile = Profile::repo;
  return Bundle::load(okfbench::test::source_dir() / "tests/data/vault", repo);
}

SearchOptions options(std::size_t limit, std::string usage_tag = {}) {
  SearchOptions out;
  out.limit = limit;
  out.usage_tag = std::move(usage_tag);
  return out;
}

std::vector<std::string> ids(const std::vector<Hit>& hits) {
  std::vector<std::string> out;
  for (const Hit& hit : hits) out.emplace_back(hit.id);
  return out;
}

TEST(Usage, TagsFromPathTitleTagsAndFrontmatter) {
  Bundle vault = load_vault();
  std::map<std::string, Tags> seen;
  for (const Concept& c : vault.concepts()) seen[c.id] = classify_usage(c);
  std::map<std::string, Tags> expected{
      {"AGENTS", {"instructions"}},  // the file name
      {"Archive/Old/Setup", {"onboarding"}},
      {"Archive/Roadmap", {}},
      {"Diagram", {}},
      {"Getting Started", {"onboarding"}},  // "started"
      {"Guides/Setup", {"onboarding"}},
      // "troubleshooting" and "slow" in the title, then `usage:` folded.
      {"Guides/Troubleshooting", {"debugging", "incident-response"}},
      {"Home", {}},
      {"Meeting Notes", {}},
      {"Projects/Roadmap", {}},
  };
  EXPECT_EQ(seen, expected);
}

TEST(Usage, RulesAreOrderedAndEveryTagHasWords) {
  Tags tags;
  for (const UsageRule& rule : usage_rules()) {
    tags.emplace_back(rule.tag);
    EXPECT_FALSE(rule.words.empty()) << rule.tag;
  }
  EXPECT_EQ(tags, (Tags{"onboarding", "debugging", "architecture", "reference", "operations", "instructions"}));
  Concept c;
  c.path = "docs/ADR-12 API design.md";
  c.tags = {"Runbook"};
  c.extra["usage"] = "onboarding";  // a declared tag the rules also give is not repeated
  c.title = "Getting started";
  EXPECT_EQ(classify_usage(c), (Tags{"onboarding", "debugging", "architecture", "reference"}));
}

TEST(Usage, SearchAndContextSelectByUsageTag) {
  Bundle vault = load_vault();
  SearchIndex index = SearchIndex::build(vault);
  EXPECT_EQ(ids(index.candidates(options(0, "Onboarding"))),
            (Tags{"Archive/Old/Setup", "Getting Started", "Guides/Setup"}));
  // Home's body names Guides/Setup.md, so it matches "setup" too, but it has no usage tag.
  EXPECT_EQ(ids(index.search("setup", options(10))), (Tags{"Guides/Setup", "Archive/Old/Setup", "Home"}));
  EXPECT_EQ(ids(index.search("setup", options(10, "onboarding"))),
            (Tags{"Guides/Setup", "Archive/Old/Setup"}));
  EXPECT_EQ(ids(index.search("setup", options(10, "debugging"))), Tags{});
  EXPECT_EQ(ids(index.search("slow", options(10, "debugging"))), (Tags{"Guides/Troubleshooting"}));
  EXPECT_EQ(ids(index.search("slow", options(10, "no-such-tag"))), Tags{});

  ContextOptions weaver;
  weaver.strategy = PackStrategy::weaver;
  weaver.k = 0;
  weaver.filters.usage_tag = "onboarding";
  ContextPack pack = pack_context(vault, index, "setup", weaver);
  Tags packed;
  for (const PackEntry& c : pack.concepts) packed.push_back(c.id);
  std::sort(packed.begin(), packed.end());
  EXPECT_EQ(packed, (Tags{"Archive/Old/Setup", "Getting Started", "Guides/Setup"}));

  ContextOptions grafito;
  grafito.expand_hops = 0;
  grafito.filters.usage_tag = "debugging";
  pack = pack_context(vault, index, "cache", grafito);
  ASSERT_EQ(pack.concepts.size(), 1u);
  EXPECT_EQ(pack.concepts[0].id, "Guides/Troubleshooting");
}

}  // namespace
}  // namespace okfbench::retrieval
