// The cache file's byte streams: padding to 8, and a Reader that hands back
// what it has read past.
#include "retrieval/binary_io.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace okfbench::retrieval::detail {
namespace {

TEST(BinaryIo, PaddingTakesAPositionToTheNextMultipleOf8) {
  EXPECT_EQ(padding_to_8(0), 0u);
  EXPECT_EQ(padding_to_8(1), 7u);
  EXPECT_EQ(padding_to_8(7), 1u);
  EXPECT_EQ(padding_to_8(8), 0u);
  EXPECT_EQ(padding_to_8(13), 3u);
  Writer w;
  w.put<std::uint8_t>(1);
  w.align();
  EXPECT_EQ(w.position(), 8u);
  w.align();
  EXPECT_EQ(w.position(), 8u);
}

// Every byte read past is handed back once, in order, in pieces of at least
// the chunk; less than a chunk stays held back at the end.
TEST(BinaryIo, AReaderReleasesWhatItHasReadPastInChunks) {
  Writer w;
  for (int i = 0; i < 50; ++i) w.put_string(std::string(static_cast<std::size_t>(i), 'x'));
  const std::string bytes = w.buffer();
  Reader r(bytes.data(), bytes.data() + bytes.size());
  std::vector<std::string_view> released;
  r.release_behind([&](std::string_view piece) { released.push_back(piece); }, 100);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(r.get_string(), std::string(static_cast<std::size_t>(i), 'x'));
  ASSERT_FALSE(released.empty());
  const char* next = bytes.data();
  for (std::string_view piece : released) {
    EXPECT_EQ(piece.data(), next);
    EXPECT_GE(piece.size(), 100u);
    next = piece.data() + piece.size();
  }
  EXPECT_LE(next, bytes.data() + bytes.size());
  EXPECT_LT(bytes.data() + bytes.size() - next, 100) << "less than a chunk is held back";
}

}  // namespace
}  // namespace okfbench::retrieval::detail
