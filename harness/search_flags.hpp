#pragma once
// Index and analyzer flags shared by `okfbench search` and `okfbench eval`:
//   --flat  --k1 X  --b X  --stemmer none|porter|english  --stopwords none|lucene
//   --profile okf|repo (how the bundle is loaded)
#include <optional>
#include <string>

#include "retrieval/bundle.hpp"
#include "retrieval/search.hpp"

namespace CLI {
class App;
}

namespace okfbench::cli {

struct SearchFlags {
  bool flat = false;
  std::optional<double> k1;
  std::optional<double> b;
  std::string stemmer = "none";
  std::string stopwords = "none";
  std::string profile = "okf";

  // UsageError for an unknown stemmer, stop word list or profile.
  retrieval::IndexConfig config() const;
  retrieval::LoadOptions load_options() const;
};

void add_search_flags(CLI::App& cmd, SearchFlags& flags);

// Loads a bundle for searching; InputError when `path` is not a directory.
// Reports the number of error diagnostics on stderr (they do not stop search).
retrieval::Bundle load_bundle_for_search(const std::string& path, const SearchFlags& flags);

}  // namespace okfbench::cli
