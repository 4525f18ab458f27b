#pragma once
// The TokenCounter implementations and the factory that names them.
//
//   BpeCounter       exact counts for a public vocabulary (o200k_base, cl100k_base)
//   HeuristicCounter ceil(bytes / 4), for quick estimates without a vocabulary
//
// Both are thread-safe: one counter may serve every thread of a sweep.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "retrieval/bpe.hpp"
#include "retrieval/token_counter.hpp"

namespace okfbench::retrieval {

class BpeCounter final : public TokenCounter {
 public:
  explicit BpeCounter(const BpeEncoding& encoding) : encoding_(encoding) {}
  std::size_t count(std::string_view text) const override { return encoding_.count(text); }
  std::string name() const override { return encoding_.name(); }
  const BpeEncoding& encoding() const { return encoding_; }

 private:
  const BpeEncoding& encoding_;
};

class HeuristicCounter final : public TokenCounter {
 public:
  std::size_t count(std::string_view text) const override { return (text.size() + 3) / 4; }
  std::string name() const override { return "heuristic"; }
};

// Counter names make_counter accepts, in the order help texts list them.
std::vector<std::string> counter_names();

// "o200k_base", "cl100k_base" (the process-wide BpeEncoding, loaded on first
// use) or "heuristic". Throws UsageError for any other name and InputError when
// a vocabulary cannot be loaded.
std::unique_ptr<TokenCounter> make_counter(std::string_view name);

}  // namespace okfbench::retrieval
