#include "retrieval/context.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

#include "core/error.hpp"
#include "retrieval/tokens.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {

namespace fs = std::filesystem;
using okfbench::test::fresh_dir;
using okfbench::test::write_file;

std::string concept_file(const std::string& title, const std::string& description, const std::string& body,
                         const std::string& extra = "") {
  return "---\ntype: Note\ntitle: " + title + "\ndescription: " + description + "\n" + extra + "---\n" + body;
}

// A small bundle: "orders" links to "customers" under a typed heading and to
// "returns" plainly; "customers" links on to "regions" (two hops from orders).
fs::path small_bundle() {
  fs::path root = fresh_dir("context-bundle");
  write_file(root / "tables/orders.md",
             concept_file("Orders", "One row per order.",
                          "Orders placed by customers, with totals.[^src]\n\n# Joins with\n\n"
                          "[Customers](customers.md)\n\n# See also\n\n[Returns](returns.md)\n\n"
                          "[^src]: The orders export.\n"));
  write_file(root / "tables/customers.md",
             concept_file("Customers", "One row per customer.", "Customer master data.\n\n[Regions](regions.md)\n"));
  write_file(root / "tables/regions.md", concept_file("Regions", "Sales regions.", "Regions of the world.\n"));
  write_file(root / "tables/returns.md", concept_file("Returns", "Returned orders.", "Returns of orders.\n"));
  write_file(root / "notes/zebra.md", concept_file("Zebra", "Unrelated.", "Stripes.\n"));
  return root;
}

struct Fixture {
  Bundle bundle;
  SearchIndex index;
  explicit Fixture(const fs::path& root) : bundle(Bundle::load(root)), index(SearchIndex::build(bundle)) {}
};

const TokenCounter& o200k() {
  static auto counter = make_counter("o200k_base");
  return *counter;
}

ContextOptions options_with(std::size_t budget, std::size_t k = 5, int hops = 1) {
  ContextOptions options;
  options.budget_tokens = budget;
  options.k = k;
  options.expand_hops = hops;
  options.counter = &o200k();
  return options;
}

TEST(Context, BlockFormatSeedsAndNeighbours) {
  Fixture f(small_bundle());
  ContextPack pack = pack_context(f.bundle, f.index, "orders totals", options_with(2000, 1, 1));
  ASSERT_GE(pack.concepts.size(), 3u);
  EXPECT_EQ(pack.concepts[0].id, "tables/orders");
  EXPECT_EQ(pack.concepts[0].reason, PackReason::seed);
  const std::string top = "### Orders\nid: tables/orders | type: Note | seed, score ";
  EXPECT_EQ(pack.text.substr(0, top.size()), top);
  EXPECT_NE(pack.text.find("\nOne row per order.\n\nOrders placed by customers, with totals."), std::string::npos)
      << pack.text;
  EXPECT_NE(pack.text.find("\n\nCitations:\n- src: The orders export."), std::string::npos) << pack.text;
  EXPECT_NE(pack.text.find("\n\n### Customers\nid: tables/customers | type: Note | via JOINS_WITH from tables/orders\n"),
            std::string::npos)
      << pack.text;
  auto via = std::find_if(pack.concepts.begin(), pack.concepts.end(), [](auto& c) { return c.id == "tables/customers"; });
  ASSERT_NE(via, pack.concepts.end());
  EXPECT_EQ(via->reason, PackReason::via);
  EXPECT_EQ(via->relation, "JOINS_WITH");
  EXPECT_EQ(via->from, "tables/orders");
  // Only one hop: regions (two hops away) is not there.
  EXPECT_EQ(pack.text.find("### Regions"), std::string::npos);
  EXPECT_FALSE(pack.truncated);
  EXPECT_EQ(pack.tokens, o200k().count(pack.text));
  ASSERT_EQ(pack.citations.size(), 1u);
  EXPECT_EQ(pack.citations[0].concept_id, "tables/orders");
}

TEST(Context, HopsRelationFilterAndCitationsOption) {
  Fixture f(small_bundle());
  auto ids = [](const ContextPack& p) {
    std::vector<std::string> out;
    for (const auto& c : p.concepts) out.push_back(c.id);
    return out;
  };
  auto two = pack_context(f.bundle, f.index, "orders totals", options_with(2000, 1, 2));
  EXPECT_NE(std::find(ids(two).begin(), ids(two).end(), "tables/regions"), ids(two).end());
  auto regions = std::find_if(two.concepts.begin(), two.concepts.end(), [](auto& c) { return c.id == "tables/regions"; });
  EXPECT_EQ(regions->from, "tables/customers");
  EXPECT_EQ(regions->hops, 2);

  auto none = pack_context(f.bundle, f.index, "orders totals", options_with(2000, 1, 0));
  EXPECT_EQ(ids(none), (std::vector<std::string>{"tables/orders"}));

  auto joins_only = options_with(2000, 1, 1);
  joins_only.relation = "JOINS_WITH";
  EXPECT_EQ(ids(pack_context(f.bundle, f.index, "orders totals", joins_only)),
            (std::vector<std::string>{"tables/orders", "tables/customers"}));

  auto omit = options_with(2000, 1, 0);
  omit.citations = Citations::omit;
  auto pack = pack_context(f.bundle, f.index, "orders totals", omit);
  EXPECT_EQ(pack.text.find("Citations:"), std::string::npos);
  EXPECT_TRUE(pack.citations.empty());
}

TEST(Context, NoHitsGivesAnEmptyPack) {
  Fixture f(small_bundle());
  ContextPack pack = pack_context(f.bundle, f.index, "xylophone quartz", options_with(100));
  EXPECT_EQ(pack.text, "");
  EXPECT_TRUE(pack.concepts.empty());
  EXPECT_EQ(pack.tokens, 0u);
  EXPECT_FALSE(pack.truncated);
  EXPECT_THROW(pack_context(f.bundle, f.index, "orders", options_with(0)), UsageError);
}

TEST(Context, SkipsWhatDoesNotFitAndGoesOn) {
  fs::path root = fresh_dir("context-skip");
  write_file(root / "a.md", concept_file("Widget widget widget", "widget", "Summary."));
  write_file(root / "b.md", concept_file("Widget widget", "widget", "Summary."));
  write_file(root / "c.md", concept_file("Widget", "widget", "Short note."));
  // Bodies do not contain the query word, so a long body does not change the
  // ranking: give the second hit a body far over the budget.
  const std::string second = std::string(Fixture(root).index.search("widget").at(1).id);
  std::string long_body;
  for (int i = 0; i < 300; ++i) long_body += "Filler sentence number " + std::to_string(i) + ". ";
  write_file(root / (second + ".md"), concept_file("Widget widget", "widget", long_body));
  Fixture f(root);
  const auto hits = f.index.search("widget");
  ASSERT_EQ(hits.size(), 3u);
  ASSERT_EQ(hits[1].id, second);
  ContextPack pack = pack_context(f.bundle, f.index, "widget", options_with(120, 5, 0));
  std::vector<std::string> ids;
  for (const auto& c : pack.concepts) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{std::string(hits[0].id), std::string(hits[2].id)}));
  EXPECT_EQ(pack.skipped, (std::vector<std::string>{second}));
  EXPECT_TRUE(pack.truncated);
  EXPECT_FALSE(pack.concepts[0].truncated);
  EXPECT_LE(pack.tokens, 120u);
}

TEST(Context, TopHitIsCutOnATokenBoundaryWithAMarker) {
  fs::path root = fresh_dir("context-cut");
  std::string long_body;
  for (int i = 0; i < 400; ++i) long_body += "Gadget detail line " + std::to_string(i) + " \xC3\xA9t\xC3\xA9.\n";
  write_file(root / "big.md", concept_file("Gadget", "gadget", long_body));
  Fixture f(root);
  for (std::size_t budget : {40u, 100u, 333u}) {
    ContextPack pack = pack_context(f.bundle, f.index, "gadget", options_with(budget));
    ASSERT_EQ(pack.concepts.size(), 1u);
    EXPECT_TRUE(pack.concepts[0].truncated);
    EXPECT_TRUE(pack.truncated);
    EXPECT_LE(pack.tokens, budget);
    EXPECT_GE(pack.tokens, budget - 12);  // nearly full: the cut is not wasteful
    auto marker = pack.text.rfind("\n[truncated: ");
    ASSERT_NE(marker, std::string::npos) << pack.text;
    std::string head = pack.text.substr(0, marker);
    // The head is a prefix of the full block that ends on a token boundary.
    ContextPack full = pack_context(f.bundle, f.index, "gadget", options_with(100000));
    ASSERT_EQ(full.text.substr(0, head.size()), head);
    const auto& enc = dynamic_cast<const BpeCounter&>(o200k()).encoding();
    std::size_t at = 0;
    bool boundary = head.empty();
    for (TokenId id : enc.encode_ordinary(full.text)) {
      const TokenId one[] = {id};
      at += enc.decode(one).size();
      if (at == head.size()) boundary = true;
    }
    EXPECT_TRUE(boundary) << "cut at byte " << head.size() << " is not a token boundary";
    EXPECT_NE(pack.text.find(" of " + std::to_string(o200k().count(full.text)) + " tokens shown]"), std::string::npos);
  }
}

std::vector<std::string> queries_from(const Bundle& bundle, std::size_t n) {
  std::vector<std::string> queries = {"zzzz nothing matches this", "the", "", "a b c"};
  std::mt19937 rng(42);
  const auto& concepts = bundle.concepts();
  for (std::size_t i = 0; i < n && !concepts.empty(); ++i) {
    const Concept& c = concepts[rng() % concepts.size()];
    std::string q = c.title;
    if (i % 3 == 1) q += " " + c.description.substr(0, 40);
    if (i % 3 == 2 && !c.tags.empty()) q = c.tags[0];
    queries.push_back(q);
  }
  return queries;
}

// The property of the issue, over real bundles, many queries, budgets from 1
// token up and every counter: the exact count of the final text never exceeds
// the budget, the top hit is always there, `truncated` is exactly "something
// was cut or skipped", and per-block counts add up to the pack's count.
TEST(Context, PropertyBudgetTopHitAndTruncation) {
  if (!okfbench::test::have_data()) GTEST_SKIP() << "no reference data";
  const std::vector<std::size_t> budgets = {1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 300, 700, 2000, 8000};
  int packs = 0;
  for (const char* name : {"stackoverflow", "acme_retail", "ga4"}) {
    Fixture f(okfbench::test::data_root() / "okf" / name);
    for (const std::string& query : queries_from(f.bundle, 12)) {
      for (const auto& counter_name : counter_names()) {
        auto counter = make_counter(counter_name);
        for (std::size_t budget : budgets) {
          ContextOptions options;
          options.budget_tokens = budget;
          options.counter = counter.get();
          options.expand_hops = budget % 2 ? 1 : 2;
          ContextPack pack = pack_context(f.bundle, f.index, query, options);
          ++packs;
          SCOPED_TRACE(std::string(name) + " | " + query + " | " + counter_name + " | " + std::to_string(budget));
          SearchOptions search;
          search.limit = options.k;
          const auto hits = f.index.search(query, search);
          if (hits.empty()) {
            EXPECT_TRUE(pack.concepts.empty());
            EXPECT_EQ(pack.text, "");
            EXPECT_FALSE(pack.truncated);
            continue;
          }
          ASSERT_FALSE(pack.concepts.empty());
          EXPECT_EQ(pack.concepts[0].id, hits[0].id);
          EXPECT_EQ(pack.tokens, counter->count(pack.text));
          EXPECT_LE(pack.tokens, budget);
          EXPECT_FALSE(pack.over_budget);
          bool cut = std::any_of(pack.concepts.begin(), pack.concepts.end(), [](auto& c) { return c.truncated; });
          EXPECT_EQ(pack.truncated, cut || !pack.skipped.empty());
          std::size_t sum = 0;
          for (const auto& c : pack.concepts) sum += c.tokens;
          EXPECT_EQ(sum, pack.tokens);
          for (std::size_t i = 1; i < pack.concepts.size(); ++i) EXPECT_FALSE(pack.concepts[i].truncated);
        }
      }
    }
  }
  EXPECT_GT(packs, 1500);
}

TEST(Context, WeaverConfidenceThatIsNotAFiniteNumberCountsAsOne) {
  // strtod read "nan" (a NaN score that no sort can order) and hex; the checked parser refuses both.
  fs::path root = fresh_dir("context-weaver-confidence");
  write_file(root / "a.md", concept_file("Alpha", "x", "Unrelated text.", "confidence: nan\n"));
  write_file(root / "b.md", concept_file("Beta", "x", "Unrelated text.", "confidence: .inf\n"));
  write_file(root / "c.md", concept_file("Gamma", "x", "Unrelated text.", "confidence: 0x1p-2\n"));
  write_file(root / "d.md", concept_file("Delta", "x", "Unrelated text.", "confidence: 0.5\n"));
  Fixture f(root);
  ContextOptions options = options_with(2000, 0);
  options.strategy = PackStrategy::weaver;
  ContextPack pack = pack_context(f.bundle, f.index, "margin", options);
  std::map<std::string, double> scores;
  for (const auto& c : pack.concepts) scores[c.id] = c.score;
  EXPECT_EQ(scores, (std::map<std::string, double>{{"a", 1.0}, {"b", 1.0}, {"c", 1.0}, {"d", 0.5}}));
}

TEST(Context, WeaverReproducesSelectKnowledge) {
  fs::path root = fresh_dir("context-weaver");
  write_file(root / "b.md", concept_file("Margin policy", "x", "Gross margin policy for retail."));
  write_file(root / "a.md", concept_file("Margin", "x", "Gross margin policy for retail."));
  write_file(root / "c.md", concept_file("Shipping", "x", "Carrier rates.", "confidence: 0.25\n"));
  write_file(root / "d.md", concept_file("Old margin", "x", "Margin before 2026.", "stale_after: 2026-01-01T00:00:00Z\n"));
  write_file(root / "e.md", concept_file("Sure", "x", "Unrelated text.", "confidence: 7\n"));
  Fixture f(root);
  EXPECT_EQ(weaver_words("The Gross-margin_2026 of A a I'm"),
            (std::vector<std::string>{"gross", "margin_2026"}));  // "I'm" gives "i" and "m": too short
  ContextOptions options = options_with(2000, 0);
  options.strategy = PackStrategy::weaver;
  ContextPack pack = pack_context(f.bundle, f.index, "gross margin policy", options);
  std::vector<std::string> ids;
  for (const auto& c : pack.concepts) ids.push_back(c.id);
  // a and b: words {gross, margin, policy, retail}; query {gross, margin, policy}: 3/4 + 1.
  // d: {margin, 2026, old}: 1/5 + 1. e: 0 + clamp(7) = 1. c: 0 + 0.25.
  EXPECT_EQ(ids, (std::vector<std::string>{"a", "b", "d", "e", "c"}));
  EXPECT_DOUBLE_EQ(pack.concepts[0].score, 1.75);
  EXPECT_DOUBLE_EQ(pack.concepts[2].score, 1.2);
  EXPECT_DOUBLE_EQ(pack.concepts[4].score, 0.25);
  EXPECT_EQ(pack.concepts[0].tokens, o200k().count("Gross margin policy for retail."));  // body-only cost
  EXPECT_EQ(pack.strategy, PackStrategy::weaver);

  options.now = "2026-06-01T00:00:00Z";  // d is stale by then
  options.k = 2;
  pack = pack_context(f.bundle, f.index, "gross margin policy", options);
  ASSERT_EQ(pack.concepts.size(), 2u);
  EXPECT_EQ(pack.concepts[1].id, "b");
  options.k = 0;
  pack = pack_context(f.bundle, f.index, "gross margin policy", options);
  EXPECT_TRUE(std::none_of(pack.concepts.begin(), pack.concepts.end(), [](auto& c) { return c.id == "d"; }));

  // Greedy by body cost, skipping what does not fit: a (6 tokens) fits, b does not, tiny ones do.
  options.budget_tokens = o200k().count("Gross margin policy for retail.") + 4;
  pack = pack_context(f.bundle, f.index, "gross margin policy", options);
  EXPECT_EQ(pack.concepts[0].id, "a");
  EXPECT_EQ(pack.skipped.front(), "b");
  EXPECT_TRUE(pack.truncated);
  std::size_t cost = 0;
  for (const auto& c : pack.concepts) cost += c.tokens;
  EXPECT_LE(cost, options.budget_tokens);
  EXPECT_EQ(pack.tokens, o200k().count(pack.text));
  EXPECT_EQ(pack.over_budget, pack.tokens > options.budget_tokens);
}

std::vector<std::string> entry_names(const ContextPack& pack) {
  std::vector<std::string> entries;
  for (const PackEntry& e : pack.concepts)
    entries.push_back(e.bundle + ":" + e.id + " " + std::string(to_string(e.reason)) +
                      (e.from.empty() ? "" : " from " + e.from));
  return entries;
}

// Several bundles (tests/data/kb/sales and support): seeds from the combined
// index, expansion inside each seed's bundle, every block and entry named.
TEST(Context, SeveralBundlesSeedFromOneIndexAndExpandInsideEachBundle) {
  const fs::path kb = okfbench::test::source_dir() / "tests/data/kb";
  const Bundle sales = Bundle::load(kb / "sales");
  const Bundle support = Bundle::load(kb / "support");
  const NamedBundle both[] = {{"sales", &sales}, {"support", &support}};
  const SearchIndex index = SearchIndex::build(both);
  ContextOptions options;
  options.k = 2;
  options.budget_tokens = 4000;
  const ContextPack pack = pack_context(both, index, "disputed refund", options);
  EXPECT_EQ(entry_names(pack), (std::vector<std::string>{"support:runbooks/refunds seed", "support:runbooks/escalation seed"}));
  EXPECT_NE(pack.text.find("id: runbooks/refunds | bundle: support | type: Runbook | seed, score "), std::string::npos)
      << pack.text;
  // support's /metrics/revenue.md does not resolve inside support: no edge into sales.
  EXPECT_EQ(pack.text.find("bundle: sales"), std::string::npos);

  options.k = 1;
  const ContextPack margin = pack_context(both, index, "gross margin", options);
  EXPECT_EQ(entry_names(margin), (std::vector<std::string>{"sales:metrics/gross-margin seed",
                                                           "sales:metrics/revenue via from metrics/gross-margin"}));
  EXPECT_NE(margin.text.find("id: metrics/revenue | bundle: sales | type: Metric | via LINKS_TO from metrics/gross-margin"),
            std::string::npos)
      << margin.text;

  options.k = 3;
  options.strategy = PackStrategy::weaver;
  const ContextPack woven = pack_context(both, index, "refund revenue", options);
  EXPECT_EQ(entry_names(woven), (std::vector<std::string>{"support:runbooks/refunds seed", "sales:metrics/gross-margin seed",
                                                          "sales:metrics/revenue seed"}));
}

TEST(Context, OneBundleNamesNoBundle) {
  const Bundle sales = Bundle::load(okfbench::test::source_dir() / "tests/data/kb/sales");
  const SearchIndex index = SearchIndex::build(sales);
  ContextOptions options;
  options.k = 1;
  const ContextPack pack = pack_context(sales, index, "gross margin", options);
  EXPECT_EQ(entry_names(pack), (std::vector<std::string>{":metrics/gross-margin seed",
                                                         ":metrics/revenue via from metrics/gross-margin"}));
  EXPECT_EQ(pack.text.find("bundle:"), std::string::npos);
}

TEST(Context, SeveralBundlesRefuseTwoWithOneName) {
  const Bundle sales = Bundle::load(okfbench::test::source_dir() / "tests/data/kb/sales");
  const NamedBundle one[] = {{"sales", &sales}};
  const SearchIndex index = SearchIndex::build(one);
  const NamedBundle twice[] = {{"sales", &sales}, {"sales", &sales}};
  EXPECT_THROW(pack_context(twice, index, "revenue", ContextOptions{}), UsageError);
}

}  // namespace
}  // namespace okfbench::retrieval
