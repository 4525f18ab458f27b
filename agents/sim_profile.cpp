#include "agents/sim_profile.hpp"

#include <cmath>

#include "core/hash.hpp"

namespace okfbench::agents {
namespace {
// SplitMix64's finaliser (Steele, Lea, Flood 2014): spreads a hash over all
// 64 bits so that neighbouring indexes give unrelated draws.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
}  // namespace

int CountDistribution::draw(double u) const {
  double total = 0;
  for (const auto& [count, weight] : weights) total += weight;
  double cumulative = 0;
  for (const auto& [count, weight] : weights) {
    cumulative += weight;
    if (u * total < cumulative) return count;
  }
  return weights.empty() ? 0 : weights.back().first;
}

std::int64_t TokenOverheads::billed(std::int64_t tokens) const {
  if (content_ratio == 1.0) return tokens;
  return std::llround(content_ratio * static_cast<double>(tokens));
}

double CountDistribution::mean() const {
  double total = 0, sum = 0;
  for (const auto& [count, weight] : weights) {
    total += weight;
    sum += weight * count;
  }
  return total > 0 ? sum / total : 0.0;
}

double profile_draw(std::uint64_t seed, std::string_view question, std::string_view what, std::uint64_t index) {
  const std::uint64_t h = mix(fnv1a(what, fnv1a(question, mix(seed))) ^ mix(index));
  return static_cast<double>(h >> 11) * 0x1.0p-53;  // 53 random bits: exactly representable, < 1
}

}  // namespace okfbench::agents
