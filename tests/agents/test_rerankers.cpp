// Rerankers: sim, the /rerank client over the mock server, the response
// reader's errors and the SQLite cache.
#include "agents/rerankers.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agents/embeddings.hpp"
#include "agents/mock_server.hpp"
#include "core/error.hpp"
#include "retrieval/tokens.hpp"
#include "tests/support/test_support.hpp"

namespace okfbench::agents {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(SimReranker, CountsQueryTermsTwiceInTheHeadOnceInTheBody) {
  // Terms of "slow query plan": slow, queri, plan. Head "Slow queries\n\nTriage
  // steps" holds slow and queri (2 + 2), the body holds plan (1): 5 / 9.
  EXPECT_DOUBLE_EQ(sim_rerank_score("slow query plan", "Slow queries\n\nTriage steps\n\nCheck the plan cache."), 5.0 / 9);
  // An empty description still ends the head: plan in the head (2), slow in the body (1).
  EXPECT_DOUBLE_EQ(sim_rerank_score("slow query plan", "Plan\n\n\n\nnothing slow here"), 3.0 / 9);
  EXPECT_DOUBLE_EQ(sim_rerank_score("the", "the slow query"), 0.0);  // no terms: a stop word only
  EXPECT_DOUBLE_EQ(sim_rerank_score("slow", "slow"), 2.0 / 3);        // one block is all head
  auto sim = make_reranker("sim");
  EXPECT_EQ(sim->name(), "sim");
  EXPECT_EQ(sim->score("slow", {"slow", "fast", ""}), (std::vector<double>{2.0 / 3, 0.0, 0.0}));
}

TEST(RerankJson, ReadsScoresByIndexAndNamesWhatIsWrong) {
  EXPECT_EQ(rerank_scores_from_json(
                R"({"results": [{"index": 1, "relevance_score": 0.2}, {"index": 0, "relevance_score": 0.9}]})", 2, "r"),
            (std::vector<double>{0.9, 0.2}));
  auto fails = [](const std::string& body, std::size_t n, const std::string& message) {
    EXPECT_THAT([&] { rerank_scores_from_json(body, n, "rerank http://x/rerank"); },
                ThrowsMessage<InputError>(HasSubstr(message)))
        << body;
  };
  fails("not json", 1, "rerank http://x/rerank: malformed or truncated JSON");
  fails("[1]", 1, "rerank http://x/rerank: the response is not a JSON object");
  fails(R"({"data": []})", 1, "has no `results` array");
  fails(R"({"results": [{"index": 0, "relevance_score": 1}]})", 2, "asked to score 2 documents (top_n), `results` holds 1");
  fails(R"({"results": [{"index": 2, "relevance_score": 1}, {"index": 0, "relevance_score": 1}]})", 2,
        "results[0].index is not an index below 2");
  fails(R"({"results": [{"index": -1, "relevance_score": 1}]})", 1, "results[0].index is not an index below 1");
  fails(R"({"results": [{"index": 0, "relevance_score": 1}, {"index": 0, "relevance_score": 2}]})", 2,
        "results[1].index 0 appears twice");
  fails(R"({"results": [{"index": 0, "relevance_score": "high"}]})", 1, "results[0].relevance_score is not a finite number");
  fails(R"({"results": [{"index": 0, "relevance_score": 1E400}]})", 1, "malformed or truncated JSON");
  fails(std::string(100000, '[') + std::string(100000, ']'), 1, "JSON nests deeper than 128 levels");
}

TEST(Rerankers, UnknownModelIsAUsageError) {
  EXPECT_THROW(make_reranker("cohere:x"), UsageError);
  EXPECT_THROW(make_reranker("http:"), UsageError);
}

struct Server {
  Server() : server(SimOptions{}, *counter) { server.start("127.0.0.1", 0); }
  std::unique_ptr<retrieval::TokenCounter> counter = retrieval::make_counter("o200k_base");
  MockServer server;
};

TEST(HttpReranker, MatchesSimOverTheMockServer) {
  Server mock;
  RerankerOptions options;
  options.endpoint.base_url = mock.server.base_url() + "/v1";
  options.endpoint.api_key = "sk-rerank-test";
  auto reranker = make_reranker("http:bge-reranker-v2-m3", options);
  EXPECT_EQ(reranker->name(), "http:bge-reranker-v2-m3");
  std::vector<std::string> documents = {"Plan\n\n\n\nnothing slow here", "fast", "Slow queries\n\nTriage\n\nplan"};
  std::vector<double> scores = reranker->score("slow query plan", documents);
  ASSERT_EQ(scores.size(), 3u);
  for (std::size_t i = 0; i < documents.size(); ++i)
    EXPECT_DOUBLE_EQ(scores[i], sim_rerank_score("slow query plan", documents[i])) << i;
  EXPECT_EQ(mock.server.requests(), 1u);
  EXPECT_TRUE(reranker->score("q", {}).empty());  // nothing to score: nothing sent
  EXPECT_EQ(mock.server.requests(), 1u);
}

TEST(CachedReranker, SendsOnlyPairsNotYetScoredAndNeverStoresTheKey) {
  Server mock;
  fs::path db = test::fresh_dir("rerank-cache") / "rerank.sqlite";
  const std::string key = "sk-rerank-SECRET-5678";
  RerankerOptions options;
  options.endpoint.base_url = mock.server.base_url() + "/v1";
  options.endpoint.api_key = key;
  options.cache_db = db;
  {
    auto reranker = make_reranker("http:m", options);
    reranker->score("slow", {"slow one", "two"});
    EXPECT_EQ(mock.server.requests(), 1u);
    std::vector<double> again = reranker->score("slow", {"two", "slow three", "slow one"});
    EXPECT_EQ(mock.server.requests(), 2u);  // only "slow three" was sent
    EXPECT_EQ(again, (std::vector<double>{0.0, sim_rerank_score("slow", "slow three"), sim_rerank_score("slow", "slow one")}));
    reranker->score("other query", {"two"});
    EXPECT_EQ(mock.server.requests(), 3u);  // keys include the query
  }
  auto reopened = make_reranker("http:m", options);
  reopened->score("slow", {"slow one", "two", "slow three"});
  EXPECT_EQ(mock.server.requests(), 3u);  // all from the file
  make_reranker("http:other", options)->score("slow", {"two"});
  EXPECT_EQ(mock.server.requests(), 4u);  // keys include the model
  for (const fs::path& file : {db, fs::path(db.string() + "-wal")}) {
    if (fs::exists(file)) {
      EXPECT_EQ(test::read_file(file).find(key), std::string::npos) << file;
    }
  }
  EXPECT_THAT([&] {
    RerankerOptions bad = options;
    bad.cache_db = "/nonexistent/dir/r.sqlite";
    make_reranker("sim", bad);
  }, ThrowsMessage<InputError>(HasSubstr("rerank cache /nonexistent/dir/r.sqlite: cannot open")));
}

}  // namespace
}  // namespace okfbench::agents
