#pragma once
// Where a command's bundle comes from: a folder, or a git source
// (harness/git_source.hpp) with the flags every bundle-taking command has:
//   --git-ref REF  --git-subdir DIR  --refresh  --git-timeout SECONDS  --git-cache DIR
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/git_source.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/search.hpp"

namespace CLI {
class App;
}

namespace okfbench::harness {

struct GitFlags {
  std::string ref;
  std::string subdir;
  std::string cache;  // "" = default_git_cache()
  bool refresh = false;
  double timeout_seconds = 120;

  GitOptions options() const;
};

// A folder to load a bundle from. For a git source it holds the checkout's
// lock while it lives, so keep it alive until Bundle::load returned.
class BundleSourceFolder {
 public:
  // `where` is a folder or a git source. UsageError when --git-ref or
  // --git-subdir is given for a folder; InputError from the checkout.
  static BundleSourceFolder open(const std::string& where, const GitFlags& flags);

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
  std::vector<std::string> names;                           // as BundleSourceFolder::name() says
  std::vector<retrieval::NamedBundle> named() const;
};

// Opens and loads each of `wheres` with `load`, each checkout's lock held
// while it loads. UsageError when --git-ref or --git-subdir is given with
// several sources (write each as URL#REF:SUBDIR) or when two bundles get
// one name; InputError from a source or when one is not a directory.
SourceBundles load_sources(const std::vector<std::string>& wheres, const GitFlags& flags,
                           const retrieval::LoadOptions& load);

// The folder name of a local bundle path ("a/b/" -> "b"; "." -> the current folder's name).
std::string folder_name(const std::filesystem::path& path);

}  // namespace okfbench::harness

namespace okfbench::cli {
void add_git_flags(CLI::App& cmd, harness::GitFlags& flags);
// Only --refresh, --git-timeout and --git-cache: `okfbench run`, whose spec
// names each git bundle's ref and subdirectory.
void add_git_cache_flags(CLI::App& cmd, harness::GitFlags& flags);
}  // namespace okfbench::cli
