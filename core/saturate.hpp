#pragma once
// Token and byte totals: sums that stop at the ends of int64 instead of
// wrapping around. Provider counts are range-checked where they are read
// (agents/json_util.hpp caps one call's count at 10^9), so a total that gets
// here near INT64_MAX comes from a damaged record or cache; it then reads as
// INT64_MAX, a number nobody mistakes for a real total, never as a negative
// one. Header-only so that every library shares one definition.
#include <cstdint>
#include <limits>

namespace okfbench {

inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

inline std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (!__builtin_mul_overflow(a, b, &product)) return product;
  return (a < 0) == (b < 0) ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

}  // namespace okfbench
