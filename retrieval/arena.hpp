#pragma once
// A bump allocator for short-lived, many-small-block work: parsing one
// markdown document with cmark-gfm allocates a node or a buffer for every
// element, and malloc/free of those blocks cost more than the parse itself.
// Blocks are never freed one by one; clear() drops them all at once.
//
// Not thread-safe: use one arena per thread.
#include <cstddef>
#include <vector>

namespace okfbench::retrieval {

class Arena {
 public:
  explicit Arena(std::size_t chunk_bytes = 64 * 1024) : chunk_bytes_(chunk_bytes) {}
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena();

  // `bytes` zeroed bytes, aligned for any type. Aborts when memory runs out,
  // as cmark-gfm's own allocator does (it cannot report failure).
  void* allocate_zeroed(std::size_t bytes);

  // realloc(): keeps the first min(old, new) bytes; grows in place when
  // `block` is the newest allocation and the chunk has room. nullptr allocates.
  void* resize(void* block, std::size_t bytes);

  // Drops every block. Keeps up to `retained_chunks` chunks for reuse.
  void clear();

  std::size_t chunk_count() const { return chunks_.size(); }

 private:
  struct Chunk {
    std::byte* data;
    std::size_t size;
  };
  void* allocate(std::size_t bytes);
  void next_chunk(std::size_t need);

  static constexpr std::size_t retained_chunks = 16;
  std::size_t chunk_bytes_;
  std::vector<Chunk> chunks_;
  std::size_t current_ = 0;  // chunk being filled
  std::size_t used_ = 0;     // bytes used in the current chunk
  std::byte* last_ = nullptr;  // newest block, for in-place growth
};

}  // namespace okfbench::retrieval
