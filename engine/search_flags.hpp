#pragma once
// Index and analyzer flags shared by `okfbench search` and `okfbench eval`:
//   --flat  --k1 X  --b X  --stemmer none|porter|english  --stopwords none|lucene
//   --profile okf|repo (how the bundle is loaded)
//   --hybrid sim|openai:MODEL [--embed-cache FILE] [--embed-base-url URL]
//       [--rrf-k X] [--depth N]  (BM25F fused with embeddings, retrieval/hybrid.hpp)
//   --rerank sim|http:MODEL [--rerank-cache FILE] [--rerank-base-url URL]
//       [--rerank-depth N]  (hybrid's top N reordered by a reranker, retrieval/rerank.hpp)
// and the retrieval method of `okfbench context` and `okfbench agent`:
//   --retrieval bm25f|hybrid|hybrid+rerank [--embed-model M] [--rerank-model M]
//       (sim by default: offline) with the same cache, base URL and depth flags
//   --git-ref, --git-subdir, --refresh, --git-timeout, --git-cache (a git bundle, engine/bundle_source.hpp)
#include <memory>
#include <optional>
#include <string>

#include "engine/bundle_source.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/hybrid.hpp"
#include "retrieval/index_cache.hpp"
#include "retrieval/rerank.hpp"
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
  std::string rerank;  // "" = no rerank stage; else sim or http:MODEL
  std::string rerank_cache;
  std::string rerank_base_url;
  std::size_t rerank_depth = 20;
};

// The retrieval method of context() and the agent's search tool.
struct RetrievalFlags {
  std::string method = "bm25f";
  HybridFlags hybrid;  // model and rerank default to sim for the methods that use them
};

struct SearchFlags {
  HybridFlags hybrid;
  bool flat = false;
  std::optional<double> k1;
  std::optional<double> b;
  std::string stemmer = "none";
  std::string stopwords = "none";
  std::string profile = "okf";
  engine::SourceFlags git;

  // UsageError for an unknown stemmer, stop word list or profile.
  retrieval::IndexConfig config() const;
  retrieval::LoadOptions load_options() const;
};

void add_search_flags(CLI::App& cmd, SearchFlags& flags);
void add_retrieval_flags(CLI::App& cmd, RetrievalFlags& flags);

// The embedding side of --hybrid: the embedder and the bundle's dense index,
// built once (every concept embedded, through the cache when there is one).
class HybridRanking {
 public:
  HybridRanking(const retrieval::Bundle& bundle, const HybridFlags& flags);
  ~HybridRanking();
  // Lexical and embedding rankings fused; options.limit results.
  std::vector<retrieval::Hit> search(const retrieval::SearchIndex& lexical, std::string_view query,
                                     const retrieval::SearchOptions& options);
  // The method over `lexical` (which must outlive the Retriever); hybrid, or
  // hybrid+rerank when a reranker was asked for.
  retrieval::Retriever retriever(const retrieval::SearchIndex& lexical);
  const std::string& model() const { return flags_.model; }
  std::string reranker() const { return reranker_ ? reranker_->name() : std::string(); }
  std::size_t embedded() const { return dense_.size(); }

 private:
  HybridFlags flags_;
  std::unique_ptr<retrieval::Embedder> embedder_;
  std::unique_ptr<retrieval::Reranker> reranker_;
  retrieval::DenseIndex dense_;
};

// nullptr when lexical_only(flags), else the hybrid ranking --hybrid asks for.
std::unique_ptr<HybridRanking> make_hybrid(const retrieval::Bundle& bundle, const SearchFlags& flags);
// nullptr for bm25f; UsageError for an unknown method.
std::unique_ptr<HybridRanking> make_retrieval(const retrieval::Bundle& bundle, RetrievalFlags flags);

// Loads a bundle for searching from a folder or a git source, through the
// index cache, with its index for flags.config(); InputError when `path` is
// neither a directory nor a git source. Reports the number of error
// diagnostics on stderr (they do not stop search).
retrieval::CachedBundle load_bundle_for_search(const std::string& path, const SearchFlags& flags);
retrieval::CachedBundle load_bundle_for_search(const engine::BundleSourceFolder& source, const std::string& path,
                                               const SearchFlags& flags);
// True when --hybrid was not given, so BM25F alone ranks; UsageError for
// --embed-cache, --embed-base-url or --rerank without --hybrid.
bool lexical_only(const SearchFlags& flags);
// The search index of `source` read from a current index cache file without
// its bundle (retrieval::CachedSearch), with the skipped-files line on
// stderr; nullopt when there is no such file (load_bundle_for_search then
// loads, and writes the cache).
std::optional<retrieval::CachedSearch> cached_search(const engine::BundleSourceFolder& source,
                                                     const std::string& path, const SearchFlags& flags);
// The stderr line that says how many files of `path` were skipped with errors.
void warn_skipped(const retrieval::Bundle& bundle, const std::string& path);
void warn_skipped(std::size_t errors, const std::string& path);

}  // namespace okfbench::cli
