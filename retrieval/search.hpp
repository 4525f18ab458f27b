#pragma once
// BM25F search over a bundle's concepts. (Contract sketch: the search work
// fills in the analyzer options and the formula documentation; these names
// and signatures are what context() and the agent tools call.)
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "retrieval/bundle.hpp"

namespace okfbench::retrieval {

struct SearchOptions {
  std::size_t limit = 5;           // the tool API clamps to 1..50; see clamp_tool_limit
  std::string type;                // "" = any; case-insensitive
  std::vector<std::string> tags;   // all must match, case-insensitive
  std::string layer;               // "" = any
};

struct Hit {
  const Concept* concept = nullptr;
  double score = 0.0;
};

class SearchIndex {
 public:
  // Indexes the searchable concepts of `bundle` (never index.md or log.md).
  // The bundle must outlive the index.
  static SearchIndex build(const Bundle& bundle);
  // Ranked hits, best first, ties by concept id ascending.
  std::vector<Hit> search(std::string_view query, const SearchOptions& options = {}) const;

  SearchIndex(SearchIndex&&) noexcept;
  SearchIndex& operator=(SearchIndex&&) noexcept;
  ~SearchIndex();

 private:
  SearchIndex();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace okfbench::retrieval
