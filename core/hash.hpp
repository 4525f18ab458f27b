#pragma once
// The one stable hash: FNV-1a (Fowler, Noll, Vo; IETF draft-eastlake-fnv),
// platform- and run-independent, which std::hash is not. It names prompt
// blocks, cache entries, trial keys and generated files. Not cryptographic:
// keys that must not collide are also compared in full where they are stored
// (digests that must resist tampering use SHA-256, core/digest.hpp).
#include <cstdint>
#include <string>
#include <string_view>

namespace okfbench {

constexpr std::uint64_t kFnvOffset = 14695981039346656037ULL;
constexpr std::uint64_t kFnvPrime = 1099511628211ULL;

// 64-bit FNV-1a of `text`, continuing from `seed` (a previous hash) if given.
constexpr std::uint64_t fnv1a(std::string_view text, std::uint64_t seed = kFnvOffset) {
  std::uint64_t h = seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}

// 32-bit FNV-1a: the short suffix of converted file names (datasets/convert).
constexpr std::uint32_t fnv1a_32(std::string_view text) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : text) h = (h ^ c) * 16777619u;
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

// 16 lower-case hex digits.
std::string hex(std::uint64_t value);

// hex(fnv1a(text)): the form stored in trial keys, spec hashes and cache names.
std::string stable_hash(std::string_view text);

}  // namespace okfbench
