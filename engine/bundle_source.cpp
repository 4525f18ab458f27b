#include "engine/bundle_source.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "engine/limits.hpp"
#include "engine/number_option.hpp"

namespace okfbench::engine {
namespace fs = std::filesystem;

GitOptions SourceFlags::options() const {
  GitOptions options;
  options.cache_dir = cache;
  options.refresh = refresh;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_seconds * 1000.0));
  options.max_bytes = max_bytes;
  options.max_files = max_files;
  return options;
}

fs::path SourceFlags::index_cache_dir() const {
  if (no_index_cache) return {};
  return index_cache.empty() ? retrieval::default_index_cache_dir() : fs::path(index_cache);
}

retrieval::CachedBundle load_cached_bundle(const fs::path& root, const retrieval::LoadOptions& load,
                                           const retrieval::IndexConfig& config, const fs::path& cache_dir) {
  retrieval::CachedBundle loaded = retrieval::load_cached(root, load, config, cache_dir);
  if (!loaded.note.empty()) std::fprintf(stderr, "okfbench: warning: %s\n", loaded.note.c_str());
  return loaded;
}

retrieval::Bundle load_unindexed_bundle(const fs::path& root, const retrieval::LoadOptions& load,
                                        const fs::path& cache_dir) {
  std::string note;
  retrieval::Bundle bundle = retrieval::load_cached_unindexed(root, load, cache_dir, note);
  if (!note.empty()) std::fprintf(stderr, "okfbench: warning: %s\n", note.c_str());
  return bundle;
}

std::string folder_name(const fs::path& path) {
  fs::path clean = path.lexically_normal();
  if (!clean.empty() && clean.filename().empty()) clean = clean.parent_path();  // "a/b/" -> "a/b"
  if (clean.empty() || clean == "." || clean.filename() == "..") {
    std::error_code ec;
    const fs::path absolute = fs::weakly_canonical(fs::absolute(path), ec);
    return ec ? clean.string() : absolute.filename().string();
  }
  return clean.filename().string();
}

BundleSourceFolder BundleSourceFolder::open(const std::string& where, const SourceFlags& flags) {
  BundleSourceFolder out;
  std::optional<GitSource> git = parse_git_source(where, flags.ref, flags.subdir);
  if (!git) {
    if (!flags.ref.empty() || !flags.subdir.empty())
      throw UsageError(fmt::format("--git-ref and --git-subdir need a git URL; {} is a folder", shown_source(where)));
    out.root_ = where;
    out.name_ = folder_name(where);
    return out;
  }
  out.checkout_.emplace(GitCheckout::open(*git, flags.options()));
  out.root_ = out.checkout_->root();
  out.name_ = git->default_name();
  return out;
}

std::vector<retrieval::NamedBundle> SourceBundles::named() const {
  std::vector<retrieval::NamedBundle> out;
  for (std::size_t i = 0; i < bundles.size(); ++i) out.push_back({names[i], bundles[i].get()});
  return out;
}

SourceBundles load_sources(const std::vector<std::string>& wheres, const SourceFlags& flags,
                           const retrieval::LoadOptions& load, const retrieval::IndexConfig& config) {
  if (wheres.size() > 1 && (!flags.ref.empty() || !flags.subdir.empty()))
    throw UsageError("--git-ref and --git-subdir apply to one bundle; with several, write each git source as "
                     "URL#REF:SUBDIR");
  SourceBundles out;
  for (std::size_t i = 0; i < wheres.size(); ++i) {
    const BundleSourceFolder source = BundleSourceFolder::open(wheres[i], flags);
    const auto twin = std::find(out.names.begin(), out.names.end(), source.name());
    if (twin != out.names.end())
      throw UsageError(fmt::format("two bundles are named '{}' ({} and {}): a bundle is named after its folder, the "
                                   "last part of its git subdirectory or its repository; load one from a folder "
                                   "with another name",
                                   source.name(), shown_source(wheres[static_cast<std::size_t>(twin - out.names.begin())]),
                                   shown_source(wheres[i])));
    if (!fs::is_directory(source.root()))
      throw InputError(shown_source(wheres[i]) + " is not a directory: pass the root of an OKF bundle or a git URL");
    retrieval::CachedBundle loaded = load_cached_bundle(source.root(), load, config, flags.index_cache_dir());
    out.bundles.push_back(std::make_unique<retrieval::Bundle>(std::move(loaded.bundle)));
    out.indexes.push_back(std::make_unique<retrieval::SearchIndex>(std::move(loaded.index)));
    out.names.push_back(source.name());
  }
  return out;
}

namespace {

std::size_t error_count(const retrieval::Bundle& bundle) {
  return static_cast<std::size_t>(std::count_if(bundle.diagnostics().begin(), bundle.diagnostics().end(), [](const auto& d) {
    return d.severity == retrieval::Severity::error;
  }));
}

}  // namespace

std::optional<ProfileHint> better_profile(const retrieval::Bundle& bundle) {
  const retrieval::Profile tried = bundle.options().profile;
  if (!retrieval::is_okf_or_repo(tried)) return std::nullopt;  // lessons and expertise were asked for by name
  const bool empty = bundle.concepts().empty();
  if (tried == retrieval::Profile::okf && !empty && error_count(bundle) == 0) return std::nullopt;
  if (tried == retrieval::Profile::repo && !empty) return std::nullopt;
  retrieval::LoadOptions other = bundle.options();
  other.profile = tried == retrieval::Profile::okf ? retrieval::Profile::repo : retrieval::Profile::okf;
  const retrieval::Bundle again = retrieval::Bundle::load(bundle.root(), other);
  const bool better = other.profile == retrieval::Profile::repo
                          ? again.concepts().size() > bundle.concepts().size() && error_count(again) == 0
                          : !again.concepts().empty();
  if (!better) return std::nullopt;
  return ProfileHint{other.profile, again.concepts().size()};
}

std::string profile_hint_text(const retrieval::Bundle& bundle) {
  const std::optional<ProfileHint> hint = better_profile(bundle);
  if (!hint) return {};
  const std::string_view name = retrieval::to_string(hint->profile);
  return fmt::format("{} concept(s) load with --profile {}{}: add --profile {}", hint->concepts, name,
                     hint->profile == retrieval::Profile::repo ? " (plain markdown: wikilinks, no frontmatter needed)" : "",
                     name);
}

void require_concepts(const retrieval::Bundle& bundle, const std::string& where) {
  if (!bundle.concepts().empty()) return;
  const std::string hint = profile_hint_text(bundle);
  throw InputError(fmt::format("{}: no concepts loaded with --profile {}; {}", where,
                               retrieval::to_string(bundle.options().profile),
                               hint.empty() ? fmt::format("run `okfbench validate {}` to see why", where) : hint));
}

}  // namespace okfbench::engine

namespace okfbench::cli {

void add_source_flags(CLI::App& cmd, engine::SourceFlags& flags) {
  cmd.add_option("--git-ref", flags.ref, "Git bundles: branch, tag or commit to check out (default: the remote's HEAD)");
  cmd.add_option("--git-subdir", flags.subdir, "Git bundles: the bundle's folder inside the repository");
  add_source_cache_flags(cmd, flags);
}

void add_source_cache_flags(CLI::App& cmd, engine::SourceFlags& flags) {
  cmd.add_flag("--refresh", flags.refresh, "Git bundles: clone again instead of reusing the cached checkout");
  cmd.add_option("--git-timeout", flags.timeout_seconds, "Git bundles: seconds to wait for the cache lock and for each git command")
      ->check(number_in(engine::limits::git_timeout_seconds))
      ->capture_default_str();
  cmd.add_option("--git-max-bytes", flags.max_bytes,
                 "Git bundles: stop a clone whose folder (.git included) passes this many bytes")
      ->check(number_in(engine::limits::git_clone_bytes))
      ->capture_default_str();
  cmd.add_option("--git-max-files", flags.max_files,
                 "Git bundles: stop a clone whose folder (.git included) passes this many files and folders")
      ->check(number_in(engine::limits::git_clone_files))
      ->capture_default_str();
  cmd.add_option("--git-cache", flags.cache, "Git bundles: cache folder (default $XDG_CACHE_HOME/okfbench/git)");
  cmd.add_option("--index-cache", flags.index_cache,
                 "Folder of the persistent bundle index (default $XDG_CACHE_HOME/okfbench/index)");
  cmd.add_flag("--no-index-cache", flags.no_index_cache,
               "Load the bundle from its files and write no index cache");
}

}  // namespace okfbench::cli
