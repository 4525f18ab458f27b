#pragma once
// SHA-256 (OpenSSL), for checking the tokenizer vocabularies, keying the
// embedding cache and checking the index cache. Every function throws
// InputError if OpenSSL fails.
#include <array>
#include <memory>
#include <string>
#include <string_view>

namespace okfbench {

using Sha256Digest = std::array<unsigned char, 32>;

Sha256Digest sha256(std::string_view data);

// Lowercase hex of sha256(data).
std::string sha256_hex(std::string_view data);

// SHA-256 of data given in pieces.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  void add(std::string_view data);
  Sha256Digest finish();  // once; add() and finish() after it are errors

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace okfbench
