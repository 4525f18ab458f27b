// Bundle::load on small hand-written bundles: fields, links, graph, layers,
// indexes, logs, determinism and path safety (remember(): test_bundle_remember.cpp).
#include "retrieval/bundle.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {
namespace fs = std::filesystem;
using okfbench::test::concept_md;
using okfbench::test::fresh_dir;
using okfbench::test::make_bundle;
using okfbench::test::write_file;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> targets(const Concept& item) {
  std::vector<std::string> out;
  for (const Link& link : item.links) out.push_back(link.resolved ? link.target : "!" + link.raw);
  return out;
}

std::vector<std::string> ids(const std::vector<Neighbor>& neighbors) {
  std::vector<std::string> out;
  for (const Neighbor& n : neighbors) out.push_back(n.id + "/" + n.relation + "/" + std::to_string(n.hops));
  return out;
}

TEST(BundleLoad, ReadsEveryFrontmatterField) {
  fs::path root = make_bundle("fields", {{"metrics/active-users.md", concept_md(R"(type: Metric
title: Active Users
description: Daily active users.
resource: https://example.com/dau
tags: [metric, engagement]
status: draft
stale_after: 2026-09-27T00:00:00Z
generated: { by: reference_agent/gemini-2.5-pro, at: 2026-06-20T22:53:05Z }
verified:
  - { by: process:nightly, at: 2026-06-26T02:00:00Z }
  - { by: human:analytics-lead, at: 2026-06-25T09:00:00Z }
sources:
  - id: dau-model
    resource: /tables/events.md
    title: DAU model
owner: growth-team
)", "A user is active.[^dau-model]\n\n[^dau-model]: The DAU model\n")}});
  Bundle bundle = Bundle::load(root);
  ASSERT_EQ(bundle.concepts().size(), 1u);
  const Concept& item = bundle.concepts()[0];
  EXPECT_EQ(item.id, "metrics/active-users");
  EXPECT_EQ(item.path, "metrics/active-users.md");
  EXPECT_EQ(item.layer, "metrics");
  EXPECT_EQ(item.type, "Metric");
  EXPECT_EQ(item.title, "Active Users");
  EXPECT_EQ(item.description, "Daily active users.");
  EXPECT_EQ(item.resource, "https://example.com/dau");
  EXPECT_THAT(item.tags, ElementsAre("metric", "engagement"));
  EXPECT_EQ(item.status, Status::draft);
  EXPECT_EQ(item.stale_after, "2026-09-27T00:00:00Z");
  EXPECT_TRUE(item.generated);
  EXPECT_EQ(item.generated_by, "reference_agent/gemini-2.5-pro");
  EXPECT_EQ(item.generated_at, "2026-06-20T22:53:05Z");
  ASSERT_EQ(item.verified.size(), 2u);
  EXPECT_EQ(item.trust, TrustTier::human_reviewed);
  ASSERT_EQ(item.sources.size(), 1u);
  EXPECT_EQ(item.sources[0], (Source{"dau-model", "/tables/events.md", "DAU model", "", "", ""}));
  ASSERT_EQ(item.extra.count("owner"), 1u);
  EXPECT_EQ(item.extra.at("owner"), "growth-team");
  EXPECT_THAT(item.frontmatter_yaml, HasSubstr("owner: growth-team"));
  EXPECT_THAT(item.body, HasSubstr("A user is active."));
  ASSERT_EQ(item.citations.size(), 2u);
  EXPECT_EQ(item.citations[0], (Citation{"dau-model", "DAU model"}));
  EXPECT_EQ(item.citations[1], (Citation{"dau-model", "The DAU model"}));
  EXPECT_TRUE(bundle.diagnostics().empty());
}

TEST(BundleLoad, TrustTiersFollowVerifiedActors) {
  fs::path root = make_bundle("trust", {
      {"a.md", concept_md("type: X\n", "")},
      {"b.md", concept_md("type: X\nverified: { by: process:nightly, at: 2026-01-01T00:00:00Z }\n", "")},
      {"c.md", concept_md("type: X\nverified: [{ by: tool/1.0 }, { by: human:ann }]\n", "")},
      {"d.md", concept_md("type: X\nverified: [{ by: ann }]\n", "")},
  });
  Bundle bundle = Bundle::load(root);
  EXPECT_EQ(bundle.find("a")->trust, TrustTier::unverified);
  EXPECT_EQ(bundle.find("b")->trust, TrustTier::machine_confirmed);
  EXPECT_EQ(bundle.find("c")->trust, TrustTier::human_reviewed);
  EXPECT_EQ(bundle.find("d")->trust, TrustTier::unverified);  // "ann" is no actor
  ASSERT_EQ(bundle.diagnostics().size(), 1u);
  EXPECT_EQ(bundle.diagnostics()[0].path, "d.md");
}

TEST(BundleLoad, StalenessComparesInstantsWithOffsets) {
  fs::path root = make_bundle("stale", {{"a.md", concept_md("type: X\nstale_after: 2026-06-15T00:00:00+02:00\n", "")},
                                        {"b.md", concept_md("type: X\n", "")}});
  Bundle bundle = Bundle::load(root);
  const Concept* a = bundle.find("a");
  EXPECT_FALSE(a->is_stale("2026-06-14T21:59:59Z"));
  EXPECT_TRUE(a->is_stale("2026-06-14T22:00:00Z"));
  EXPECT_FALSE(bundle.find("b")->is_stale("2099-01-01T00:00:00Z"));
}

TEST(BundleLinks, ResolvesEveryHrefForm) {
  fs::path root = make_bundle("links", {
      {"tables/orders.md", concept_md("type: Table\n", "")},
      {"tables/index.md", "# Tables\n"},
      {"tables/my file.md", concept_md("type: Table\n", "")},
      {"metrics/revenue.md", concept_md("type: Metric\nlinks:\n  - { target: /tables/orders.md, rel: depends on }\n",
                                        R"(Intro [root](/tables/orders.md) and [rel](../tables/orders.md#schema)
and [dot](./margin.md) and [bare](margin) and [dir](../tables/) and [idx](/tables/index.md)
and [space](../tables/my%20file.md) and [ref][r] and [missing](/nope.md) and [ext](https://x.org/a.md)
and [mail](mailto:a@b.c) and [anchor](#top) and `[code](/tables/orders.md)` and ![img](/tables/orders.md)
and [asset](/scripts/run.py).

<!-- [comment](/tables/orders.md) -->

```
[fenced](/tables/orders.md)
```

## Joins with

See [orders](/tables/orders.md).[^n]

[r]: /tables/orders.md
[^n]: Per [the margin note](margin.md).
)")},
      {"metrics/margin.md", concept_md("type: Metric\n", "")},
  });
  Bundle bundle = Bundle::load(root);
  const Concept* revenue = bundle.find("metrics/revenue");
  ASSERT_NE(revenue, nullptr);
  EXPECT_THAT(targets(*revenue),
              ElementsAre("tables/orders", "tables/orders", "tables/orders", "metrics/margin", "metrics/margin",
                          "tables/index", "tables/index", "tables/my file", "tables/orders", "!/nope.md",
                          "tables/orders", "metrics/margin"));
  EXPECT_EQ(revenue->links[0].relation, "DEPENDS_ON");
  EXPECT_TRUE(revenue->links[0].from_frontmatter);
  EXPECT_EQ(revenue->links[1].relation, "LINKS_TO");
  EXPECT_EQ(revenue->links[0].line, 4);
  EXPECT_EQ(revenue->links[1].line, 7);
  EXPECT_EQ(revenue->links[10].relation, "JOINS_WITH");
  EXPECT_EQ(revenue->links[11].relation, "CITES");
  EXPECT_EQ(bundle.link_count(), 12u);
  EXPECT_EQ(bundle.broken_link_count(), 1u);
  ASSERT_EQ(bundle.unresolved("metrics/revenue").size(), 1u);
  EXPECT_EQ(bundle.unresolved("metrics/revenue")[0]->raw, "/nope.md");
}

TEST(BundleGraph, NeighborsByDirectionRelationAndHops) {
  fs::path root = make_bundle("graph", {
      {"a.md", concept_md("type: X\n", "# Joins with\n\n[b](b.md)\n\n# See also\n\n[c](c.md)\n")},
      {"b.md", concept_md("type: X\n", "[c](c.md)\n")},
      {"c.md", concept_md("type: X\n", "[d](d.md)\n")},
      {"d.md", concept_md("type: X\n", "")},
  });
  Bundle bundle = Bundle::load(root);
  EXPECT_THAT(ids(bundle.neighbors("a", Direction::out)), ElementsAre("b/JOINS_WITH/1", "c/SEE_ALSO/1"));
  EXPECT_THAT(ids(bundle.neighbors("a", Direction::out, "joins with")), ElementsAre("b/JOINS_WITH/1"));
  EXPECT_THAT(ids(bundle.neighbors("c", Direction::in)), ElementsAre("a/SEE_ALSO/1", "b/LINKS_TO/1"));
  EXPECT_THAT(ids(bundle.neighbors("a", Direction::out, {}, 2)),
              ElementsAre("b/JOINS_WITH/1", "c/SEE_ALSO/1", "d/LINKS_TO/2"));
  EXPECT_THAT(ids(bundle.neighbors("b", Direction::both)), ElementsAre("c/LINKS_TO/1", "a/JOINS_WITH/1"));
  EXPECT_THAT(ids(bundle.neighbors("d", Direction::in, {}, 3)), ElementsAre("c/LINKS_TO/1", "a/SEE_ALSO/2", "b/LINKS_TO/2"));
}

TEST(BundleLayers, CountsIndexesAndSynthesizes) {
  fs::path root = make_bundle("layers", {
      {"index.md", "# Bundle\n\n* [tables](tables/)\n"},
      {"readme.md", concept_md("type: Note\n", "")},
      {"tables/orders.md", concept_md("type: Table\ntitle: Orders\ndescription: One row per order.\n", "")},
      {"tables/archive/old.md", concept_md("type: Table\n", "")},
      {"metrics/index.md", "# Metrics\n\nHand-written.\n"},
      {"metrics/revenue.md", concept_md("type: Metric\n", "")},
  });
  Bundle bundle = Bundle::load(root);
  EXPECT_EQ(bundle.layers(), (std::map<std::string, std::size_t>{{"metrics", 1}, {"tables", 2}}));
  std::optional<LayerIndex> tables = bundle.index("tables");
  ASSERT_TRUE(tables);
  EXPECT_TRUE(tables->synthesized);
  EXPECT_THAT(tables->subdirs, ElementsAre("archive"));
  ASSERT_EQ(tables->concepts.size(), 1u);
  EXPECT_EQ(tables->concepts[0].title, "Orders");
  EXPECT_THAT(tables->text, HasSubstr("* [Orders](orders.md) - One row per order."));
  EXPECT_THAT(tables->text, HasSubstr("* [archive](archive/)"));
  std::optional<LayerIndex> metrics = bundle.index("/metrics/index.md");
  ASSERT_TRUE(metrics);
  EXPECT_FALSE(metrics->synthesized);
  EXPECT_EQ(metrics->text, "# Metrics\n\nHand-written.\n");
  std::optional<LayerIndex> top = bundle.index();
  ASSERT_TRUE(top);
  EXPECT_THAT(top->subdirs, ElementsAre("metrics", "tables"));
  EXPECT_EQ(top->concepts.size(), 1u);
  EXPECT_FALSE(bundle.index("nope"));
}

TEST(BundleHistory, ReadsEveryLogNewestFirstAndFiltersByConcept) {
  fs::path root = make_bundle("history", {
      {"log.md", "---\ntype: Log\n---\n\n# History\n\n## 2026-07-01\n\n- **Verified** the bundle.\n\n"
                 "## 2026-06-30\n\n* **Update**: Re-generated `metrics/revenue.md`.\n  Second line.\n"},
      {"metrics/log.md", "# Metrics log\n\n## 2026-06-30\n\n* **Creation**: Added [revenue](revenue.md).\n"
                         "## 2026-13-01\n\n* **Bad**: never read\n"},
      {"metrics/revenue.md", concept_md("type: Metric\n", "")},
  });
  Bundle bundle = Bundle::load(root);
  std::vector<LogEntry> all = bundle.history();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], (LogEntry{"2026-07-01", "Verified", "the bundle.", ""}));
  EXPECT_EQ(all[1], (LogEntry{"2026-06-30", "Update", "Re-generated `metrics/revenue.md`. Second line.", ""}));
  EXPECT_EQ(all[2], (LogEntry{"2026-06-30", "Creation", "Added [revenue](revenue.md).", "metrics"}));
  EXPECT_EQ(bundle.history("metrics/revenue").size(), 2u);
  EXPECT_EQ(bundle.history("/metrics/revenue.md").size(), 2u);
  ASSERT_EQ(bundle.diagnostics().size(), 1u);
  EXPECT_EQ(bundle.diagnostics()[0].path, "metrics/log.md");
  EXPECT_EQ(bundle.diagnostics()[0].line, 6);
}

TEST(BundlePaths, LookupsNeverLeaveTheRoot) {
  fs::path root = make_bundle("paths", {{"tables/orders.md", concept_md("type: X\n", "")}});
  write_file(root.parent_path() / "secret.md", concept_md("type: Secret\n", ""));
  Bundle bundle = Bundle::load(root);
  EXPECT_NE(bundle.lookup("/tables/orders.md"), nullptr);
  EXPECT_NE(bundle.lookup("./tables/orders"), nullptr);
  EXPECT_NE(bundle.lookup("tables/orders.md#schema"), nullptr);
  EXPECT_EQ(bundle.find("/tables/orders.md"), nullptr);  // find() takes ids only
  for (std::string bad : {"../secret", "../secret.md", "/../secret.md", "tables/../../secret", "/etc/passwd"}) {
    EXPECT_EQ(bundle.lookup(bad), nullptr) << bad;
    EXPECT_TRUE(bundle.neighbors(bad, Direction::both).empty()) << bad;
    EXPECT_TRUE(bundle.unresolved(bad).empty()) << bad;
    EXPECT_TRUE(bundle.history(bad).empty()) << bad;
    EXPECT_FALSE(bundle.index(bad)) << bad;
  }
  EXPECT_FALSE(bundle.index(".."));
  EXPECT_FALSE(bundle.index("../.."));
}

TEST(BundleWalk, SkipsHiddenAndSymlinksOutOfTheRoot) {
  fs::path outside = make_bundle("walk-outside", {{"leak.md", concept_md("type: Secret\n", "")}});
  fs::path root = make_bundle("walk", {
      {"a.md", concept_md("type: X\n", "")},
      {".git/x.md", concept_md("type: X\n", "")},
      {".hidden.md", concept_md("type: X\n", "")},
      {"notes.txt", "not markdown"},
  });
  fs::create_symlink(outside / "leak.md", root / "leak.md");
  fs::create_directory_symlink(outside, root / "linked");
  fs::create_symlink(root / "a.md", root / "alias.md");
  Bundle bundle = Bundle::load(root);
  std::vector<std::string> found;
  for (const Concept& item : bundle.concepts()) found.push_back(item.id);
  EXPECT_THAT(found, ElementsAre("a", "alias"));
  ASSERT_EQ(bundle.diagnostics().size(), 2u);
  EXPECT_EQ(bundle.diagnostics()[0].path, "leak.md");
  EXPECT_EQ(bundle.diagnostics()[1].path, "linked");
  EXPECT_THAT(bundle.diagnostics()[0].message, HasSubstr("outside the bundle root"));
  EXPECT_EQ(bundle.diagnostics()[0].severity, Severity::error);
}

TEST(BundleWalk, NotADirectoryIsAnInputError) {
  EXPECT_THROW(Bundle::load(fresh_dir("none") / "missing"), InputError);
}

TEST(BundleLoad, ParallelLoadsAreIdentical) {
  std::map<std::string, std::string> files;
  for (int i = 0; i < 300; ++i) {
    files[fmt::format("layer{}/c{}.md", i % 7, i)] =
        concept_md(fmt::format("type: X\ntitle: C{}\n", i),
                   fmt::format("[next](/layer{}/c{}.md) [bad](/missing{}.md)\n", (i + 1) % 7, i + 1, i % 5));
    if (i % 50 == 0) files[fmt::format("broken{}.md", i)] = "no frontmatter\n";
  }
  fs::path root = make_bundle("parallel", files);
  Bundle one = Bundle::load(root, {.threads = 1});
  for (unsigned threads : {2u, 4u}) {
    Bundle many = Bundle::load(root, {.threads = threads});
    ASSERT_EQ(many.concepts().size(), one.concepts().size());
    for (std::size_t i = 0; i < one.concepts().size(); ++i) {
      EXPECT_EQ(many.concepts()[i].id, one.concepts()[i].id);
      EXPECT_EQ(many.concepts()[i].links, one.concepts()[i].links);
    }
    EXPECT_EQ(many.diagnostics(), one.diagnostics());
  }
  EXPECT_EQ(one.concepts().size(), 300u);
  EXPECT_EQ(one.diagnostics().size(), 6u);
  EXPECT_EQ(one.link_count(), 600u);
  EXPECT_EQ(one.broken_link_count(), 301u);  // 300 to /missing*, 1 past the last concept
}

// The walk reaches "x/y.md" before "x-y.md", but ids sort "x-y" < "x.y" <
// "x/y": concepts come out in id order, each with its own body and links.
TEST(BundleLoad, ConceptsAreSortedByIdWithTheirOwnBodiesAndLinks) {
  std::map<std::string, std::string> files;
  std::vector<std::string> ids;
  for (int i = 0; i < 120; ++i) {
    for (const char* form : {"g{}/y", "g{}-y", "g{}.y", "g{}/z/w", "g{}0", "g{}a"}) {
      std::string id = fmt::format(fmt::runtime(form), i);
      ids.push_back(id);
    }
  }
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const std::string& next = ids[(k * 7 + 3) % ids.size()];
    files[ids[k] + ".md"] = concept_md("type: X\n", fmt::format("body of {}\n\n[next](/{}.md)\n", ids[k], next));
  }
  fs::path root = make_bundle("sorted-by-id", files);
  for (unsigned threads : {1u, 2u}) {
    Bundle bundle = Bundle::load(root, {.threads = threads});
    ASSERT_EQ(bundle.concepts().size(), ids.size());
    EXPECT_TRUE(std::is_sorted(bundle.concepts().begin(), bundle.concepts().end(),
                               [](const Concept& a, const Concept& b) { return a.id < b.id; }));
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const Concept* item = bundle.find(ids[k]);
      ASSERT_NE(item, nullptr) << ids[k];
      EXPECT_EQ(item->path, ids[k] + ".md");
      EXPECT_THAT(item->body, HasSubstr("body of " + ids[k] + "\n"));
      EXPECT_THAT(targets(*item), ElementsAre(ids[(k * 7 + 3) % ids.size()]));
    }
    EXPECT_EQ(bundle.broken_link_count(), 0u);
  }
}

// The walk keeps at most 256 directories open; files below the others are
// opened by their path from the nearest open one. Every file must load either way.
TEST(BundleWalk, ManyDirectoriesAllLoad) {
  std::map<std::string, std::string> files;
  for (int i = 0; i < 400; ++i)
    files[fmt::format("d{}/sub/c{}.md", i, i)] = concept_md("type: X\n", fmt::format("[up](/d{}/sub/c{}.md)\n", (i + 1) % 400, (i + 1) % 400));
  fs::path root = make_bundle("many-dirs", files);
  for (bool io_uring : {true, false}) {
    Bundle bundle = Bundle::load(root, {.io_uring = io_uring});
    EXPECT_EQ(bundle.concepts().size(), 400u);
    EXPECT_TRUE(bundle.diagnostics().empty()) << bundle.diagnostics().front().message;
    EXPECT_EQ(bundle.broken_link_count(), 0u);
  }
}

// Full batches of 32 files are read through io_uring where the kernel allows
// it; plain reads must give the very same bundle, big and over-limit files included.
TEST(BundleLoad, IoUringAndPlainReadsLoadTheSameBundle) {
  std::map<std::string, std::string> files;
  for (int i = 0; i < 300; ++i)
    files[fmt::format("l{}/c{}.md", i % 3, i)] =
        concept_md(fmt::format("type: X\ntitle: C{}\n", i), fmt::format("[next](/l{}/c{}.md)\n", (i + 1) % 3, i + 1));
  files["big.md"] = concept_md("type: X\n", std::string(100'000, 'w') + "\n[c1](/l1/c1.md)\n");
  files["huge.md"] = concept_md("type: X\n", std::string(300'000, 'h'));
  files["empty.md"] = "";
  fs::path root = make_bundle("io-uring", files);
  for (unsigned threads : {1u, 2u}) {
    LoadOptions options{.max_file_bytes = 200'000, .threads = threads};
    Bundle ring = Bundle::load(root, options);
    options.io_uring = false;
    Bundle plain = Bundle::load(root, options);
    ASSERT_EQ(ring.concepts().size(), plain.concepts().size());
    for (std::size_t i = 0; i < ring.concepts().size(); ++i) {
      EXPECT_EQ(ring.concepts()[i].body, plain.concepts()[i].body);
      EXPECT_EQ(ring.concepts()[i].links, plain.concepts()[i].links);
    }
    EXPECT_EQ(ring.diagnostics(), plain.diagnostics());
    EXPECT_EQ(ring.total_bytes(), plain.total_bytes());
  }
  Bundle bundle = Bundle::load(root, {.max_file_bytes = 200'000});
  EXPECT_EQ(bundle.concepts().size(), 301u);  // 300 + big; huge is over the limit, empty is an error
  ASSERT_NE(bundle.find("big"), nullptr);
  EXPECT_EQ(bundle.find("big")->links.size(), 1u);
  EXPECT_EQ(bundle.diagnostics().size(), 2u);
}

TEST(BundleRepoProfile, AcceptsPlainMarkdownWithDerivedTitles) {
  fs::path root = make_bundle("repo", {
      {"tar.md", "# tar\n\n> Archiving utility.\n> More text.\n\n- Create: `tar cf x`\n"},
      {"notes/plain.md", "Just text, see [tar](../tar.md).\n"},
      {"typed.md", concept_md("type: Guide\ntitle: Typed\n", "Body\n")},
  });
  EXPECT_EQ(Bundle::load(root).concepts().size(), 1u);  // okf: only the typed file
  Bundle bundle = Bundle::load(root, {.profile = Profile::repo});
  ASSERT_EQ(bundle.concepts().size(), 3u);
  EXPECT_EQ(bundle.find("tar")->title, "tar");
  EXPECT_EQ(bundle.find("tar")->type, "Document");
  EXPECT_EQ(bundle.find("tar")->description, "Archiving utility. More text.");
  EXPECT_EQ(bundle.find("notes/plain")->title, "plain");
  EXPECT_EQ(bundle.find("typed")->type, "Guide");
  EXPECT_EQ(bundle.link_count(), 1u);
  EXPECT_TRUE(bundle.diagnostics().empty());
}

TEST(BundleRepoProfile, GuardrailsStopDeterministically) {
  std::map<std::string, std::string> files;
  for (int i = 0; i < 10; ++i) files[fmt::format("p{}.md", i)] = fmt::format("# page\n{}\n", std::string(90, 'x'));
  fs::path root = make_bundle("guard", files);
  Bundle few = Bundle::load(root, {.profile = Profile::repo, .max_files = 4});
  EXPECT_EQ(few.concepts().size(), 4u);
  ASSERT_EQ(few.diagnostics().size(), 1u);
  EXPECT_EQ(few.diagnostics()[0].path, "p4.md");
  EXPECT_THAT(few.diagnostics()[0].message, HasSubstr("max_files"));
  Bundle small = Bundle::load(root, {.profile = Profile::repo, .max_total_bytes = 350});
  EXPECT_EQ(small.concepts().size(), 3u);  // 98 bytes each
  EXPECT_THAT(small.diagnostics()[0].message, HasSubstr("max_total_bytes"));
  Bundle capped = Bundle::load(root, {.profile = Profile::repo, .max_file_bytes = 50});
  EXPECT_EQ(capped.concepts().size(), 0u);
  EXPECT_EQ(capped.diagnostics().size(), 10u);
  EXPECT_THAT(capped.diagnostics()[0].message, HasSubstr("over the limit of 50 bytes"));
}

}  // namespace
}  // namespace okfbench::retrieval
