#pragma once
// FNV-1a 64-bit (Fowler, Noll, Vo): a stable, platform-independent hash for
// prompt blocks and cache keys. Not cryptographic; keys that must not collide
// are also compared in full where they are stored.
#include <cstdint>
#include <string>
#include <string_view>

namespace okfbench::agents {

constexpr std::uint64_t kFnvOffset = 14695981039346656037ULL;
constexpr std::uint64_t kFnvPrime = 1099511628211ULL;

constexpr std::uint64_t fnv1a(std::string_view text, std::uint64_t seed = kFnvOffset) {
  std::uint64_t h = seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}

// Chains a block hash onto a prefix hash: the identity of "everything up to here".
constexpr std::uint64_t chain(std::uint64_t prefix, std::uint64_t block) {
  for (int i = 0; i < 8; ++i) {
    prefix ^= (block >> (8 * i)) & 0xFF;
    prefix *= kFnvPrime;
  }
  return prefix;
}

std::string hex(std::uint64_t value);

}  // namespace okfbench::agents
