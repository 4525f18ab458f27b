#pragma once
// The runner's bundles: each spec bundle materialised (used in place,
// generated or converted into the spec's cache_dir), loaded, indexed, with
// its question set and the tool sets its agent trials share.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agents/bundle_tools.hpp"
#include "agents/multi_bundle_tools.hpp"
#include "datasets/questions.hpp"
#include "engine/search_flags.hpp"
#include "engine/spec.hpp"
#include "reports/record.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/search.hpp"

namespace okfbench::engine {

// One tool set per tool configuration serves every worker (calls serialised
// by its mutex): BundleTools searching the bundle's one index, or, for a
// combined entry, MultiBundleTools (`several` points at it).
struct SharedTools {
  std::mutex mutex;
  std::unique_ptr<agents::Toolbox> tools;
  agents::MultiBundleTools* several = nullptr;
};

// One retrieval method over a bundle: the hybrid ranking (the offline sim
// embedder, and the sim reranker for hybrid+rerank, no cache: they hold no
// state, so the workers' searches may run at once) and its Retriever over the
// bundle's index.
struct SharedRetrieval {
  std::unique_ptr<cli::HybridRanking> ranking;
  std::unique_ptr<retrieval::Retriever> retriever;
};

struct LoadedBundle {
  BundleSource source;
  std::filesystem::path dir;
  std::filesystem::path questions_file;
  datasets::QuestionSet questions;
  std::unique_ptr<retrieval::Bundle> bundle;  // null for a combined entry
  std::unique_ptr<retrieval::SearchIndex> index;  // a combined entry's: one index over its parts
  // A combined entry's bundles, in the spec's order, named as source.parts.
  std::vector<std::unique_ptr<retrieval::Bundle>> parts;
  std::vector<std::filesystem::path> part_dirs;
  // The lessons or expertise policy's verdict (source.policy); nullptr for
  // okf and repo, and for a combined entry. Context trials and the agent tools honour it.
  std::shared_ptr<const retrieval::Selection> selection;
  std::unique_ptr<std::mutex> tools_mutex = std::make_unique<std::mutex>();
  std::map<std::string, std::unique_ptr<SharedTools>> tools;  // by surface, tool list, budgets and retrieval
  std::unique_ptr<std::mutex> retrieval_mutex = std::make_unique<std::mutex>();
  std::map<std::string, std::unique_ptr<SharedRetrieval>> retrievals;  // by method

  // The tools of one surface, tool list, budgets and retrieval method, made
  // on first use and shared after.
  SharedTools& tools_for(const reports::PathConfig& c);
  // The Retriever of a method (PathConfig::retrieval: hybrid or hybrid+rerank),
  // its embeddings built on first use and shared after; nullptr for bm25f
  // (""), where callers search the index. InputError for a combined entry
  // (the spec reader refuses it first) or an unknown method.
  const retrieval::Retriever* retriever_for(const std::string& method);

  bool combined() const { return !parts.empty(); }
  // A combined entry's parts under their names (for the index and pack_context).
  std::vector<retrieval::NamedBundle> named() const;
  // Concepts of the bundle, or of all parts together.
  std::size_t concept_count() const;
};

// Materialises, loads and indexes one spec bundle and its questions (cut to
// max_questions). A git bundle is checked out with `git` (refresh, lock and
// command timeout, cache folder). A combined entry loads each part (each
// checkout's lock held while it loads), indexes them as one and checks that
// every relevant id is BUNDLE:ID of a concept of a part. Throws InputError for
// unusable bundles or question sets.
// `index_cache`: the index cache folder (retrieval/index_cache.hpp); none when empty.
LoadedBundle load_bundle(const ExperimentSpec& spec, const BundleSource& b, const GitOptions& git = {},
                         const std::filesystem::path& index_cache = {});

}  // namespace okfbench::engine
