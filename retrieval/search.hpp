#pragma once
// BM25F search over a bundle's concepts (or over plain documents, for
// converted IR collections).
//
// Scoring (Robertson & Zaragoza, "The Probabilistic Relevance Framework:
// BM25 and Beyond", Foundations and Trends in IR 3(4), 2009, section 3.5,
// "BM25F"): for a query Q and document d,
//
//   score(d) = status(d) * sum_{t in Q} q_t * idf(t) * tf~(t,d) / (k1 + tf~(t,d))
//   tf~(t,d) = sum_{f in fields} w_f * tf(t,d,f) / B_f(d)
//   B_f(d)   = (1 - b) + b * len(d,f) / avglen(f)
//   idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
//
// tf(t,d,f) counts term t in field f (saturating at 65,535), len(d,f) is the
// number of index terms in the field (stop words excluded), avglen(f) its
// mean over all N documents, df(t) the number of documents containing t in
// any field. The idf is the Robertson/Sparck Jones weight without relevance
// information in Lucene's non-negative form (the "1 +" inside the log), so
// a very common term never lowers a score. q_t is the query weight of the
// term (1 per occurrence in the query; kPluralWeight for an added
// singular/plural form, see analyzer.hpp). status(d) is 1 for stable,
// 0.8 for draft and 0.5 for deprecated concepts.
//
// FieldMode::flat indexes title and body as one field with weight 1, which
// is plain BM25 as Lucene (>= 8) computes it: idf * tf / (tf + k1 * B(d)).
//
// Hits are ordered by score descending, then document id ascending.
//
// Several bundles in one index (build(span<const NamedBundle>)): every
// searchable concept of each bundle is a document, and N, df(t) and
// avglen(f) are taken over all of them, so one bundle's common terms weigh
// less everywhere and scores compare across bundles (harnessx's
// KnowledgeManager.search). Each hit names its bundle; ties are broken by
// concept id, then bundle name.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "retrieval/analyzer.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/selection.hpp"

namespace okfbench::retrieval {

struct SearchOptions {
  std::size_t limit = 5;           // the tool API clamps to 1..50; see clamp_tool_limit
  std::string type;                // "" = any; case-insensitive
  std::vector<std::string> tags;   // all must match, case-insensitive
  std::string layer;               // "" = any
  std::string usage_tag;           // "" = any; else one of classify_usage's tags, case-insensitive
  // A selection policy's verdict (lessons, expertise packs): its excluded
  // concepts are never hits. nullptr = no policy.
  std::shared_ptr<const Selection> selection;
};

// The limit the agent tools accept: 1..50.
std::size_t clamp_tool_limit(long long requested);

struct Hit {
  // nullptr for an index built from Documents or restored without its
  // bundle (retrieval/index_cache.hpp's CachedSearch). (Not named `concept`: that is
  // a C++20 keyword, so the original sketch's member could not compile.)
  const Concept* concept_ptr = nullptr;
  double score = 0.0;
  std::string_view id;  // the document (concept) id; valid while the index lives
  std::string_view bundle;  // the bundle's name in an index over several bundles, else ""
};

enum class FieldMode {
  fielded,  // BM25F over title, tags, description, body
  flat,     // title and body as one field: plain BM25
};

struct FieldWeights {
  double title = 3.0;
  double tags = 2.5;
  double description = 2.0;
  double body = 0.5;
  bool operator==(const FieldWeights&) const = default;
};

struct IndexConfig {
  FieldMode mode = FieldMode::fielded;
  FieldWeights weights;  // ignored in flat mode
  double k1 = 1.2;
  double b = 0.75;
  AnalyzerOptions analyzer;
  // Threads that tokenise documents while building (0 = hardware
  // concurrency; at least 2,000 documents per thread). The index is the same
  // for any number of threads.
  unsigned threads = 0;
  bool operator==(const IndexConfig&) const = default;
};

// The Lucene/Pyserini BEIR baseline: flat, k1=0.9, b=0.4, Porter, Lucene stop words.
IndexConfig lucene_flat_config();

// A document to index. Views must stay valid during build() only.
struct Document {
  std::string_view id;  // unique within its bundle; hits are tied by id, then bundle
  std::string_view title;
  std::string_view description;
  std::string_view body;
  std::span<const std::string> tags;
  std::string_view type;
  std::string_view layer;
  Status status = Status::stable;
  std::span<const std::string> usage;  // usage tags (retrieval/usage.hpp)
  std::string_view bundle;  // "" for documents of one collection; else the name hits carry
};

struct IndexStats {
  std::size_t documents = 0;
  std::size_t terms = 0;     // distinct index terms
  std::size_t postings = 0;  // (term, document) pairs
  std::size_t tokens = 0;    // index terms over all fields and documents
};

// A bundle under the name its hits carry in an index over several bundles.
struct NamedBundle {
  std::string name;
  const Bundle* bundle = nullptr;
};

// Throws UsageError when one of several bundles has an empty name or two
// share one (naming both roots): hits could not tell them apart.
void check_bundle_names(std::span<const NamedBundle> bundles);

class SearchIndex {
 public:
  // Indexes the searchable concepts of `bundle` (never index.md or log.md).
  // The bundle must outlive the index.
  static SearchIndex build(const Bundle& bundle);
  static SearchIndex build(const Bundle& bundle, const IndexConfig& config);
  // One index over several bundles with shared statistics (see above); the
  // bundles must outlive it. UsageError from check_bundle_names.
  static SearchIndex build(std::span<const NamedBundle> bundles, const IndexConfig& config = {});
  // Indexes plain documents. Throws InputError on an empty id, an id twice
  // in one bundle, or a config with k1 < 0, b outside [0, 1] or a negative weight.
  static SearchIndex build(std::span<const Document> documents, const IndexConfig& config = {});

  // Ranked hits, best first, ties by concept id ascending. At most
  // options.limit hits (not clamped: evaluation asks for 1000).
  std::vector<Hit> search(std::string_view query, const SearchOptions& options = {}) const;

  // Every document the filters of `options` let through (type, tags, layer;
  // the limit is ignored), by id, score 0: the candidates another ranking
  // (embeddings, in retrieval/hybrid.hpp) orders under the same filters.
  std::vector<Hit> candidates(const SearchOptions& options) const;

  const IndexConfig& config() const;
  IndexStats stats() const;

  // The index in the index cache's byte format, and back over the bundle it
  // was built from, or with `bundle` nullptr over none (hits then carry no
  // concept_ptr) (retrieval/index_cache.hpp; not for other callers). Only
  // an index over one bundle is saved. restore() copies no array: the index
  // reads the bytes `in` reads in place, so they must stay valid while it
  // lives (`file` is kept with it, for the mapping that holds them). It
  // throws detail::CorruptCache for bytes save() did not write, a config
  // search's checks refuse, or ids the bundle does not have.
  void save(detail::Writer& out) const;
  static SearchIndex restore(detail::Reader& in, const Bundle* bundle, std::shared_ptr<const void> file = {});

  SearchIndex(SearchIndex&&) noexcept;
  SearchIndex& operator=(SearchIndex&&) noexcept;
  ~SearchIndex();

 private:
  SearchIndex();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace okfbench::retrieval
