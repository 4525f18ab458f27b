#pragma once
// Hybrid search: the lexical ranking (BM25F, retrieval/search.hpp) fused with
// an embedding ranking by reciprocal rank fusion (Cormack, Clarke and
// Buettcher, "Reciprocal Rank Fusion outperforms Condorcet and individual
// Rank Learning Methods", SIGIR 2009):
//
//   rrf(d) = sum over the rankings r that contain d of 1 / (k + rank_r(d))
//
// with ranks from 1 and k = 60. Each ranking contributes its top `depth`
// documents under the same filters; ties are broken by id ascending.
//
// The embedding ranking is cosine similarity between the query's vector and
// each concept's vector ("title\n\ndescription\n\nbody", cut to
// max_embed_chars). Vectors come from an Embedder; agents/embeddings.hpp has
// the OpenAI-compatible client, the on-disk cache and the offline `sim`
// embedder.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "retrieval/bundle.hpp"
#include "retrieval/search.hpp"

namespace okfbench::retrieval {

class Embedder {
 public:
  virtual ~Embedder() = default;
  // The model, as cache keys and reports name it ("openai:text-embedding-3-small").
  virtual std::string name() const = 0;
  // One vector per text, all of one dimension. Throws InputError when the
  // provider's answer is unusable.
  virtual std::vector<std::vector<float>> embed(const std::vector<std::string>& texts) = 0;
};

struct RankedId {
  std::string id;
  double score = 0.0;
  bool operator==(const RankedId&) const = default;
};

// Fuses rankings (each best first, ids unique within a ranking) by RRF; at
// most `limit` results, best first, ties by id ascending.
std::vector<RankedId> reciprocal_rank_fusion(const std::vector<std::vector<std::string_view>>& rankings,
                                             std::size_t limit, double k = 60.0);

// Scales `v` to length 1; false (and `v` unchanged) for a zero or
// non-finite vector.
bool to_unit_length(std::vector<float>& v);

// The text a concept is embedded as.
std::string embedding_text(const Concept& item, std::size_t max_chars);

class DenseIndex {
 public:
  // Embeds every concept of `bundle` in batches of `batch` texts. Throws
  // InputError when the embedder returns the wrong number of vectors or
  // vectors of different dimensions.
  static DenseIndex build(const Bundle& bundle, Embedder& embedder, std::size_t batch = 64,
                          std::size_t max_embed_chars = 8000);

  // Cosine similarity of `query` with each candidate's vector, best first,
  // ties by id; at most `limit`. Candidates without a vector are skipped.
  std::vector<Hit> rank(const std::vector<float>& query, const std::vector<Hit>& candidates, std::size_t limit) const;

  std::size_t size() const { return ids_.size(); }
  std::size_t dimension() const { return dimension_; }

 private:
  std::vector<std::string> ids_;     // sorted
  std::vector<float> vectors_;       // ids_.size() x dimension_, each of unit length
  std::size_t dimension_ = 0;
};

struct HybridOptions {
  SearchOptions search;     // limit and filters of the fused result
  std::size_t depth = 100;  // documents each ranking contributes
  double rrf_k = 60.0;
};

// Lexical and embedding rankings of `query` fused by RRF. Hits carry the RRF
// score. The embedder embeds the query (one call).
std::vector<Hit> hybrid_search(const SearchIndex& lexical, const DenseIndex& dense, Embedder& embedder,
                               std::string_view query, const HybridOptions& options);

}  // namespace okfbench::retrieval
