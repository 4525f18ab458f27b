#pragma once
// Embedders for hybrid search (retrieval/hybrid.hpp).
//
//   openai:MODEL  POST {base_url}/embeddings {"model": MODEL, "input": [...]}
//                 with the chat clients' endpoint rules (OPENAI_BASE_URL,
//                 OPENAI_API_KEY; the key is never written anywhere) and
//                 retries; vectors are read from data[i].embedding in
//                 `index` order.
//   sim           offline and deterministic: the text's analyzer terms
//                 (lower-cased, Porter-stemmed, Lucene stop words out)
//                 hashed into 256 signed dimensions (feature hashing). A
//                 bag of words, so it only re-ranks by word overlap: for
//                 plumbing, tests and the mock server, not for quality figures.
//
// With a cache file, vectors are kept in SQLite keyed by (model, SHA-256 of
// the text); only texts not yet cached are sent, so re-running an evaluation
// embeds the bundle once.
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agents/provider_models.hpp"
#include "retrieval/hybrid.hpp"

namespace okfbench::agents {

struct EmbedderOptions {
  Endpoint endpoint;                 // base_url / api_key overrides for openai:MODEL
  std::filesystem::path cache_db;    // empty = no cache
  std::size_t batch = 64;            // texts per request
};

// "sim" or "openai:MODEL". Throws UsageError for anything else.
std::unique_ptr<retrieval::Embedder> make_embedder(const std::string& spec, const EmbedderOptions& options = {});

// The sim embedding of one text (unit length, or all zero without terms).
std::vector<float> sim_embedding(std::string_view text);

// Reads an OpenAI embeddings response; InputError naming the field that is
// missing or wrong, or when it does not hold exactly `expected` vectors.
std::vector<std::vector<float>> embeddings_from_json(const std::string& body, std::size_t expected,
                                                     const std::string& what);

}  // namespace okfbench::agents
