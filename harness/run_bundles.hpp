#pragma once
// The runner's bundles: each spec bundle materialised (used in place,
// generated or converted into the spec's cache_dir), loaded, indexed, with
// its question set and the tool sets its agent trials share.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "agents/bundle_tools.hpp"
#include "datasets/questions.hpp"
#include "harness/spec.hpp"
#include "reports/record.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/search.hpp"

namespace okfbench::harness {

// One BundleTools per tool configuration serves every worker (calls
// serialised by its mutex); all of them search the bundle's one index.
struct SharedTools {
  std::mutex mutex;
  std::unique_ptr<agents::BundleTools> tools;
};

struct LoadedBundle {
  BundleSource source;
  std::filesystem::path dir;
  std::filesystem::path questions_file;
  datasets::QuestionSet questions;
  std::unique_ptr<retrieval::Bundle> bundle;
  std::unique_ptr<retrieval::SearchIndex> index;
  // The lessons or expertise policy's verdict (source.policy); nullptr for
  // okf and repo. Context trials and the agent tools honour it.
  std::shared_ptr<const retrieval::Selection> selection;
  std::unique_ptr<std::mutex> tools_mutex = std::make_unique<std::mutex>();
  std::map<std::string, std::unique_ptr<SharedTools>> tools;  // by surface and tool list

  // The tools of one surface and tool list, made on first use and shared after.
  SharedTools& tools_for(const reports::PathConfig& c);
};

// Materialises, loads and indexes one spec bundle and its questions (cut to
// max_questions). A git bundle is checked out with `git` (refresh, lock and
// command timeout, cache folder). Throws InputError for unusable bundles or
// question sets.
LoadedBundle load_bundle(const ExperimentSpec& spec, const BundleSource& b, const GitOptions& git = {});

}  // namespace okfbench::harness
