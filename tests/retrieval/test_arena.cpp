// Arena: the allocator cmark-gfm parses each document with.
#include "retrieval/arena.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace okfbench::retrieval {
namespace {

bool all_zero(const void* block, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(block);
  for (std::size_t i = 0; i < bytes; ++i)
    if (p[i] != 0) return false;
  return true;
}

TEST(Arena, BlocksAreZeroedAlignedAndDistinct) {
  Arena arena(256);
  auto* a = static_cast<char*>(arena.allocate_zeroed(10));
  std::memset(a, 'x', 10);
  auto* b = static_cast<char*>(arena.allocate_zeroed(33));
  EXPECT_TRUE(all_zero(b, 33));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 16, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % 16, 0u);
  EXPECT_GE(b, a + 10);
  EXPECT_EQ(std::string(a, 10), std::string(10, 'x'));  // b did not overwrite a
}

TEST(Arena, ResizeKeepsContentInPlaceOrByCopy) {
  Arena arena(1024);
  auto* newest = static_cast<char*>(arena.resize(nullptr, 8));
  std::memcpy(newest, "abcdefgh", 8);
  EXPECT_EQ(arena.resize(newest, 100), newest);  // newest block grows in place
  auto* other = static_cast<char*>(arena.allocate_zeroed(8));
  std::memcpy(other, "12345678", 8);
  auto* moved = static_cast<char*>(arena.resize(newest, 200));  // no longer newest: copied
  EXPECT_NE(moved, newest);
  EXPECT_EQ(std::string(moved, 8), "abcdefgh");
  EXPECT_EQ(std::string(other, 8), "12345678");
  EXPECT_EQ(arena.resize(moved, 4), moved);  // shrinking never moves
  auto* big = static_cast<char*>(arena.resize(moved, 5000));  // past the chunk: a chunk of its own
  EXPECT_EQ(std::string(big, 4), "abcd");
}

TEST(Arena, ClearReusesChunksAndDropsOversizedOnes) {
  Arena arena(256);  // one 200-byte block per chunk
  void* first = arena.allocate_zeroed(200);
  std::memset(first, 'x', 200);
  for (int i = 1; i < 40; ++i) arena.allocate_zeroed(200);
  arena.allocate_zeroed(10'000);
  std::size_t chunks = arena.chunk_count();
  EXPECT_GT(chunks, 16u);
  arena.clear();
  EXPECT_EQ(arena.chunk_count(), 16u);  // kept for the next document, oversized one freed
  auto* again = static_cast<char*>(arena.allocate_zeroed(200));
  EXPECT_EQ(again, first);            // the kept chunks are used first
  EXPECT_TRUE(all_zero(again, 200));  // and handed out zeroed again
  for (int i = 1; i < 40; ++i) arena.allocate_zeroed(200);
  EXPECT_EQ(arena.chunk_count(), chunks - 1);  // 40 blocks, no oversized chunk
}

}  // namespace
}  // namespace okfbench::retrieval
