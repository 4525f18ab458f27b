#include "core/saturate.hpp"

#include <gtest/gtest.h>

namespace okfbench {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

TEST(Saturate, SumsAndProductsStopAtTheEnds) {
  EXPECT_EQ(saturating_add(2, 3), 5);
  EXPECT_EQ(saturating_add(kMax - 1, 5), kMax);
  EXPECT_EQ(saturating_add(kMax, kMax), kMax);
  EXPECT_EQ(saturating_add(kMin + 1, -5), kMin);
  EXPECT_EQ(saturating_add(kMax, -kMax), 0);
  EXPECT_EQ(saturating_mul(1'000'000'000, 1'000'000'000), 1'000'000'000'000'000'000);
  EXPECT_EQ(saturating_mul(kMax / 2, 3), kMax);
  EXPECT_EQ(saturating_mul(kMax / 2, -3), kMin);
}

}  // namespace
}  // namespace okfbench
