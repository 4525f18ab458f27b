// The index cache's reader (retrieval/index_cache.hpp) on a payload that
// passed the checksum but was not written by Bundle::save and
// SearchIndex::save: the input is the bundle section's length (u32), a
// cache file's bundle section, then its search section. A real file's checksum stops random damage; this is what a buggy or
// hostile writer could still hand the reader.
//
// Invariants: restoring throws nothing but detail::CorruptCache; a bundle
// and index that restore answer every query (graph, listings, history,
// search, candidates) without reading outside their arrays (ASan and UBSan
// watch) and name only concepts they have.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

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
  std::uint32_t bundle_bytes = 0;
  if (size < sizeof bundle_bytes) return 0;
  std::memcpy(&bundle_bytes, data, sizeof bundle_bytes);
  data += sizeof bundle_bytes;
  size -= sizeof bundle_bytes;
  if (bundle_bytes > size) return 0;
  // The search section is read in place, from 8-aligned bytes as in a cache file.
  std::vector<std::uint64_t> aligned((size - bundle_bytes + 7) / 8);
  if (size > bundle_bytes) std::memcpy(aligned.data(), data + bundle_bytes, size - bundle_bytes);
  const char* bundle_begin = reinterpret_cast<const char*>(data);
  const char* search_begin = reinterpret_cast<const char*>(aligned.data());
  detail::Reader bundle_reader(bundle_begin, bundle_begin + bundle_bytes);
  detail::Reader search_reader(search_begin, search_begin + (size - bundle_bytes));
  try {
    const Bundle bundle = Bundle::restore(bundle_reader, "/nonexistent-root", {});
    detail::Reader alone = search_reader;
    const SearchIndex index = SearchIndex::restore(search_reader, &bundle);
    query(bundle, index);
    // The same bytes without the bundle (CachedSearch): no hit names a concept.
    const SearchIndex bare = SearchIndex::restore(alone, nullptr);
    for (const Hit& hit : bare.search("a the revenue orders", {}))
      check(hit.concept_ptr == nullptr && bundle.find(hit.id) != nullptr, "a bare index's hit is not the bundle's");
  } catch (const detail::CorruptCache&) {
  }
  return 0;
}
