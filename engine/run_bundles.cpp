#include "engine/run_bundles.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include "datasets/convert.hpp"
#include "datasets/generator.hpp"
#include "retrieval/utf8.hpp"
#include "engine/run_common.hpp"
#include "reports/report_files.hpp"
#include "core/files.hpp"
#include "core/error.hpp"

namespace okfbench::engine {
namespace {

namespace fs = std::filesystem;

// A cache entry of the run's cache_dir, built once (core/files.hpp).
fs::path cached_folder(const fs::path& cache_dir, const std::string& name, const std::function<void(const fs::path&)>& build) {
  return publish_folder(cache_dir, name, build, [&](const std::string& holder) {
    log_line(fmt::format("waiting for okfbench {} to finish building {}", holder, (cache_dir / name).string()));
  });
}

fs::path generated_bundle(const ExperimentSpec& spec, const BundleSource& b) {
  const std::string name = fmt::format("{}-{}", b.name, stable_hash(fmt::format("{}|v{}", b.identity(), datasets::kGeneratorVersion)));
  return cached_folder(cache_folder(spec), name, [&](const fs::path& tmp) {
    log_line(fmt::format("generating {} ({} concepts) into {}", b.name, b.concepts, (cache_folder(spec) / name).string()));
    datasets::GeneratorOptions options;
    options.concepts = b.concepts;
    options.seed = b.seed;
    options.layers = b.layers;
    options.questions = b.question_count;
    const auto summary = datasets::generate_bundle(options, tmp / "bundle");
    write_atomically(tmp / "questions.yaml", datasets::questions_to_yaml(summary.questions, options));
  });
}

// Changes whenever a converter writes different files for the same source,
// so converted collections cached by an earlier version are written again.
constexpr int kConverterVersion = 2;

fs::path converted_collection(const ExperimentSpec& spec, const BundleSource& b) {
  const std::string name = fmt::format("{}-{}-{}", b.format, b.source.filename().string(),
                                       stable_hash(fmt::format("{}|{}|{}|{}", b.format, b.source.generic_string(), b.split,
                                                                      kConverterVersion)));
  return cached_folder(cache_folder(spec), name, [&](const fs::path& tmp) {
    log_line(fmt::format("converting {} ({}) into {}", b.source.string(), b.format, (cache_folder(spec) / name).string()));
    // The engine's own cache layout, <folder>/bundle; the question set is
    // named after the collection, whatever subset a bundle takes of it.
    datasets::ConvertOptions options;
    options.name = retrieval::escape_invalid_utf8(b.source.filename().string());
    options.folder = "bundle";
    options.split = b.split;
    if (b.format == "beir") {
      datasets::convert_beir(b.source, tmp, options);
    } else {
      datasets::convert_smart(b.source, tmp, options);
    }
  });
}

// A subset of `concepts` documents that keeps whole questions: the judged
// documents of each question in order while they fit, then other documents
// by id. Only questions whose relevant documents are all kept remain.
fs::path converted_subset(const ExperimentSpec& spec, const BundleSource& b, const fs::path& full) {
  const std::string name = fmt::format("{}-{}", b.name, stable_hash(b.identity()));
  return cached_folder(cache_folder(spec), name, [&](const fs::path& tmp) {
    const datasets::QuestionSet all = datasets::load_questions(full / "questions.yaml");
    std::vector<std::string> ids;
    for (const auto& entry : fs::recursive_directory_iterator(full / "bundle")) {
      if (entry.is_regular_file() && entry.path().extension() == ".md") {
        ids.push_back(fs::relative(entry.path(), full / "bundle").replace_extension().generic_string());
      }
    }
    std::sort(ids.begin(), ids.end());
    std::set<std::string> keep;
    for (const auto& q : all.questions) {
      std::set<std::string> need;
      for (const auto& [id, grade] : q.relevant) {
        if (grade > 0 && !keep.count(id)) need.insert(id);
      }
      if (keep.size() + need.size() <= b.concepts) keep.insert(need.begin(), need.end());
    }
    for (const std::string& id : ids) {
      if (keep.size() >= b.concepts) break;
      keep.insert(id);
    }
    for (const std::string& id : keep) {
      const fs::path to = tmp / "bundle" / (id + ".md");
      fs::create_directories(to.parent_path());
      fs::copy_file(full / "bundle" / (id + ".md"), to);
    }
    datasets::QuestionSet subset;
    subset.name = b.name;
    for (const auto& q : all.questions) {
      datasets::Question kept = q;
      kept.relevant.clear();
      bool whole = true;
      for (const auto& [id, grade] : q.relevant) {
        if (keep.count(id)) {
          kept.relevant[id] = grade;
        } else if (grade > 0) {
          whole = false;
        }
      }
      if (whole) subset.questions.push_back(std::move(kept));
    }
    datasets::save_questions(subset, tmp / "questions.yaml");
    log_line(fmt::format("{}: {} documents, {} of {} questions kept whole", b.name, keep.size(),
                         subset.questions.size(), all.questions.size()));
  });
}

agents::ToolsOptions tools_options(const reports::PathConfig& c, const std::string& bundle_name) {
  agents::ToolsOptions options;
  options.surface = *agents::parse_surface(c.surface);
  options.include = c.tools;
  options.bundle_name = bundle_name;
  if (c.max_body_chars) options.max_body_chars = static_cast<std::size_t>(*c.max_body_chars);
  if (c.index_char_budget) options.index_char_budget = static_cast<std::size_t>(*c.index_char_budget);
  options.now = "2026-11-29T00:00:00Z";  // a fixed clock: staleness must not depend on the day of the run
  return options;
}

}  // namespace

SharedTools& LoadedBundle::tools_for(const reports::PathConfig& c) {
  std::lock_guard lock(*tools_mutex);
  auto& slot = tools[fmt::format("{}|{}|{}|{}|{}", c.surface, fmt::join(c.tools, ","), c.max_body_chars.value_or(0),
                                 c.index_char_budget.value_or(0), c.retrieval)];
  if (slot) return *slot;
  // Before the slot is filled: a refused method leaves no empty slot behind.
  const retrieval::Retriever* retriever = retriever_for(c.retrieval);
  slot = std::make_unique<SharedTools>();
  if (!combined()) {
    agents::ToolsOptions options = tools_options(c, source.name);
    options.selection = selection;
    options.retriever = retriever;
    slot->tools = std::make_unique<agents::BundleTools>(*bundle, options, index.get());
    return *slot;
  }
  std::vector<agents::ToolBundle> named;
  for (std::size_t i = 0; i < parts.size(); ++i) named.push_back({source.parts[i].name, parts[i].get()});
  auto several = std::make_unique<agents::MultiBundleTools>(std::move(named), tools_options(c, source.name));
  slot->several = several.get();
  slot->tools = std::move(several);
  return *slot;
}

const retrieval::Retriever* LoadedBundle::retriever_for(const std::string& method) {
  if (method.empty() || method == "bm25f") return nullptr;
  if (method != "hybrid" && method != "hybrid+rerank") {
    throw InputError(fmt::format("{}: retrieval method '{}' is unknown; use bm25f, hybrid or hybrid+rerank", source.name, method));
  }
  if (combined()) {
    throw InputError(fmt::format("{}: retrieval {} takes one bundle; a combined entry's bundles are searched with bm25f",
                                 source.name, method));
  }
  std::lock_guard lock(*retrieval_mutex);
  auto& slot = retrievals[method];
  if (slot) return slot->retriever.get();
  cli::RetrievalFlags flags;  // sim embedder and reranker, no cache: offline
  flags.method = method;
  auto made = std::make_unique<SharedRetrieval>();
  made->ranking = cli::make_retrieval(*bundle, flags);
  made->retriever = std::make_unique<retrieval::Retriever>(made->ranking->retriever(*index));
  slot = std::move(made);
  return slot->retriever.get();
}

std::vector<retrieval::NamedBundle> LoadedBundle::named() const {
  std::vector<retrieval::NamedBundle> out;
  for (std::size_t i = 0; i < parts.size(); ++i) out.push_back({source.parts[i].name, parts[i].get()});
  return out;
}

std::size_t LoadedBundle::concept_count() const {
  if (!combined()) return bundle->concepts().size();
  std::size_t n = 0;
  for (const auto& part : parts) n += part->concepts().size();
  return n;
}

namespace {

retrieval::LoadOptions load_options(const BundleSource& b) {
  retrieval::LoadOptions load;
  load.profile = retrieval::parse_profile(b.profile).value_or(retrieval::Profile::okf);  // checked by the spec
  return load;
}

// Loads each part of a combined entry, with its checkout's lock held while
// it loads, and indexes them as one.
// Each part through the index cache (its own index is not used: the parts
// are searched as one combined index).
void load_parts(LoadedBundle& out, const GitOptions& git, const fs::path& index_cache) {
  for (BundleSource& part : out.source.parts) {
    std::optional<GitCheckout> checkout;
    fs::path dir = part.path;
    if (part.kind == BundleKind::git) {
      checkout.emplace(GitCheckout::open(part.git, git));
      dir = checkout->root();
      part.commit = checkout->commit();
    }
    out.parts.push_back(std::make_unique<retrieval::Bundle>(load_unindexed_bundle(dir, load_options(part), index_cache)));
    out.part_dirs.push_back(dir);
  }
  const std::vector<retrieval::NamedBundle> named = out.named();
  out.index = std::make_unique<retrieval::SearchIndex>(retrieval::SearchIndex::build(named));
}

}  // namespace

LoadedBundle load_bundle(const ExperimentSpec& spec, const BundleSource& b, const GitOptions& git,
                         const fs::path& index_cache) {
  LoadedBundle out;
  out.source = b;
  fs::path questions;
  std::optional<GitCheckout> checkout;  // its lock is held until the bundle and questions are loaded
  const auto start = Clock::now();
  if (b.kind == BundleKind::combined) {
    load_parts(out, git, index_cache);
    questions = b.questions;
  } else if (b.kind == BundleKind::git) {
    checkout.emplace(GitCheckout::open(b.git, git));
    out.dir = checkout->root();
    out.source.commit = checkout->commit();
    questions = b.questions.empty() ? out.dir / "questions.yaml" : b.questions;
  } else if (b.kind == BundleKind::path) {
    out.dir = b.path;
    questions = b.questions;
  } else if (b.kind == BundleKind::generated) {
    const fs::path folder = generated_bundle(spec, b);
    out.dir = folder / "bundle";
    questions = folder / "questions.yaml";
  } else {
    fs::path folder = converted_collection(spec, b);
    if (b.concepts > 0) folder = converted_subset(spec, b, folder);
    out.dir = folder / "bundle";
    questions = folder / "questions.yaml";
  }
  out.questions_file = questions;
  if (!out.combined()) {
    retrieval::CachedBundle loaded = load_cached_bundle(out.dir, load_options(b), {}, index_cache);
    out.bundle = std::make_unique<retrieval::Bundle>(std::move(loaded.bundle));
    out.index = std::make_unique<retrieval::SearchIndex>(std::move(loaded.index));
    out.selection = cli::make_selection(*out.bundle, b.policy);  // the spec checked the policy's values
    if (out.selection)
      log_line(fmt::format("{}: {}; {} concept(s) excluded", b.name, out.selection->policy, out.selection->excluded.size()));
  }
  out.questions = datasets::load_questions(questions);
  if (out.combined()) {
    datasets::check_concepts(out.questions, out.named());
  } else {
    datasets::check_concepts(out.questions, *out.bundle);
  }
  if (spec.max_questions > 0 && out.questions.questions.size() > spec.max_questions) {
    out.questions.questions.resize(spec.max_questions);
  }
  if (out.questions.name.empty()) out.questions.name = b.name;
  log_line(fmt::format("{}: {} concepts, {} questions, loaded and indexed in {:.0f} ms", b.name, out.concept_count(),
                       out.questions.questions.size(), ms_since(start)));
  return out;
}

}  // namespace okfbench::engine
