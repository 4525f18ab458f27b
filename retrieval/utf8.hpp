#pragma once
// Cutting UTF-8 text without splitting a character. Header-only.
#include <cstddef>
#include <string_view>

namespace okfbench::retrieval {

// The longest prefix of at most `max_bytes` bytes that ends on a character
// boundary (continuation bytes 10xxxxxx are never the first byte cut off).
inline std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

}  // namespace okfbench::retrieval
