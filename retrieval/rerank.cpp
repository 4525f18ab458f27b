#include "retrieval/rerank.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "retrieval/utf8.hpp"

namespace okfbench::retrieval {

std::string rerank_text(const Concept& item, std::size_t max_chars) {
  std::string text = item.title + "\n\n" + item.description + "\n\n" + item.body;
  text.resize(utf8_prefix(text, max_chars).size());
  return text;
}

std::vector<Hit> rerank(const std::vector<Hit>& candidates, Reranker& reranker, std::string_view query,
                        std::size_t limit, std::size_t max_chars) {
  if (candidates.empty() || limit == 0) return {};
  std::vector<std::string> texts;
  texts.reserve(candidates.size());
  for (const Hit& hit : candidates) texts.push_back(hit.concept_ptr ? rerank_text(*hit.concept_ptr, max_chars) : "");
  std::vector<double> scores = reranker.score(query, texts);
  if (scores.size() != candidates.size())
    throw InputError(fmt::format("{}: asked for {} rerank scores, got {}", reranker.name(), candidates.size(),
                                 scores.size()));
  for (double score : scores)
    if (!std::isfinite(score)) throw InputError(fmt::format("{}: a rerank score is not a finite number", reranker.name()));
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  std::vector<Hit> out;
  for (std::size_t i = 0; i < std::min(limit, order.size()); ++i) {
    Hit hit = candidates[order[i]];
    hit.score = scores[order[i]];
    out.push_back(hit);
  }
  return out;
}

std::string_view to_string(RetrievalMethod method) {
  switch (method) {
    case RetrievalMethod::hybrid: return "hybrid";
    case RetrievalMethod::hybrid_rerank: return "hybrid+rerank";
    default: return "bm25f";
  }
}

std::optional<RetrievalMethod> parse_retrieval_method(std::string_view name) {
  if (name == "bm25f") return RetrievalMethod::bm25f;
  if (name == "hybrid") return RetrievalMethod::hybrid;
  if (name == "hybrid+rerank") return RetrievalMethod::hybrid_rerank;
  return std::nullopt;
}

Retriever::Retriever(const SearchIndex& lexical) : lexical_(&lexical) {}

Retriever::Retriever(const SearchIndex& lexical, const DenseIndex& dense, Embedder& embedder, HybridOptions hybrid)
    : method_(RetrievalMethod::hybrid), lexical_(&lexical), dense_(&dense), embedder_(&embedder), hybrid_(hybrid) {}

Retriever::Retriever(const SearchIndex& lexical, const DenseIndex& dense, Embedder& embedder, HybridOptions hybrid,
                     Reranker& reranker, std::size_t rerank_depth)
    : method_(RetrievalMethod::hybrid_rerank),
      lexical_(&lexical),
      dense_(&dense),
      embedder_(&embedder),
      hybrid_(hybrid),
      reranker_(&reranker),
      rerank_depth_(std::max<std::size_t>(1, rerank_depth)) {}

std::vector<Hit> Retriever::search(std::string_view query, const SearchOptions& options) const {
  if (method_ == RetrievalMethod::bm25f) return lexical_->search(query, options);
  HybridOptions hybrid = hybrid_;
  hybrid.search = options;
  hybrid.depth = std::max(hybrid.depth, options.limit);
  if (method_ == RetrievalMethod::hybrid) return hybrid_search(*lexical_, *dense_, *embedder_, query, hybrid);
  hybrid.search.limit = std::max(options.limit, rerank_depth_);
  std::vector<Hit> candidates = hybrid_search(*lexical_, *dense_, *embedder_, query, hybrid);
  return rerank(candidates, *reranker_, query, options.limit);
}

}  // namespace okfbench::retrieval
