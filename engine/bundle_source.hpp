#pragma once
// Where a command's bundle comes from: a folder, or a git source
// (engine/git_source.hpp), and the index cache it loads through
// (retrieval/index_cache.hpp), with the flags every bundle-taking command has:
//   --git-ref REF  --git-subdir DIR  --refresh  --git-timeout SECONDS  --git-cache DIR
//   --index-cache DIR  --no-index-cache
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/git_source.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/index_cache.hpp"
#include "retrieval/search.hpp"

namespace CLI {
class App;
}

namespace okfbench::engine {

struct SourceFlags {
  std::string ref;
  std::string subdir;
  std::string cache;  // "" = default_git_cache()
  bool refresh = false;
  double timeout_seconds = 120;
  std::uint64_t max_bytes = GitOptions{}.max_bytes;  // --git-max-bytes
  std::uint64_t max_files = GitOptions{}.max_files;  // --git-max-files
  std::string index_cache;  // "" = retrieval::default_index_cache_dir()
  bool no_index_cache = false;

  GitOptions options() const;
  // The index cache folder; empty with --no-index-cache (or when there is no default).
  std::filesystem::path index_cache_dir() const;
};

// Loads `root` through the index cache in `cache_dir` (none when empty) and
// prints the cache's note, if any, to stderr as a warning.
retrieval::CachedBundle load_cached_bundle(const std::filesystem::path& root, const retrieval::LoadOptions& load,
                                           const retrieval::IndexConfig& config,
                                           const std::filesystem::path& cache_dir);
// The same for a caller that reads no index (retrieval::load_cached_unindexed).
retrieval::Bundle load_unindexed_bundle(const std::filesystem::path& root, const retrieval::LoadOptions& load,
                                        const std::filesystem::path& cache_dir);

// A folder to load a bundle from. For a git source it holds the checkout's
// lock while it lives, so keep it alive until Bundle::load returned.
class BundleSourceFolder {
 public:
  // `where` is a folder or a git source. UsageError when --git-ref or
  // --git-subdir is given for a folder; InputError from the checkout.
  static BundleSourceFolder open(const std::string& where, const SourceFlags& flags);

  const std::filesystem::path& root() const { return root_; }
  // The default bundle name: the folder's name, the git subdirectory's last
  // part, or the repository's name.
  const std::string& name() const { return name_; }
  // The checkout, for a git source (its commit names the content).
  const GitCheckout* checkout() const { return checkout_ ? &*checkout_ : nullptr; }

 private:
  std::filesystem::path root_;
  std::string name_;
  std::optional<GitCheckout> checkout_;
};

// Bundles loaded from several sources at once, in the order given.
struct SourceBundles {
  std::vector<std::unique_ptr<retrieval::Bundle>> bundles;  // addresses stay put
  std::vector<std::unique_ptr<retrieval::SearchIndex>> indexes;  // each bundle's own, for the config asked for
  std::vector<std::string> names;                           // as BundleSourceFolder::name() says
  std::vector<retrieval::NamedBundle> named() const;
};

// Opens and loads each of `wheres` with `load` through the index cache the
// flags name (with each bundle's index for `config`), each checkout's lock
// held while it loads. UsageError when --git-ref or --git-subdir is given with
// several sources (write each as URL#REF:SUBDIR) or when two bundles get
// one name; InputError from a source or when one is not a directory.
SourceBundles load_sources(const std::vector<std::string>& wheres, const SourceFlags& flags,
                           const retrieval::LoadOptions& load, const retrieval::IndexConfig& config = {});

// The profile a bundle loaded under `tried` would be better read with: repo
// for a plain-markdown tree (Obsidian, Foam, a docs folder) that the okf
// profile skips file by file, when repo loads more concepts without one
// error; okf for an OKF bundle loaded as repo that has no concepts. nullopt
// when neither applies. Loads the folder once more: call it on a failure.
struct ProfileHint {
  retrieval::Profile profile = retrieval::Profile::repo;
  std::size_t concepts = 0;  // what that profile loads
};
std::optional<ProfileHint> better_profile(const retrieval::Bundle& bundle);
// " (N concepts load with --profile P: add --profile P)" or "".
std::string profile_hint_text(const retrieval::Bundle& bundle);
// Throws InputError when `bundle` has no concepts, naming the source, the
// profile it was loaded with and, when another one loads concepts, the flag
// to give; otherwise pointing at `okfbench validate`.
void require_concepts(const retrieval::Bundle& bundle, const std::string& where);

// The folder name of a local bundle path ("a/b/" -> "b"; "." -> the current folder's name).
std::string folder_name(const std::filesystem::path& path);

}  // namespace okfbench::engine

namespace okfbench::cli {
void add_source_flags(CLI::App& cmd, engine::SourceFlags& flags);
// Only --refresh, --git-timeout and --git-cache: `okfbench run`, whose spec
// names each git bundle's ref and subdirectory.
void add_source_cache_flags(CLI::App& cmd, engine::SourceFlags& flags);
}  // namespace okfbench::cli
