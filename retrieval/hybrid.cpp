#include "retrieval/hybrid.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "retrieval/utf8.hpp"

namespace okfbench::retrieval {
namespace {

bool better(const Hit& a, const Hit& b) { return a.score != b.score ? a.score > b.score : a.id < b.id; }

}  // namespace

bool to_unit_length(std::vector<float>& v) {
  double norm = 0.0;
  for (float x : v) norm += static_cast<double>(x) * x;
  if (!(norm > 0.0) || !std::isfinite(norm)) return false;
  auto scale = static_cast<float>(1.0 / std::sqrt(norm));
  for (float& x : v) x *= scale;
  return true;
}

std::vector<RankedId> reciprocal_rank_fusion(const std::vector<std::vector<std::string_view>>& rankings,
                                             std::size_t limit, double k) {
  std::map<std::string_view, double> fused;
  for (const auto& ranking : rankings)
    for (std::size_t rank = 0; rank < ranking.size(); ++rank) fused[ranking[rank]] += 1.0 / (k + static_cast<double>(rank + 1));
  std::vector<RankedId> out;
  out.reserve(fused.size());
  for (const auto& [id, score] : fused) out.push_back({std::string(id), score});
  std::stable_sort(out.begin(), out.end(), [](const RankedId& a, const RankedId& b) { return a.score > b.score; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::string embedding_text(const Concept& item, std::size_t max_chars) {
  std::string text = item.title;
  if (!item.description.empty()) text += "\n\n" + item.description;
  if (!item.body.empty()) text += "\n\n" + item.body;
  return std::string(utf8_prefix(text, max_chars));
}

DenseIndex DenseIndex::build(const Bundle& bundle, Embedder& embedder, std::size_t batch, std::size_t max_embed_chars) {
  DenseIndex index;
  const std::vector<Concept>& concepts = bundle.concepts();  // sorted by id
  batch = std::max<std::size_t>(1, batch);
  for (std::size_t begin = 0; begin < concepts.size(); begin += batch) {
    std::size_t end = std::min(concepts.size(), begin + batch);
    std::vector<std::string> texts;
    for (std::size_t i = begin; i < end; ++i) texts.push_back(embedding_text(concepts[i], max_embed_chars));
    std::vector<std::vector<float>> vectors = embedder.embed(texts);
    if (vectors.size() != texts.size())
      throw InputError(fmt::format("{}: asked for {} embeddings, got {}", embedder.name(), texts.size(), vectors.size()));
    for (std::size_t i = 0; i < vectors.size(); ++i) {
      std::vector<float>& v = vectors[i];
      if (index.dimension_ == 0) index.dimension_ = v.size();
      if (v.empty() || v.size() != index.dimension_)
        throw InputError(fmt::format("{}: the embedding of `{}` has {} dimensions, the others {}", embedder.name(),
                                     concepts[begin + i].id, v.size(), index.dimension_));
      if (!to_unit_length(v)) continue;  // an all-zero vector ranks nowhere
      index.ids_.push_back(concepts[begin + i].id);
      index.vectors_.insert(index.vectors_.end(), v.begin(), v.end());
    }
  }
  return index;
}

std::vector<Hit> DenseIndex::rank(const std::vector<float>& query, const std::vector<Hit>& candidates,
                                  std::size_t limit) const {
  std::vector<float> q = query;
  if (q.size() != dimension_)
    throw InputError(fmt::format("the query embedding has {} dimensions, the index {}", q.size(), dimension_));
  if (!to_unit_length(q)) return {};
  std::vector<Hit> hits;
  hits.reserve(candidates.size());
  // Candidates come by id, like ids_: one merge walk finds each vector.
  auto row = ids_.begin();
  for (const Hit& candidate : candidates) {
    row = std::lower_bound(row, ids_.end(), candidate.id);
    if (row == ids_.end()) break;
    if (*row != candidate.id) continue;
    const float* v = vectors_.data() + static_cast<std::size_t>(row - ids_.begin()) * dimension_;
    float dot = 0.0f;
    for (std::size_t d = 0; d < dimension_; ++d) dot += q[d] * v[d];
    hits.push_back({candidate.concept_ptr, dot, candidate.id, candidate.bundle});
  }
  std::size_t keep = std::min(limit, hits.size());
  std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(keep), hits.end(), better);
  hits.resize(keep);
  return hits;
}

std::vector<Hit> hybrid_search(const SearchIndex& lexical, const DenseIndex& dense, Embedder& embedder,
                               std::string_view query, const HybridOptions& options) {
  // A blank query matches no word and has no meaning; embedding endpoints
  // reject empty input, so it is not sent.
  if (query.find_first_not_of(" \t\r\n") == std::string_view::npos) return {};
  SearchOptions deep = options.search;
  deep.limit = options.depth;
  std::vector<Hit> words = lexical.search(query, deep);
  std::vector<std::vector<float>> query_vector = embedder.embed({std::string(query)});
  if (query_vector.size() != 1)
    throw InputError(fmt::format("{}: asked for 1 query embedding, got {}", embedder.name(), query_vector.size()));
  std::vector<Hit> candidates = lexical.candidates(options.search);
  std::vector<Hit> meanings = dense.rank(query_vector[0], candidates, options.depth);
  std::vector<std::vector<std::string_view>> rankings(2);
  for (const Hit& h : words) rankings[0].push_back(h.id);
  for (const Hit& h : meanings) rankings[1].push_back(h.id);
  std::vector<Hit> hits;
  for (const RankedId& fused : reciprocal_rank_fusion(rankings, options.search.limit, options.rrf_k)) {
    auto it = std::lower_bound(candidates.begin(), candidates.end(), fused.id,
                               [](const Hit& h, const std::string& id) { return h.id < id; });
    hits.push_back({it->concept_ptr, fused.score, it->id, it->bundle});  // every fused id is a candidate
  }
  return hits;
}

}  // namespace okfbench::retrieval
