// Hybrid search: reciprocal rank fusion, the dense index and their fusion
// with BM25F under the same filters.
#include "retrieval/hybrid.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(ReciprocalRankFusion, SumsOneOverKPlusRankAndBreaksTiesById) {
  std::vector<std::vector<std::string_view>> rankings = {{"a", "b", "c"}, {"c", "a", "d"}};
  std::vector<RankedId> fused = reciprocal_rank_fusion(rankings, 10, 60.0);
  ASSERT_EQ(fused.size(), 4u);
  EXPECT_EQ(fused[0].id, "a");
  EXPECT_DOUBLE_EQ(fused[0].score, 1.0 / 61 + 1.0 / 62);
  EXPECT_EQ(fused[1].id, "c");
  EXPECT_DOUBLE_EQ(fused[1].score, 1.0 / 63 + 1.0 / 61);
  EXPECT_EQ(fused[2].id, "b");
  EXPECT_EQ(fused[3].id, "d");
  EXPECT_EQ(reciprocal_rank_fusion(rankings, 2, 60.0).size(), 2u);
  std::vector<RankedId> tie = reciprocal_rank_fusion({{"y"}, {"x"}}, 10, 60.0);
  EXPECT_EQ(tie[0].id, "x");  // same score: id ascending
  EXPECT_EQ(tie[1].id, "y");
  EXPECT_DOUBLE_EQ(reciprocal_rank_fusion({{"z"}}, 1, 1.0)[0].score, 0.5);
}

// Vectors from fixed words: "cat" -> x, "dog" -> y, "fish" -> z.
class WordEmbedder : public Embedder {
 public:
  std::string name() const override { return "words"; }
  std::vector<std::vector<float>> embed(const std::vector<std::string>& texts) override {
    ++calls;
    std::vector<std::vector<float>> out;
    for (const std::string& text : texts) {
      std::vector<float> v(3, 0.0f);
      if (text.find("cat") != std::string::npos) v[0] += 1;
      if (text.find("dog") != std::string::npos) v[1] += 1;
      if (text.find("fish") != std::string::npos) v[2] += 1;
      out.push_back(v);
    }
    if (drop_one && !out.empty()) out.pop_back();
    if (wrong_dimension && out.size() > 1) out[1].push_back(0.5f);
    return out;
  }
  int calls = 0;
  bool drop_one = false;
  bool wrong_dimension = false;
};

fs::path pets() {
  fs::path root = test::fresh_dir("hybrid");
  auto concept_file = [&](const std::string& id, const std::string& type, const std::string& body) {
    test::write_file(root / (id + ".md"), "---\ntype: " + type + "\ntitle: " + id + "\n---\n" + body + "\n");
  };
  concept_file("a/cats", "Pet", "cat cat care");
  concept_file("a/dogs", "Pet", "dog walking and care");
  concept_file("b/catfish", "Fish", "fish that looks like a cat");
  concept_file("b/empty", "Note", "nothing to see");  // embeds as all zeros: never ranked by meaning
  return root;
}

TEST(DenseIndex, RanksCandidatesByCosine) {
  Bundle bundle = Bundle::load(pets());
  WordEmbedder embedder;
  DenseIndex dense = DenseIndex::build(bundle, embedder, 2);
  EXPECT_EQ(embedder.calls, 2);  // 4 concepts in batches of 2
  EXPECT_EQ(dense.size(), 3u);   // the all-zero one is left out
  EXPECT_EQ(dense.dimension(), 3u);
  SearchIndex lexical = SearchIndex::build(bundle);
  std::vector<Hit> hits = dense.rank({1, 0, 0}, lexical.candidates({}), 10);
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].id, "a/cats");
  EXPECT_DOUBLE_EQ(hits[0].score, 1.0);
  EXPECT_EQ(hits[1].id, "b/catfish");
  EXPECT_NEAR(hits[1].score, 1.0 / std::sqrt(2.0), 1e-6);
  EXPECT_EQ(hits[2].id, "a/dogs");
  EXPECT_DOUBLE_EQ(hits[2].score, 0.0);
  EXPECT_THAT([&] { dense.rank({1, 0}, lexical.candidates({}), 3); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("2 dimensions, the index 3")));
}

TEST(DenseIndex, UnusableEmbeddingsAreErrorsNamingTheModel) {
  Bundle bundle = Bundle::load(pets());
  WordEmbedder short_answer;
  short_answer.drop_one = true;
  EXPECT_THAT([&] { DenseIndex::build(bundle, short_answer); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("words: asked for 4 embeddings, got 3")));
  WordEmbedder ragged;
  ragged.wrong_dimension = true;
  EXPECT_THAT([&] { DenseIndex::build(bundle, ragged); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("has 4 dimensions, the others 3")));
}

TEST(HybridSearch, FusesBothRankingsUnderTheSameFilters) {
  Bundle bundle = Bundle::load(pets());
  WordEmbedder embedder;
  DenseIndex dense = DenseIndex::build(bundle, embedder);
  SearchIndex lexical = SearchIndex::build(bundle);
  HybridOptions options;
  options.search.limit = 10;
  std::vector<Hit> hits = hybrid_search(lexical, dense, embedder, "cat care", options);
  std::vector<std::string_view> words;
  SearchOptions deep;
  deep.limit = 100;
  for (const Hit& h : lexical.search("cat care", deep)) words.push_back(h.id);
  std::vector<std::string_view> meanings;
  for (const Hit& h : dense.rank({1, 0, 0}, lexical.candidates({}), 100)) meanings.push_back(h.id);
  std::vector<RankedId> expected = reciprocal_rank_fusion({words, meanings}, 10);
  ASSERT_EQ(hits.size(), expected.size());
  for (std::size_t i = 0; i < hits.size(); ++i) {
    EXPECT_EQ(hits[i].id, expected[i].id);
    EXPECT_DOUBLE_EQ(hits[i].score, expected[i].score);
    ASSERT_NE(hits[i].concept_ptr, nullptr);
    EXPECT_EQ(hits[i].concept_ptr->id, hits[i].id);
  }
  EXPECT_EQ(hits[0].id, "a/cats");  // first in both
  int calls = embedder.calls;
  EXPECT_TRUE(hybrid_search(lexical, dense, embedder, " \t", options).empty());
  EXPECT_EQ(embedder.calls, calls);  // a blank query is not sent
  options.search.type = "fish";
  std::vector<Hit> fish = hybrid_search(lexical, dense, embedder, "cat care", options);
  ASSERT_EQ(fish.size(), 1u);
  EXPECT_EQ(fish[0].id, "b/catfish");
  options.search.type = "no-such-type";
  EXPECT_TRUE(hybrid_search(lexical, dense, embedder, "cat", options).empty());
}

TEST(SearchIndexCandidates, AreTheDocumentsTheFiltersLetThrough) {
  Bundle bundle = Bundle::load(pets());
  SearchIndex lexical = SearchIndex::build(bundle);
  auto ids = [&](std::string type, std::string layer, std::vector<std::string> tags) {
    SearchOptions o;
    o.type = std::move(type);
    o.layer = std::move(layer);
    o.tags = std::move(tags);
    std::vector<std::string_view> out;
    for (const Hit& h : lexical.candidates(o)) out.push_back(h.id);
    return out;
  };
  EXPECT_EQ(ids("", "", {}), (std::vector<std::string_view>{"a/cats", "a/dogs", "b/catfish", "b/empty"}));
  EXPECT_EQ(ids("PET", "", {}), (std::vector<std::string_view>{"a/cats", "a/dogs"}));
  EXPECT_EQ(ids("", "b", {}), (std::vector<std::string_view>{"b/catfish", "b/empty"}));
  EXPECT_TRUE(ids("", "", {"none"}).empty());
}

}  // namespace
}  // namespace okfbench::retrieval
