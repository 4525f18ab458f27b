#include "core/hash.hpp"

#include <array>

namespace okfbench {

std::string hex(std::uint64_t value) {
  std::array<char, 16> digits{};
  for (int i = 15; i >= 0; --i) {
    digits[static_cast<std::size_t>(i)] = "0123456789abcdef"[value & 0xF];
    value >>= 4;
  }
  return std::string(digits.data(), digits.size());
}

std::string stable_hash(std::string_view text) { return hex(fnv1a(text)); }

}  // namespace okfbench
