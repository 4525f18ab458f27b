#pragma once
// Reranking: a second stage after search that re-scores the top candidates
// with a model that reads the query and each candidate's text together (a
// cross-encoder behind a `/rerank` endpoint, or the offline `sim` reranker
// in agents/rerankers.hpp), and the retrieval methods that context() and the
// agent's search tool choose between:
//
//   bm25f          the lexical index alone (retrieval/search.hpp)
//   hybrid         BM25F fused with embeddings by RRF (retrieval/hybrid.hpp)
//   hybrid+rerank  hybrid's top `depth` candidates reordered by a Reranker
//
// rerank() keeps the candidates' order among equal scores, so a reranker that
// scores every text the same leaves the first stage's order as it was.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "retrieval/hybrid.hpp"
#include "retrieval/search.hpp"

namespace okfbench::retrieval {

class Reranker {
 public:
  virtual ~Reranker() = default;
  // The model, as cache keys and reports name it ("sim", "http:bge-reranker-v2-m3").
  virtual std::string name() const = 0;
  // One relevance score per document, in the documents' order, higher is
  // better. Throws InputError when the provider's answer is unusable.
  virtual std::vector<double> score(std::string_view query, const std::vector<std::string>& documents) = 0;
};

// The text a concept is reranked as: "title\n\ndescription\n\nbody", cut to
// max_chars on a UTF-8 boundary.
std::string rerank_text(const Concept& item, std::size_t max_chars);

// `candidates` (best first, with concepts) re-scored by `reranker` and
// sorted by its score, ties in the candidates' order; at most `limit`.
// Hits carry the reranker's score. Throws InputError when the reranker
// returns a different number of scores or one that is not finite.
std::vector<Hit> rerank(const std::vector<Hit>& candidates, Reranker& reranker, std::string_view query,
                        std::size_t limit, std::size_t max_chars = 4000);

enum class RetrievalMethod { bm25f, hybrid, hybrid_rerank };
std::string_view to_string(RetrievalMethod method);  // "bm25f", "hybrid", "hybrid+rerank"
std::optional<RetrievalMethod> parse_retrieval_method(std::string_view name);

// One retrieval method over a bundle's indexes: what context() seeds with
// and what the agent's search tool answers. The indexes, embedder and
// reranker must outlive it; search() is not safe to call from several
// threads at once when an embedder or reranker is set.
class Retriever {
 public:
  explicit Retriever(const SearchIndex& lexical);  // bm25f
  Retriever(const SearchIndex& lexical, const DenseIndex& dense, Embedder& embedder, HybridOptions hybrid);
  Retriever(const SearchIndex& lexical, const DenseIndex& dense, Embedder& embedder, HybridOptions hybrid,
            Reranker& reranker, std::size_t rerank_depth);

  // options.limit hits, best first, under options' filters.
  std::vector<Hit> search(std::string_view query, const SearchOptions& options) const;
  RetrievalMethod method() const { return method_; }

 private:
  RetrievalMethod method_ = RetrievalMethod::bm25f;
  const SearchIndex* lexical_;
  const DenseIndex* dense_ = nullptr;
  Embedder* embedder_ = nullptr;
  HybridOptions hybrid_;
  Reranker* reranker_ = nullptr;
  std::size_t rerank_depth_ = 20;
};

}  // namespace okfbench::retrieval
