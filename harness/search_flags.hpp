#pragma once
// Index and analyzer flags shared by `okfbench search` and `okfbench eval`:
//   --flat  --k1 X  --b X  --stemmer none|porter|english  --stopwords none|lucene
//   --profile okf|repo (how the bundle is loaded)
//   --hybrid sim|openai:MODEL [--embed-cache FILE] [--embed-base-url URL]
//       [--rrf-k X] [--depth N]  (BM25F fused with embeddings, retrieval/hybrid.hpp)
//   --git-ref, --git-subdir, --refresh, --git-timeout, --git-cache (a git bundle, harness/bundle_source.hpp)
#include <memory>
#include <optional>
#include <string>

#include "harness/bundle_source.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/hybrid.hpp"
#include "retrieval/search.hpp"

namespace CLI {
class App;
}

namespace okfbench::cli {

struct HybridFlags {
  std::string model;  // "" = lexical only; else sim or openai:MODEL
  std::string cache;  // SQLite file of embeddings; "" = none
  std::string base_url;
  double rrf_k = 60.0;
  std::size_t depth = 100;
};

struct SearchFlags {
  HybridFlags hybrid;
  bool flat = false;
  std::optional<double> k1;
  std::optional<double> b;
  std::string stemmer = "none";
  std::string stopwords = "none";
  std::string profile = "okf";
  harness::GitFlags git;

  // UsageError for an unknown stemmer, stop word list or profile.
  retrieval::IndexConfig config() const;
  retrieval::LoadOptions load_options() const;
};

void add_search_flags(CLI::App& cmd, SearchFlags& flags);

// The embedding side of --hybrid: the embedder and the bundle's dense index,
// built once (every concept embedded, through the cache when there is one).
class HybridRanking {
 public:
  HybridRanking(const retrieval::Bundle& bundle, const HybridFlags& flags);
  ~HybridRanking();
  // Lexical and embedding rankings fused; options.limit results.
  std::vector<retrieval::Hit> search(const retrieval::SearchIndex& lexical, std::string_view query,
                                     const retrieval::SearchOptions& options);
  const std::string& model() const { return flags_.model; }
  std::size_t embedded() const { return dense_.size(); }

 private:
  HybridFlags flags_;
  std::unique_ptr<retrieval::Embedder> embedder_;
  retrieval::DenseIndex dense_;
};

// nullptr unless --hybrid was given.
std::unique_ptr<HybridRanking> make_hybrid(const retrieval::Bundle& bundle, const SearchFlags& flags);

// Loads a bundle for searching from a folder or a git source; InputError
// when `path` is neither a directory nor a git source.
// Reports the number of error diagnostics on stderr (they do not stop search).
retrieval::Bundle load_bundle_for_search(const std::string& path, const SearchFlags& flags);

}  // namespace okfbench::cli
