#include "core/hash.hpp"

#include <gtest/gtest.h>

namespace okfbench {
namespace {

// Reference values from the FNV authors' test vectors.
TEST(Hash, StableHashIsFnv1a64) {
  EXPECT_EQ(stable_hash(""), "cbf29ce484222325");
  EXPECT_EQ(stable_hash("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(stable_hash("foobar"), "85944171f73967e8");
  EXPECT_EQ(hex(fnv1a("foobar")), stable_hash("foobar"));
}

TEST(Hash, Fnv1a32MatchesTheReferenceValues) {
  EXPECT_EQ(fnv1a_32(""), 0x811c9dc5u);
  EXPECT_EQ(fnv1a_32("a"), 0xe40c292cu);
  EXPECT_EQ(fnv1a_32("foobar"), 0xbf9cf968u);
}

TEST(Hash, SeedContinuesAHash) {
  // Hashing "foo" then "bar" from its hash is hashing "foobar".
  EXPECT_EQ(fnv1a("bar", fnv1a("foo")), fnv1a("foobar"));
}

TEST(Hash, ChainDependsOnOrder) {
  const std::uint64_t a = fnv1a("a"), b = fnv1a("b");
  EXPECT_NE(chain(chain(kFnvOffset, a), b), chain(chain(kFnvOffset, b), a));
  EXPECT_EQ(chain(chain(kFnvOffset, a), b), chain(chain(kFnvOffset, a), b));
}

TEST(Hash, HexIsSixteenLowerCaseDigits) {
  EXPECT_EQ(hex(0), "0000000000000000");
  EXPECT_EQ(hex(0xABCDEF0123456789ULL), "abcdef0123456789");
  EXPECT_EQ(hex(~0ULL), "ffffffffffffffff");
}

}  // namespace
}  // namespace okfbench
