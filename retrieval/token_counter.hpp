#pragma once
// The interface every token count in okfbench goes through.
#include <cstddef>
#include <string>
#include <string_view>

namespace okfbench::retrieval {

class TokenCounter {
 public:
  virtual ~TokenCounter() = default;
  // Number of tokens `text` encodes to (ordinary text: special-token strings count as text).
  virtual std::size_t count(std::string_view text) const = 0;
  // "o200k_base", "cl100k_base" or "heuristic".
  virtual std::string name() const = 0;
};

}  // namespace okfbench::retrieval
