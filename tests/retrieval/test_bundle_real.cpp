// The four real OKF bundles from the reference data and the project's demo
// bundle. Counts were checked by hand against the files (grep for "](" minus
// external URLs per concept file; retrieval/docs/real-bundles.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "retrieval/bundle.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {
namespace fs = std::filesystem;
using ::testing::ElementsAre;

Bundle load_real(const std::string& name) { return Bundle::load(okfbench::test::data_root() / "okf" / name); }

std::size_t count_trust(const Bundle& bundle, TrustTier tier) {
  return std::count_if(bundle.concepts().begin(), bundle.concepts().end(),
                       [tier](const Concept& item) { return item.trust == tier; });
}

std::size_t count_stale(const Bundle& bundle, const std::string& now) {
  return std::count_if(bundle.concepts().begin(), bundle.concepts().end(),
                       [&](const Concept& item) { return item.is_stale(now); });
}

class RealBundles : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!okfbench::test::have_data()) GTEST_SKIP() << "no reference data at " << okfbench::test::data_root();
  }
};

TEST_F(RealBundles, AcmeRetail) {
  Bundle bundle = load_real("acme_retail");
  EXPECT_EQ(bundle.concepts().size(), 9u);
  EXPECT_EQ(bundle.link_count(), 15u);
  EXPECT_EQ(bundle.broken_link_count(), 0u);
  EXPECT_TRUE(bundle.diagnostics().empty());
  EXPECT_EQ(bundle.layers(), (std::map<std::string, std::size_t>{
                                 {"computations", 2}, {"metrics", 3}, {"policies", 2}, {"skills", 1}, {"tables", 1}}));
  EXPECT_EQ(count_trust(bundle, TrustTier::human_reviewed), 8u);
  EXPECT_EQ(bundle.find("skills/run-on-bq")->trust, TrustTier::unverified);
  EXPECT_EQ(bundle.find("metrics/gross-margin-legacy")->status, Status::deprecated);
  EXPECT_EQ(count_stale(bundle, "2026-12-30T23:59:59Z"), 0u);
  EXPECT_EQ(count_stale(bundle, "2026-12-31T00:00:00Z"), 7u);
  // The log carries frontmatter; its four dated entries still load.
  std::vector<LogEntry> history = bundle.history();
  ASSERT_EQ(history.size(), 4u);
  EXPECT_EQ(history[0].date, "2026-07-01");
  EXPECT_EQ(history[0].kind, "Verified");
  EXPECT_EQ(bundle.history("metrics/revenue").size(), 1u);
  EXPECT_EQ(bundle.history("metrics/gross-margin-legacy").size(), 1u);
  // Backlinks: who cites the revenue computation.
  std::vector<std::string> in;
  for (const Neighbor& n : bundle.neighbors("computations/revenue-ytd", Direction::in)) in.push_back(n.id);
  EXPECT_THAT(in, ElementsAre("computations/gross-margin-period", "metrics/revenue", "policies/revenue-recognition"));
  const Concept* margin = bundle.find("metrics/gross-margin");
  EXPECT_EQ(margin->extra.count("not"), 1u);  // unknown keys are kept
  EXPECT_EQ(margin->sources.size(), 2u);
  EXPECT_EQ(margin->citations.size(), 3u);  // 2 sources + the one referenced footnote
  // The footnote [^margin-standard] marks the source margin-standard: one citation in every view.
  std::vector<std::string> labels;
  for (const Citation& c : distinct_citations(*margin)) labels.push_back(c.label);
  EXPECT_EQ(std::count(labels.begin(), labels.end(), "margin-standard"), 1);
  EXPECT_EQ(labels.size(), 2u);
  EXPECT_FALSE(bundle.index("attesters")->synthesized);
}

TEST_F(RealBundles, StackOverflow) {
  Bundle bundle = load_real("stackoverflow");
  EXPECT_EQ(bundle.concepts().size(), 26u);
  EXPECT_EQ(bundle.link_count(), 61u);
  EXPECT_EQ(bundle.broken_link_count(), 0u);
  EXPECT_TRUE(bundle.diagnostics().empty());
  EXPECT_EQ(bundle.layers(),
            (std::map<std::string, std::size_t>{{"datasets", 1}, {"references", 9}, {"tables", 16}}));
  EXPECT_EQ(bundle.find("tables/stackoverflow_posts")->status, Status::deprecated);
  EXPECT_EQ(count_trust(bundle, TrustTier::unverified), 26u);
  const Concept* questions = bundle.find("tables/posts_questions");
  ASSERT_EQ(questions->links.size(), 11u);
  EXPECT_EQ(questions->links.back().relation, "JOINS");
  EXPECT_EQ(questions->links.back().target, "references/joins/post_links__posts");
  EXPECT_TRUE(bundle.history().empty());
}

TEST_F(RealBundles, Ga4) {
  Bundle bundle = load_real("ga4");
  EXPECT_EQ(bundle.concepts().size(), 9u);
  EXPECT_EQ(bundle.link_count(), 9u);
  EXPECT_EQ(bundle.broken_link_count(), 0u);
  EXPECT_TRUE(bundle.diagnostics().empty());
  EXPECT_EQ(bundle.find("tables/events_")->links.size(), 7u);
}

TEST_F(RealBundles, CryptoBitcoin) {
  Bundle bundle = load_real("crypto_bitcoin");
  EXPECT_EQ(bundle.concepts().size(), 9u);
  EXPECT_EQ(bundle.link_count(), 25u);
  EXPECT_EQ(bundle.broken_link_count(), 0u);
  EXPECT_TRUE(bundle.diagnostics().empty());
  EXPECT_EQ(bundle.index("references")->subdirs, (std::vector<std::string>{"joins", "metrics"}));
}

TEST(DemoBundle, ShapeTheReadmeRelies) {
  Bundle bundle = Bundle::load(okfbench::test::source_dir() / "datasets/bundles/demo");
  EXPECT_EQ(bundle.concepts().size(), 30u);
  EXPECT_EQ(bundle.layers(), (std::map<std::string, std::size_t>{
                                 {"architecture", 6}, {"decisions", 6}, {"glossary", 6}, {"metrics", 4}, {"runbooks", 8}}));
  EXPECT_EQ(bundle.link_count(), 96u);
  EXPECT_EQ(bundle.broken_link_count(), 1u);  // runbooks/restore-from-backup -> a runbook not yet written
  EXPECT_TRUE(bundle.diagnostics().empty());
  EXPECT_EQ(bundle.history().size(), 8u);
  EXPECT_EQ(count_stale(bundle, "2026-11-29T00:00:00Z"), 1u);
  EXPECT_TRUE(bundle.find("metrics/query-latency-p95")->is_stale("2026-11-29T00:00:00Z"));
  EXPECT_EQ(bundle.find("decisions/0003-nightly-statistics")->status, Status::deprecated);
  EXPECT_EQ(bundle.find("decisions/0006-query-timeouts")->status, Status::draft);
  EXPECT_EQ(bundle.find("runbooks/slow-queries")->trust, TrustTier::human_reviewed);
  EXPECT_EQ(bundle.find("metrics/cache-hit-ratio")->trust, TrustTier::machine_confirmed);
  std::vector<std::string> supersedes;
  for (const Neighbor& n : bundle.neighbors("decisions/0005-statistics-after-load", Direction::out, "SUPERSEDES"))
    supersedes.push_back(n.id);
  EXPECT_THAT(supersedes, ElementsAre("decisions/0003-nightly-statistics"));
  EXPECT_EQ(bundle.history("runbooks/bulk-load").size(), 1u);
}

}  // namespace
}  // namespace okfbench::retrieval
