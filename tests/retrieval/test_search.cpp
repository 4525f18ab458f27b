#include "retrieval/search.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {

std::vector<std::string> ids_of(const std::vector<Hit>& hits) {
  std::vector<std::string> ids;
  for (const Hit& h : hits) ids.emplace_back(h.id);
  return ids;
}

Document doc(std::string_view id, std::string_view title, std::string_view body) {
  Document d;
  d.id = id;
  d.title = title;
  d.body = body;
  return d;
}

std::string repeat_word(std::string_view word, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out.append(word).append(" ");
  return out;
}

SearchOptions top(std::size_t k) {
  SearchOptions options;
  options.limit = k;
  return options;
}

SearchOptions with_type(std::string type) {
  SearchOptions options = top(10);
  options.type = std::move(type);
  return options;
}

SearchOptions with_tags(std::vector<std::string> tags) {
  SearchOptions options = top(10);
  options.tags = std::move(tags);
  return options;
}

SearchOptions with_layer(std::string layer) {
  SearchOptions options = top(10);
  options.layer = std::move(layer);
  return options;
}

IndexConfig flat(double k1 = 1.2, double b = 0.75) {
  IndexConfig config;
  config.mode = FieldMode::flat;
  config.k1 = k1;
  config.b = b;
  return config;
}

// Flat corpus: lengths 3, 2, 4 -> avgdl 3.
std::vector<Document> animals() {
  return {
      doc("d1", "cat", "cat dog"),
      doc("d2", "dog", "bird"),
      doc("d3", "fish", "fish fish cat"),
  };
}

TEST(SearchFlat, ScoresAreBm25ByHand) {
  SearchIndex index = SearchIndex::build(animals(), flat());
  auto hits = index.search("cat", top(10));
  ASSERT_EQ(ids_of(hits), (std::vector<std::string>{"d1", "d3"}));
  // df(cat)=2 of N=3: idf = ln(1 + 1.5/2.5) = ln 1.6.
  // d1: tf 2, B = 0.25 + 0.75*3/3 = 1    -> 2/(1.2+2)
  // d3: tf 1, B = 0.25 + 0.75*4/3 = 1.25 -> 0.8/(1.2+0.8)
  EXPECT_NEAR(hits[0].score, 0.470003629 * 0.625, 1e-7);
  EXPECT_NEAR(hits[1].score, 0.470003629 * 0.4, 1e-7);
  EXPECT_EQ(hits[0].concept_ptr, nullptr);
}

TEST(SearchFlat, K1AndBChangeTheScore) {
  SearchIndex index = SearchIndex::build(animals(), flat(0.9, 0.4));
  auto hits = index.search("fish", top(10));
  ASSERT_EQ(ids_of(hits), (std::vector<std::string>{"d3"}));
  // df 1: idf = ln(1 + 2.5/1.5); tf 3, B = 0.6 + 0.4*4/3; tf~ = 3/B.
  double tf = 3.0 / (0.6 + 0.4 * 4.0 / 3.0);
  EXPECT_NEAR(hits[0].score, std::log(1.0 + 2.5 / 1.5) * tf / (0.9 + tf), 1e-6);
}

// Counts past one byte, a count past 16 bits (kept at 65,535 while the
// length goes on) and documents far apart: the build packs each posting, and
// every one must come back as added.
TEST(SearchFlat, LargeCountsAndDistantDocumentsScoreByHand) {
  std::vector<std::string> ids, bodies;
  for (int i = 0; i < 300; ++i) {
    ids.push_back(fmt::format("d{:03}", i));
    std::string body = "filler";
    if (i == 0) body = repeat_word("zeta", 200);
    if (i == 299) body = repeat_word("zeta", 70000);
    bodies.push_back(std::move(body));
  }
  std::vector<Document> docs;
  for (int i = 0; i < 300; ++i) docs.push_back(doc(ids[i], "", bodies[i]));
  SearchIndex index = SearchIndex::build(docs, flat());
  auto hits = index.search("zeta", top(10));
  ASSERT_EQ(ids_of(hits), (std::vector<std::string>{"d299", "d000"}));
  const double avg = (200.0 + 70000.0 + 298.0) / 300.0;
  const double idf = std::log(1.0 + (300.0 - 2.0 + 0.5) / (2.0 + 0.5));
  auto score = [&](double tf, double length) {
    double tf_tilde = tf / (0.25 + 0.75 * length / avg);
    return idf * tf_tilde / (1.2 + tf_tilde);
  };
  EXPECT_NEAR(hits[0].score, score(65535.0, 70000.0), 1e-6);
  EXPECT_NEAR(hits[1].score, score(200.0, 200.0), 1e-6);
  EXPECT_EQ(index.stats().postings, 298u + 2u);
}

// Fielded corpus. Lengths: A title 2, tags 1, description 2, body 3;
// B title 2, tags 0, description 0, body 3. Averages: 2, 0.5, 1, 3.
std::vector<std::string> fruit_tags = {"Fruit"};
std::vector<Document> fruits() {
  Document a = doc("A", "red apple", "red red fruit");
  a.description = "sweet fruit";
  a.tags = fruit_tags;
  a.type = "Food";
  a.layer = "kitchen";
  Document b = doc("B", "green pear", "a red pear");
  b.type = "Plant";
  b.layer = "garden";
  return {a, b};
}

TEST(SearchFielded, ScoresAreBm25fByHand) {
  SearchIndex index = SearchIndex::build(fruits());
  auto hits = index.search("red", top(10));
  ASSERT_EQ(ids_of(hits), (std::vector<std::string>{"A", "B"}));
  // idf = ln(1 + 0.5/2.5) = ln 1.2. A: title 3*1/1 + body 0.5*2/1 = 4.
  // B: body 0.5*1/1 = 0.5.
  EXPECT_NEAR(hits[0].score, std::log(1.2) * 4.0 / 5.2, 1e-7);
  EXPECT_NEAR(hits[1].score, std::log(1.2) * 0.5 / 1.7, 1e-7);
  EXPECT_NEAR(hits[0].score, 0.14024735, 1e-7);

  // "fruit" only in A: tags 2.5/B(1.75) + description 2/B(1.75) + body 0.5/1.
  hits = index.search("fruit", top(10));
  ASSERT_EQ(ids_of(hits), (std::vector<std::string>{"A"}));
  double tf = 2.5 / 1.75 + 2.0 / 1.75 + 0.5;
  EXPECT_NEAR(hits[0].score, std::log(2.0) * tf / (1.2 + tf), 1e-7);
}

TEST(SearchFielded, PluralFormsMatchAtReducedWeight) {
  SearchIndex index = SearchIndex::build(fruits());
  auto apple = index.search("apple", top(10));
  auto apples = index.search("apples", top(10));
  ASSERT_EQ(ids_of(apples), (std::vector<std::string>{"A"}));
  ASSERT_EQ(apple.size(), 1u);
  EXPECT_NEAR(apple[0].score, std::log(2.0) * 3.0 / 4.2, 1e-7);
  EXPECT_NEAR(apples[0].score, 0.95 * apple[0].score, 1e-7);
  auto pears = index.search("pears", top(10));
  EXPECT_EQ(ids_of(pears), (std::vector<std::string>{"B"}));
}

TEST(SearchFielded, QueryTermsAddUp) {
  SearchIndex index = SearchIndex::build(fruits());
  double red = index.search("red", top(1))[0].score;
  double fruit = index.search("fruit", top(1))[0].score;
  EXPECT_NEAR(index.search("red fruit", top(1))[0].score, red + fruit, 1e-7);
  EXPECT_NEAR(index.search("red red", top(1))[0].score, 2 * red, 1e-7);
}

TEST(SearchFielded, StatusMultipliesTheScore) {
  auto docs = fruits();
  double stable = SearchIndex::build(docs).search("red", top(1))[0].score;
  docs[0].status = Status::draft;
  EXPECT_NEAR(SearchIndex::build(docs).search("red", top(1))[0].score, 0.8 * stable, 1e-7);
  docs[0].status = Status::deprecated;
  EXPECT_NEAR(SearchIndex::build(docs).search("red", top(1))[0].score, 0.5 * stable, 1e-7);
}

TEST(SearchFilters, TypeTagsAndLayer) {
  SearchIndex index = SearchIndex::build(fruits());
  EXPECT_EQ(ids_of(index.search("red", with_type("food"))), (std::vector<std::string>{"A"}));
  EXPECT_EQ(ids_of(index.search("red", with_type("PLANT"))), (std::vector<std::string>{"B"}));
  EXPECT_EQ(ids_of(index.search("red", with_tags({"FRUIT"}))), (std::vector<std::string>{"A"}));
  EXPECT_TRUE(index.search("red", with_tags({"fruit", "veg"})).empty());
  EXPECT_EQ(ids_of(index.search("red", with_layer("garden"))), (std::vector<std::string>{"B"}));
  EXPECT_TRUE(index.search("red", with_type("Metric")).empty());
}

TEST(SearchRanking, TiesAreBrokenByIdAscending) {
  std::vector<Document> docs = {
      doc("c", "", "same words"), doc("a", "", "same words"), doc("b", "", "same words")};
  SearchIndex index = SearchIndex::build(docs);
  auto hits = index.search("same", top(10));
  EXPECT_EQ(ids_of(hits), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(hits[0].score, hits[2].score);
  EXPECT_EQ(ids_of(index.search("same", top(2))), (std::vector<std::string>{"a", "b"}));
}

TEST(SearchRanking, LimitsAndEmptyQueries) {
  SearchIndex index = SearchIndex::build(animals(), flat());
  EXPECT_TRUE(index.search("cat", top(0)).empty());
  EXPECT_TRUE(index.search("", top(10)).empty());
  EXPECT_TRUE(index.search("zebra ???", top(10)).empty());
  EXPECT_EQ(clamp_tool_limit(0), 1u);
  EXPECT_EQ(clamp_tool_limit(-3), 1u);
  EXPECT_EQ(clamp_tool_limit(7), 7u);
  EXPECT_EQ(clamp_tool_limit(1000), 50u);
}

// The bounded heap must give exactly the prefix of the full ranking.
TEST(SearchRanking, TopKEqualsPrefixOfFullRanking) {
  std::mt19937 rng(7);
  const std::vector<std::string> words = {"alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"};
  std::vector<std::string> bodies, ids;
  for (int i = 0; i < 300; ++i) {
    std::string body;
    for (int w = 0; w < 1 + static_cast<int>(rng() % 12); ++w) body += words[rng() % words.size()] + " ";
    bodies.push_back(body);
    ids.push_back("doc" + std::to_string(i));
  }
  std::vector<Document> docs;
  for (int i = 0; i < 300; ++i) docs.push_back(doc(ids[i], "", bodies[i]));
  SearchIndex index = SearchIndex::build(docs);
  for (std::string query : {"alpha", "beta gamma", "theta eta zeta delta"}) {
    auto all = index.search(query, top(1000));
    ASSERT_TRUE(std::is_sorted(all.begin(), all.end(), [](const Hit& a, const Hit& b) {
      return a.score > b.score || (a.score == b.score && a.id < b.id);
    }));
    for (std::size_t k : {1u, 5u, 17u}) {
      auto best = index.search(query, top(k));
      ASSERT_EQ(best.size(), k);
      for (std::size_t i = 0; i < k; ++i) {
        EXPECT_EQ(best[i].id, all[i].id);
        EXPECT_EQ(best[i].score, all[i].score);
      }
    }
  }
}

TEST(SearchBuild, RejectsDuplicateIdsAndBadConfig) {
  std::vector<Document> docs = {doc("x", "", "a"), doc("x", "", "b")};
  EXPECT_THROW(SearchIndex::build(docs), InputError);
  std::vector<Document> unnamed = {doc("", "", "a")};
  EXPECT_THROW(SearchIndex::build(unnamed), InputError);
  EXPECT_THROW(SearchIndex::build(animals(), flat(-1, 0.5)), InputError);
  EXPECT_THROW(SearchIndex::build(animals(), flat(1.2, 1.5)), InputError);
}

TEST(SearchBuild, StatsCountTermsPostingsAndTokens) {
  SearchIndex index = SearchIndex::build(animals(), flat());
  IndexStats stats = index.stats();
  EXPECT_EQ(stats.documents, 3u);
  EXPECT_EQ(stats.terms, 4u);     // cat dog bird fish
  EXPECT_EQ(stats.postings, 6u);  // cat:2 dog:2 bird:1 fish:1
  EXPECT_EQ(stats.tokens, 9u);
  IndexConfig lucene = lucene_flat_config();
  EXPECT_EQ(lucene.k1, 0.9);
  EXPECT_EQ(lucene.b, 0.4);
  EXPECT_EQ(lucene.analyzer.stemmer, Stemmer::porter);
}

TEST(SearchThreads, ConcurrentQueriesGiveTheSameResults) {
  SearchIndex index = SearchIndex::build(fruits());
  auto expected = ids_of(index.search("red fruit pear", top(10)));
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < 2000; ++n) {
        if (ids_of(index.search("red fruit pear", top(10))) != expected) ++failures[i];
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, (std::vector<int>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace okfbench::retrieval

namespace okfbench::retrieval {
namespace {

TEST(SearchBundle, IndexesConceptsWithTheirMetadataButNotIndexOrLog) {
  namespace fs = std::filesystem;
  fs::path dir = test::fresh_dir("search-bundle");
  test::write_file(dir / "metrics/active-users.md",
                   "---\ntype: Metric\ntitle: Active Users\ndescription: Daily active users.\n"
                   "tags: [engagement, Metric]\n---\nA user is active when they emit an event.\n");
  test::write_file(dir / "metrics/old-users.md",
                   "---\ntype: Metric\ntitle: Old active users\nstatus: deprecated\n---\nLegacy users count.\n");
  test::write_file(dir / "tables/events.md", "---\ntype: Table\ntitle: Events\n---\nOne row per user event.\n");
  test::write_file(dir / "index.md", "# Index\n\nusers users users\n");
  test::write_file(dir / "log.md", "## 2026-01-01\n\n* **Added**: users\n");
  Bundle bundle = Bundle::load(dir);
  SearchIndex index = SearchIndex::build(bundle);
  EXPECT_EQ(index.stats().documents, 3u);
  auto hits = index.search("users", top(10));
  ASSERT_EQ(ids_of(hits), (std::vector<std::string>{"metrics/active-users", "metrics/old-users", "tables/events"}));
  ASSERT_NE(hits[0].concept_ptr, nullptr);
  EXPECT_EQ(hits[0].concept_ptr->title, "Active Users");
  EXPECT_EQ(hits[0].concept_ptr, bundle.find("metrics/active-users"));
  EXPECT_EQ(hits[2].concept_ptr, bundle.find("tables/events"));
  EXPECT_EQ(ids_of(index.search("users", with_layer("tables"))), (std::vector<std::string>{"tables/events"}));
  EXPECT_EQ(ids_of(index.search("users", with_tags({"ENGAGEMENT", "metric"}))),
            (std::vector<std::string>{"metrics/active-users"}));
  EXPECT_EQ(ids_of(index.search("legacy", with_type("metric"))), (std::vector<std::string>{"metrics/old-users"}));
}

TEST(SearchBundle, RealBundleFindsTheConceptNamedInTheQuery) {
  if (!test::have_data()) GTEST_SKIP() << "no reference data";
  Bundle bundle = Bundle::load(test::data_root() / "okf/stackoverflow");
  SearchIndex index = SearchIndex::build(bundle);
  ASSERT_GT(index.stats().documents, 20u);
  for (const Concept& c : bundle.concepts()) {
    if (c.title.empty()) continue;
    auto hits = index.search(c.title, top(50));
    bool found = std::any_of(hits.begin(), hits.end(), [&](const Hit& h) { return h.id == c.id; });
    EXPECT_TRUE(found) << c.id << " not found by its title '" << c.title << "'";
  }
}

}  // namespace
}  // namespace okfbench::retrieval

namespace okfbench::retrieval {
namespace {

TEST(SearchBuild, ThreadsDoNotChangeTheIndex) {
  std::mt19937 rng(11);
  const std::vector<std::string> words = {"alpha", "Beta", "gamma", "delta", "\xC3\xA9t\xC3\xA9", "zeta", "eta",
                                          "theta", "iota", "kappa", "lambda", "mu"};
  std::vector<std::string> ids, bodies;
  for (int i = 0; i < 9000; ++i) {
    std::string body;
    for (int w = 0; w < 1 + static_cast<int>(rng() % 20); ++w) body += words[rng() % words.size()] + " ";
    std::string id = std::to_string(rng());
    id.insert(0, 1, 'd');  // not "d" + to_string(): GCC 12 gives a false -Wrestrict on that
    ids.push_back(id);
    bodies.push_back(body);
  }
  std::vector<Document> docs;
  for (int i = 0; i < 9000; ++i) {
    Document d;
    d.id = ids[i];
    d.title = std::string_view(bodies[(i + 1) % bodies.size()]).substr(0, 12);  // a view: Document does not own text
    d.body = bodies[i];
    docs.push_back(d);
  }
  auto sorted_ids = ids;  // sort a copy: the documents view into `ids`
  std::sort(sorted_ids.begin(), sorted_ids.end());
  ASSERT_EQ(std::unique(sorted_ids.begin(), sorted_ids.end()), sorted_ids.end());
  IndexConfig one;
  one.threads = 1;
  IndexConfig four;
  four.threads = 4;
  SearchIndex a = SearchIndex::build(docs, one);
  SearchIndex b = SearchIndex::build(docs, four);
  EXPECT_EQ(a.stats().terms, b.stats().terms);
  EXPECT_EQ(a.stats().postings, b.stats().postings);
  EXPECT_EQ(a.stats().tokens, b.stats().tokens);
  for (std::string query : {"alpha", "beta gammas", "\xC3\x89T\xC3\x89 mu iota", "kappa lambda theta eta"}) {
    auto ha = a.search(query, top(50));
    auto hb = b.search(query, top(50));
    ASSERT_EQ(ha.size(), hb.size());
    for (std::size_t i = 0; i < ha.size(); ++i) {
      EXPECT_EQ(ha[i].id, hb[i].id);
      EXPECT_EQ(ha[i].score, hb[i].score);
    }
  }
}

// Several bundles in one index: tests/data/kb/sales and support, and the two
// copied side by side into one bundle. BM25F over the combined index scores
// every concept exactly as the merged bundle does (same documents, same
// statistics), and differently from a bundle's own index.
TEST(SearchIndex, SeveralBundlesShareStatisticsExactlyAsOneMergedBundle) {
  namespace fs = std::filesystem;
  const fs::path kb = okfbench::test::source_dir() / "tests/data/kb";
  const Bundle sales = Bundle::load(kb / "sales");
  const Bundle support = Bundle::load(kb / "support");
  const NamedBundle both[] = {{"sales", &sales}, {"support", &support}};
  const SearchIndex combined = SearchIndex::build(both);
  const fs::path merged_root = okfbench::test::fresh_dir("search-merged");
  fs::copy(kb / "sales", merged_root / "sales", fs::copy_options::recursive);
  fs::copy(kb / "support", merged_root / "support", fs::copy_options::recursive);
  const Bundle merged = Bundle::load(merged_root);
  const SearchIndex merged_index = SearchIndex::build(merged);
  EXPECT_EQ(combined.stats().documents, 5u);
  EXPECT_EQ(combined.stats().terms, merged_index.stats().terms);
  EXPECT_EQ(combined.stats().tokens, merged_index.stats().tokens);

  const std::vector<Hit> hits = combined.search("refund revenue", top(10));
  std::vector<std::string> named;
  for (const Hit& h : hits) named.push_back(std::string(h.bundle) + ":" + std::string(h.id));
  EXPECT_EQ(named, (std::vector<std::string>{"support:runbooks/refunds", "support:runbooks/escalation",
                                             "sales:metrics/revenue", "sales:computations/revenue-year",
                                             "sales:metrics/gross-margin"}));
  std::map<std::string, double> merged_scores;
  for (const Hit& h : merged_index.search("refund revenue", top(10))) merged_scores[std::string(h.id)] = h.score;
  ASSERT_EQ(merged_scores.size(), hits.size());
  for (const Hit& h : hits) {
    EXPECT_EQ(h.concept_ptr->id, h.id);
    EXPECT_DOUBLE_EQ(h.score, merged_scores.at(std::string(h.bundle) + "/" + std::string(h.id))) << h.id;
  }
  // sales alone: fewer documents, and "revenue" in all of them, so another idf.
  const std::vector<Hit> alone = SearchIndex::build(sales).search("refund revenue", top(1));
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].id, "metrics/revenue");
  EXPECT_TRUE(alone[0].bundle.empty());
  EXPECT_NE(alone[0].score, hits[2].score);
}

TEST(SearchIndex, OneIdInTwoBundlesIsTwoHitsTiedByBundleName) {
  const std::filesystem::path root = okfbench::test::fresh_dir("search-two-bundles");
  for (const char* name : {"b", "a"})
    okfbench::test::write_file(root / name / "notes/x.md", "---\ntype: Note\ntitle: Same note\n---\nSame words.\n");
  const Bundle a = Bundle::load(root / "a");
  const Bundle b = Bundle::load(root / "b");
  const NamedBundle both[] = {{"b", &b}, {"a", &a}};
  const SearchIndex index = SearchIndex::build(both);
  const std::vector<Hit> hits = index.search("same note", top(5));
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].bundle, "a");
  EXPECT_EQ(hits[1].bundle, "b");
  EXPECT_EQ(hits[0].id, "notes/x");
  EXPECT_EQ(hits[1].id, "notes/x");
  EXPECT_EQ(hits[0].concept_ptr, a.find("notes/x"));
  EXPECT_EQ(hits[1].concept_ptr, b.find("notes/x"));
  EXPECT_DOUBLE_EQ(hits[0].score, hits[1].score);
  const std::vector<Hit> all = index.candidates(top(5));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].bundle, "a");
  EXPECT_EQ(all[1].bundle, "b");
}

TEST(SearchIndex, TwoBundlesWithOneNameAreAnError) {
  const Bundle sales = Bundle::load(okfbench::test::source_dir() / "tests/data/kb/sales");
  const NamedBundle twice[] = {{"sales", &sales}, {"sales", &sales}};
  try {
    SearchIndex::build(twice);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("two bundles are named 'sales'"), std::string::npos) << e.what();
  }
  const NamedBundle unnamed[] = {{"sales", &sales}, {"", &sales}};
  EXPECT_THROW(SearchIndex::build(unnamed), UsageError);
}

TEST(SearchIndex, ADocumentIdWithANulCharacterIsRefused) {
  const std::string id("a\0b", 3);
  const Document docs[] = {doc(id, "Title", "body")};
  EXPECT_THROW(SearchIndex::build(docs), InputError);
}

}  // namespace
}  // namespace okfbench::retrieval
