#pragma once
// Rerankers for the rerank stage (retrieval/rerank.hpp).
//
//   http:MODEL  POST {base_url}/rerank {"model": MODEL, "query": Q,
//               "documents": [...], "top_n": N} (the shape Cohere, Jina,
//               Voyage and Hugging Face TEI share), answered by
//               {"results": [{"index": i, "relevance_score": s}, ...]}; the
//               chat clients' endpoint rules (OPENAI_BASE_URL,
//               OPENAI_API_KEY; the key is never written anywhere), retries
//               and reply size limit. top_n is the number of documents, so
//               every one is scored; a document the reply leaves out is an
//               error, as are duplicate or out-of-range indices and scores
//               that are not finite numbers.
//   sim         offline and deterministic: with Q the distinct analyzer
//               terms of the query (Porter-stemmed, Lucene stop words out),
//               H those of the document's first two blocks separated by
//               "\n\n" (title and description in retrieval::rerank_text)
//               and B those of the rest,
//                 score = sum over q in Q of (2 [q in H] + [q in B]) / (3 |Q|)
//               in [0, 1], 0 for a query without terms. It rewards the
//               query's words in the title and description over the body;
//               for plumbing, tests and the mock server, not for quality figures.
//
// With a cache file, scores are kept in SQLite keyed by (model, SHA-256 of
// the query, SHA-256 of the document), so re-running an evaluation sends
// only the pairs not yet scored.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agents/provider_models.hpp"
#include "retrieval/rerank.hpp"

namespace okfbench::agents {

struct RerankerOptions {
  Endpoint endpoint;               // base_url / api_key overrides for http:MODEL
  std::filesystem::path cache_db;  // empty = no cache
};

// "sim" or "http:MODEL". Throws UsageError for anything else.
std::unique_ptr<retrieval::Reranker> make_reranker(const std::string& spec, const RerankerOptions& options = {});

// The sim score of one document for one query.
double sim_rerank_score(std::string_view query, std::string_view document);

// Reads a /rerank response into one score per document; InputError naming
// what is wrong (nesting past json_util::kMaxDepth included).
std::vector<double> rerank_scores_from_json(const std::string& body, std::size_t documents, const std::string& what);

}  // namespace okfbench::agents
