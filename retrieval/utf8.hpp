#pragma once
// UTF-8 text: cutting it without splitting a character, finding and showing
// bytes that are not UTF-8 (file names, replies and files are only bytes).
#include <cstddef>
#include <string>
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

// Offset of the first byte of `text` that is not part of valid UTF-8
// (utf8proc's rules: no overlong forms, surrogates or code points past
// U+10FFFF), or npos.
std::size_t invalid_utf8_offset(std::string_view text);

// `text` with each byte that is not part of valid UTF-8 written as "\xHH",
// so a file name can be shown in a message or report that must be UTF-8.
std::string escape_invalid_utf8(std::string_view text);

// Offset of the first control character of valid UTF-8 `text` (C0, DEL, or
// C1 = U+0080..U+009F), or npos. None of them belongs in a name or an id.
std::size_t control_character_offset(std::string_view text);

// `text` fit to print as plain text (a terminal, a tool result): each C0
// control character but tab and line feed, and DEL, becomes U+FFFD; a "\r\n"
// becomes "\n". A NUL or a carriage return from bundle content can then never
// cut a line short or overwrite one, and so never forge an output line.
std::string printable(std::string_view text);

// An argument echoed back in a message: printable, bytes that are not UTF-8
// escaped, and at most `max_chars` bytes of it (cut on a character boundary)
// with how long it was, e.g. "abc... (100000 bytes)". A model that sends a
// 100,000-character id gets a short error, not its id back.
inline constexpr std::size_t kEchoedChars = 200;
std::string echoed(std::string_view text, std::size_t max_chars = kEchoedChars);

}  // namespace okfbench::retrieval
