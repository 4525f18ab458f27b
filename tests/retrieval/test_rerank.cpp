// The rerank stage and the retrieval methods (retrieval/rerank.hpp).
#include "retrieval/rerank.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// Scores a text by its length: longer first.
class LengthReranker : public Reranker {
 public:
  std::string name() const override { return "length"; }
  std::vector<double> score(std::string_view, const std::vector<std::string>& documents) override {
    ++calls;
    std::vector<double> out;
    for (const std::string& d : documents) out.push_back(constant ? 1.0 : static_cast<double>(d.size()));
    if (drop_one) out.pop_back();
    if (not_finite) out[0] = std::nan("");
    return out;
  }
  int calls = 0;
  bool constant = false, drop_one = false, not_finite = false;
};

// "cat" -> x, "dog" -> y.
class PetEmbedder : public Embedder {
 public:
  std::string name() const override { return "pets"; }
  std::vector<std::vector<float>> embed(const std::vector<std::string>& texts) override {
    std::vector<std::vector<float>> out;
    for (const std::string& t : texts)
      out.push_back({t.find("cat") != std::string::npos ? 1.0f : 0.0f, t.find("dog") != std::string::npos ? 1.0f : 0.0f});
    return out;
  }
};

fs::path pets() {
  fs::path root = test::fresh_dir("rerank");
  auto concept_file = [&](const std::string& id, const std::string& body) {
    test::write_file(root / (id + ".md"), "---\ntype: Pet\ntitle: " + id + "\n---\n" + body + "\n");
  };
  concept_file("cats", "cat care");
  concept_file("catfish", "a fish that looks like a cat, with whiskers");
  concept_file("dogs", "dog walking, and a cat next door");
  return root;
}

std::vector<std::string> ids(const std::vector<Hit>& hits) {
  std::vector<std::string> out;
  for (const Hit& h : hits) out.emplace_back(h.id);
  return out;
}

SearchOptions limit(std::size_t n) {
  SearchOptions o;
  o.limit = n;
  return o;
}

TEST(Rerank, TextIsTitleDescriptionBodyCutOnACharacter) {
  Concept c;
  c.title = "T";
  c.description = "D";
  c.body = "B";
  EXPECT_EQ(rerank_text(c, 100), "T\n\nD\n\nB");
  EXPECT_EQ(rerank_text(c, 3), "T\n\n");
  c.title = "\xC3\xA9";  // é, two bytes
  EXPECT_EQ(rerank_text(c, 1), "");
}

TEST(Rerank, OrdersByTheRerankerKeepingTiesInTheirOrder) {
  Bundle bundle = Bundle::load(pets());
  SearchIndex lexical = SearchIndex::build(bundle);
  std::vector<Hit> first = lexical.search("cat", limit(10));
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0].id, "cats");  // the title
  LengthReranker length;
  std::vector<Hit> hits = rerank(first, length, "cat", 2);
  EXPECT_EQ(ids(hits), (std::vector<std::string>{"catfish", "dogs"}));  // the longest texts, at most 2
  EXPECT_EQ(hits[0].score, static_cast<double>(rerank_text(*bundle.find("catfish"), 4000).size()));
  length.constant = true;
  EXPECT_EQ(ids(rerank(first, length, "cat", 10)), ids(first));
  EXPECT_TRUE(rerank({}, length, "cat", 5).empty());
  EXPECT_EQ(length.calls, 2);  // nothing to rerank: no call
  length.constant = false;
  length.drop_one = true;
  EXPECT_THAT([&] { rerank(first, length, "cat", 3); },
              ThrowsMessage<InputError>(HasSubstr("length: asked for 3 rerank scores, got 2")));
  length.drop_one = false;
  length.not_finite = true;
  EXPECT_THAT([&] { rerank(first, length, "cat", 3); },
              ThrowsMessage<InputError>(HasSubstr("length: a rerank score is not a finite number")));
}

TEST(Retriever, MethodsAreTheSearchesTheyName) {
  for (RetrievalMethod m : {RetrievalMethod::bm25f, RetrievalMethod::hybrid, RetrievalMethod::hybrid_rerank})
    EXPECT_EQ(parse_retrieval_method(to_string(m)), m);
  EXPECT_EQ(to_string(RetrievalMethod::hybrid_rerank), "hybrid+rerank");
  EXPECT_EQ(parse_retrieval_method("rerank"), std::nullopt);

  Bundle bundle = Bundle::load(pets());
  SearchIndex lexical = SearchIndex::build(bundle);
  PetEmbedder embedder;
  DenseIndex dense = DenseIndex::build(bundle, embedder);
  LengthReranker length;
  HybridOptions hybrid;
  hybrid.depth = 10;
  Retriever bm25f(lexical);
  Retriever fused(lexical, dense, embedder, hybrid);
  Retriever reranked(lexical, dense, embedder, hybrid, length, 3);
  EXPECT_EQ(bm25f.method(), RetrievalMethod::bm25f);
  EXPECT_EQ(reranked.method(), RetrievalMethod::hybrid_rerank);
  EXPECT_EQ(ids(bm25f.search("cat", limit(2))), ids(lexical.search("cat", limit(2))));
  hybrid.search = limit(2);
  EXPECT_EQ(ids(fused.search("cat", limit(2))), ids(hybrid_search(lexical, dense, embedder, "cat", hybrid)));
  // The reranker sees hybrid's top 3 (rerank_depth) and the 2 longest come back.
  EXPECT_EQ(ids(reranked.search("cat", limit(2))), (std::vector<std::string>{"catfish", "dogs"}));
  EXPECT_EQ(length.calls, 1);
}

}  // namespace
}  // namespace okfbench::retrieval
