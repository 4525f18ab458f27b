// The index cache's reader (retrieval/index_cache.hpp) on a payload that
// passed the checksum but was not written by Bundle::save and
// SearchIndex::save: the input is a cache file's bundle section, a byte 1,
// and the index at the start of its search section. A real file's checksum stops random damage; this is what a buggy or
// hostile writer could still hand the reader.
//
// Invariants: restoring throws nothing but detail::CorruptCache; a bundle
// and index that restore answer every query (graph, listings, history,
// search, candidates) without reading outside their arrays (ASan and UBSan
// watch) and name only concepts they have.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "retrieval/binary_io.hpp"
#include "retrieval/bundle.hpp"
#include "retrieval/search.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace okfbench::retrieval;
using okfbench::fuzz::check;

void query(const Bundle& bundle, const SearchIndex& index) {
  for (const Concept& c : bundle.concepts()) {
    bundle.neighbors(c.id, Direction::both, {}, 2);
    bundle.unresolved(c.id);
    bundle.history(c.id);
  }
  bundle.index();
  bundle.layers();
  bundle.history();
  SearchOptions options;
  options.limit = 10;
  for (const Hit& hit : index.search("a the revenue orders", options))
    check(hit.concept_ptr != nullptr && bundle.find(hit.id) == hit.concept_ptr, "a hit names a concept not in the bundle");
  options.type = "note";
  options.tags = {"x"};
  options.layer = "notes";
  index.search("x", options);
  index.candidates(options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const char* begin = reinterpret_cast<const char*>(data);
  detail::Reader reader(begin, begin + size);
  try {
    Bundle bundle = Bundle::restore(reader, "/nonexistent-root", {});
    std::optional<SearchIndex> index;
    if (!reader.get_bool()) return 0;
    detail::Reader alone = reader;
    index.emplace(SearchIndex::restore(reader, &bundle));
    query(bundle, *index);
    // The same bytes without the bundle (CachedSearch): no hit names a concept.
    const SearchIndex bare = SearchIndex::restore(alone, nullptr);
    for (const Hit& hit : bare.search("a the revenue orders", {}))
      check(hit.concept_ptr == nullptr && bundle.find(hit.id) != nullptr, "a bare index's hit is not the bundle's");
  } catch (const detail::CorruptCache&) {
  }
  return 0;
}
