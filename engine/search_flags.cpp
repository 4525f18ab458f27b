#include "engine/search_flags.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "agents/embeddings.hpp"
#include "agents/rerankers.hpp"
#include "core/error.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"

namespace okfbench::cli {

retrieval::IndexConfig SearchFlags::config() const {
  retrieval::IndexConfig config;
  config.mode = flat ? retrieval::FieldMode::flat : retrieval::FieldMode::fielded;
  if (k1) config.k1 = *k1;
  if (b) config.b = *b;
  config.analyzer.stemmer = retrieval::parse_stemmer(stemmer);
  config.analyzer.stopwords = retrieval::parse_stopwords(stopwords);
  return config;
}

retrieval::LoadOptions SearchFlags::load_options() const {
  retrieval::LoadOptions options;
  if (profile == "okf") {
    options.profile = retrieval::Profile::okf;
  } else if (profile == "repo") {
    options.profile = retrieval::Profile::repo;
  } else {
    throw UsageError("unknown --profile '" + profile + "': use okf or repo");
  }
  return options;
}

void add_search_flags(CLI::App& cmd, SearchFlags& flags) {
  cmd.add_flag("--flat", flags.flat, "Index title and body as one field (plain BM25) instead of BM25F");
  cmd.add_option("--k1", flags.k1, "BM25 term-frequency saturation (default 1.2)")->check(number_in(engine::limits::bm25_k1));
  cmd.add_option("--b", flags.b, "BM25 length normalisation, 0..1 (default 0.75)")->check(number_in(engine::limits::bm25_b));
  cmd.add_option("--stemmer", flags.stemmer, "none, porter or english")->capture_default_str();
  cmd.add_option("--stopwords", flags.stopwords, "none or lucene (Lucene's 33 English stop words)")
      ->capture_default_str();
  cmd.add_option("--profile", flags.profile, "Bundle profile: okf (spec) or repo (plain markdown)")
      ->capture_default_str();
  cmd.add_option("--hybrid", flags.hybrid.model,
                 "Fuse BM25F with embeddings by reciprocal rank fusion: sim (offline, bag of words) or openai:MODEL");
  cmd.add_option("--embed-cache", flags.hybrid.cache, "SQLite file that keeps embeddings between runs");
  cmd.add_option("--embed-base-url", flags.hybrid.base_url, "Embeddings endpoint base URL (else OPENAI_BASE_URL)");
  cmd.add_option("--rrf-k", flags.hybrid.rrf_k, "Reciprocal rank fusion constant")
      ->check(number_in(engine::limits::rrf_k))
      ->capture_default_str();
  cmd.add_option("--depth", flags.hybrid.depth, "Hits each ranking contributes to the fusion")
      ->check(number_in(engine::limits::fusion_depth))
      ->capture_default_str();
  add_source_flags(cmd, flags.git);
  cmd.add_option("--rerank", flags.hybrid.rerank,
                 "Reorder hybrid's top hits with a reranker: sim (offline) or http:MODEL (a /rerank endpoint)");
  cmd.add_option("--rerank-cache", flags.hybrid.rerank_cache, "SQLite file that keeps rerank scores between runs");
  cmd.add_option("--rerank-base-url", flags.hybrid.rerank_base_url, "Rerank endpoint base URL (else OPENAI_BASE_URL)");
  cmd.add_option("--rerank-depth", flags.hybrid.rerank_depth, "Hybrid hits the reranker re-scores")
      ->check(number_in(engine::limits::rerank_depth))
      ->capture_default_str();
}

void add_retrieval_flags(CLI::App& cmd, RetrievalFlags& flags) {
  cmd.add_option("--retrieval", flags.method, "bm25f, hybrid (BM25F + embeddings, RRF) or hybrid+rerank")
      ->check(CLI::IsMember({"bm25f", "hybrid", "hybrid+rerank"}))
      ->capture_default_str();
  cmd.add_option("--embed-model", flags.hybrid.model, "Embeddings of hybrid: sim (default, offline) or openai:MODEL");
  cmd.add_option("--embed-cache", flags.hybrid.cache, "SQLite file that keeps embeddings between runs");
  cmd.add_option("--embed-base-url", flags.hybrid.base_url, "Embeddings endpoint base URL (else OPENAI_BASE_URL)");
  cmd.add_option("--rerank-model", flags.hybrid.rerank, "Reranker of hybrid+rerank: sim (default, offline) or http:MODEL");
  cmd.add_option("--rerank-cache", flags.hybrid.rerank_cache, "SQLite file that keeps rerank scores between runs");
  cmd.add_option("--rerank-base-url", flags.hybrid.rerank_base_url, "Rerank endpoint base URL (else OPENAI_BASE_URL)");
  cmd.add_option("--rerank-depth", flags.hybrid.rerank_depth, "Hybrid hits the reranker re-scores")
      ->check(number_in(engine::limits::rerank_depth))
      ->capture_default_str();
}

HybridRanking::HybridRanking(const retrieval::Bundle& bundle, const HybridFlags& flags) : flags_(flags) {
  agents::EmbedderOptions options;
  options.endpoint.base_url = flags.base_url;
  options.cache_db = flags.cache;
  embedder_ = agents::make_embedder(flags.model, options);
  dense_ = retrieval::DenseIndex::build(bundle, *embedder_);
  if (flags.rerank.empty()) return;
  agents::RerankerOptions rerank;
  rerank.endpoint.base_url = flags.rerank_base_url;
  rerank.cache_db = flags.rerank_cache;
  reranker_ = agents::make_reranker(flags.rerank, rerank);
}

retrieval::Retriever HybridRanking::retriever(const retrieval::SearchIndex& lexical) {
  retrieval::HybridOptions hybrid;
  hybrid.depth = flags_.depth;
  hybrid.rrf_k = flags_.rrf_k;
  if (!reranker_) return retrieval::Retriever(lexical, dense_, *embedder_, hybrid);
  return retrieval::Retriever(lexical, dense_, *embedder_, hybrid, *reranker_, flags_.rerank_depth);
}

HybridRanking::~HybridRanking() = default;

std::vector<retrieval::Hit> HybridRanking::search(const retrieval::SearchIndex& lexical, std::string_view query,
                                                  const retrieval::SearchOptions& options) {
  return retriever(lexical).search(query, options);
}

std::unique_ptr<HybridRanking> make_hybrid(const retrieval::Bundle& bundle, const SearchFlags& flags) {
  if (lexical_only(flags)) return nullptr;
  return std::make_unique<HybridRanking>(bundle, flags.hybrid);
}

std::unique_ptr<HybridRanking> make_retrieval(const retrieval::Bundle& bundle, RetrievalFlags flags) {
  std::optional<retrieval::RetrievalMethod> method = retrieval::parse_retrieval_method(flags.method);
  if (!method) throw UsageError(fmt::format("--retrieval {}: use bm25f, hybrid or hybrid+rerank", flags.method));
  if (*method == retrieval::RetrievalMethod::bm25f) return nullptr;
  if (flags.hybrid.model.empty()) flags.hybrid.model = "sim";
  if (*method == retrieval::RetrievalMethod::hybrid) flags.hybrid.rerank.clear();
  else if (flags.hybrid.rerank.empty()) flags.hybrid.rerank = "sim";
  return std::make_unique<HybridRanking>(bundle, flags.hybrid);
}

retrieval::CachedBundle load_bundle_for_search(const std::string& path, const SearchFlags& flags) {
  return load_bundle_for_search(engine::BundleSourceFolder::open(path, flags.git), path, flags);
}

retrieval::CachedBundle load_bundle_for_search(const engine::BundleSourceFolder& source, const std::string& path,
                                               const SearchFlags& flags) {
  if (!std::filesystem::is_directory(source.root())) {
    throw InputError(path + " is not a directory: pass the root of an OKF bundle or a git URL");
  }
  retrieval::CachedBundle loaded =
      engine::load_cached_bundle(source.root(), flags.load_options(), flags.config(), flags.git.index_cache_dir());
  warn_skipped(loaded.bundle, path);
  return loaded;
}

bool lexical_only(const SearchFlags& flags) {
  const HybridFlags& h = flags.hybrid;
  if (!h.model.empty()) return false;
  if (!h.cache.empty() || !h.base_url.empty()) throw UsageError("--embed-cache and --embed-base-url need --hybrid MODEL");
  if (!h.rerank.empty())
    throw UsageError("--rerank needs --hybrid MODEL: the rerank stage reorders hybrid search's hits");
  return true;
}

std::optional<retrieval::CachedSearch> cached_search(const engine::BundleSourceFolder& source,
                                                     const std::string& path, const SearchFlags& flags) {
  std::optional<retrieval::CachedSearch> found =
      retrieval::load_cached_search(source.root(), flags.load_options(), flags.config(), flags.git.index_cache_dir());
  if (found) warn_skipped(found->skipped_files(), path);
  return found;
}

void warn_skipped(const retrieval::Bundle& bundle, const std::string& path) {
  std::size_t errors = 0;
  for (const auto& d : bundle.diagnostics()) errors += d.severity == retrieval::Severity::error ? 1 : 0;
  warn_skipped(errors, path);
}

void warn_skipped(std::size_t errors, const std::string& path) {
  if (errors > 0) {
    std::fprintf(stderr, "okfbench: %zu file(s) of %s skipped with errors (okfbench validate lists them)\n", errors,
                 engine::shown_source(path).c_str());
  }
}

}  // namespace okfbench::cli
