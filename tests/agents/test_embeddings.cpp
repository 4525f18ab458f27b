// Embedders: sim, the OpenAI-compatible client over the mock server, the
// response reader's errors and the SQLite cache.
#include "agents/embeddings.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "agents/mock_server.hpp"
#include "core/error.hpp"
#include "retrieval/tokens.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::agents {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

double norm(const std::vector<float>& v) {
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x) * x;
  return std::sqrt(sum);
}

TEST(SimEmbedding, IsAUnitBagOfStemmedWords) {
  std::vector<float> a = sim_embedding("Slow queries after loading");
  EXPECT_EQ(a.size(), 256u);
  EXPECT_NEAR(norm(a), 1.0, 1e-6);
  EXPECT_EQ(a, sim_embedding("the slow QUERY after loads"));  // stop words, case and stems
  EXPECT_NE(a, sim_embedding("fast writes"));
  EXPECT_EQ(norm(sim_embedding("the and of")), 0.0);  // nothing but stop words
}

TEST(EmbeddingsJson, ReadsVectorsInIndexOrderAndNamesWhatIsWrong) {
  std::string body = R"({"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}]})";
  std::vector<std::vector<float>> v = embeddings_from_json(body, 2, "test");
  EXPECT_EQ(v, (std::vector<std::vector<float>>{{1, 2}, {3, 4}}));
  auto fails = [](const std::string& text, std::size_t expected, const std::string& message) {
    EXPECT_THAT([&] { embeddings_from_json(text, expected, "E"); }, ThrowsMessage<InputError>(HasSubstr(message))) << text;
  };
  fails("<html>", 1, "E: the response is not a JSON object");
  fails(R"({"object":"list"})", 1, "no `data` array");
  fails(R"({"data":[{"embedding":[1]}]})", 2, "asked for 2 embeddings, `data` holds 1");
  fails(R"({"data":[{"index":5,"embedding":[1]}]})", 1, "data[0].index is not an index below 1");
  fails(R"({"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]})", 2, "data[1].index 0 appears twice");
  fails(R"({"data":[{"embedding":"AAAA"}]})", 1, "data[0].embedding is not a list of numbers");
  fails(R"({"data":[{"embedding":[1,"x"]}]})", 1, "other than a finite number");
}

TEST(Embedders, UnknownModelIsAUsageError) {
  EXPECT_THROW(make_embedder("gemini:x"), UsageError);
  EXPECT_THROW(make_embedder("openai:"), UsageError);
  EXPECT_EQ(make_embedder("sim")->name(), "sim");
}

struct Server {
  Server() : server(SimOptions{}, *counter) { server.start("127.0.0.1", 0); }
  std::unique_ptr<retrieval::TokenCounter> counter = retrieval::make_counter("o200k_base");
  MockServer server;
};

TEST(OpenAIEmbedder, MatchesSimOverHttpInBatches) {
  Server mock;
  EmbedderOptions options;
  options.endpoint.base_url = mock.server.base_url() + "/v1";
  options.endpoint.api_key = "sk-embed-test";
  options.batch = 2;
  auto embedder = make_embedder("openai:text-embedding-3-small", options);
  EXPECT_EQ(embedder->name(), "openai:text-embedding-3-small");
  std::vector<std::string> texts = {"slow query", "bulk load", "replica lag", "index hints", "plan cache"};
  std::vector<std::vector<float>> vectors = embedder->embed(texts);
  ASSERT_EQ(vectors.size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(vectors[i].size(), 256u);
    for (std::size_t d = 0; d < 256; ++d) EXPECT_FLOAT_EQ(vectors[i][d], sim_embedding(texts[i])[d]);
  }
  EXPECT_EQ(mock.server.requests(), 3u);  // 2 + 2 + 1
}

TEST(CachedEmbedder, SendsOnlyWhatIsNotCachedAndNeverStoresTheKey) {
  Server mock;
  fs::path db = test::fresh_dir("embed-cache") / "embeddings.sqlite";
  const std::string key = "sk-embed-SECRET-1234";
  EmbedderOptions options;
  options.endpoint.base_url = mock.server.base_url() + "/v1";
  options.endpoint.api_key = key;
  options.cache_db = db;
  {
    auto embedder = make_embedder("openai:m", options);
    embedder->embed({"one", "two"});
    EXPECT_EQ(mock.server.requests(), 1u);
    std::vector<std::vector<float>> again = embedder->embed({"two", "three", "one"});
    EXPECT_EQ(mock.server.requests(), 2u);  // only "three" was sent
    EXPECT_EQ(again[0], sim_embedding("two"));
    EXPECT_EQ(again[2], sim_embedding("one"));
  }
  auto reopened = make_embedder("openai:m", options);
  reopened->embed({"one", "two", "three"});
  EXPECT_EQ(mock.server.requests(), 2u);  // all from the file
  auto other_model = make_embedder("openai:other", options);
  other_model->embed({"one"});
  EXPECT_EQ(mock.server.requests(), 3u);  // keys include the model
  for (const fs::path& file : {db, fs::path(db.string() + "-wal")}) {
    if (fs::exists(file)) {
      EXPECT_EQ(test::read_file(file).find(key), std::string::npos) << file;
    }
  }
  EXPECT_THAT([&] {
    EmbedderOptions bad = options;
    bad.cache_db = "/nonexistent/dir/e.sqlite";
    make_embedder("sim", bad);
  }, ThrowsMessage<InputError>(HasSubstr("embedding cache /nonexistent/dir/e.sqlite: cannot open")));
}

}  // namespace
}  // namespace okfbench::agents
