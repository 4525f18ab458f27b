#include "retrieval/utf8.hpp"

#include <utf8proc.h>

#include <fmt/format.h>

namespace okfbench::retrieval {
namespace {

// Length of the valid UTF-8 character at the start of `text` (not empty), or 0.
std::size_t utf8_length(std::string_view text) {
  if (static_cast<unsigned char>(text[0]) < 0x80) return 1;
  utf8proc_int32_t codepoint = 0;
  utf8proc_ssize_t length = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                             static_cast<utf8proc_ssize_t>(text.size()), &codepoint);
  return length > 0 ? static_cast<std::size_t>(length) : 0;
}

}  // namespace

std::size_t invalid_utf8_offset(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {  // most of every file: no call
      ++i;
      continue;
    }
    std::size_t length = utf8_length(text.substr(i));
    if (length == 0) return i;
    i += length;
  }
  return std::string_view::npos;
}

std::string escape_invalid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t length = utf8_length(text.substr(i));
    if (length == 0) {
      out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

std::size_t control_character_offset(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte == 0x7F) return i;
    if (byte == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F) return i;
  }
  return std::string_view::npos;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) out += "\xEF\xBF\xBD";
    else out += text[i];
  }
  return out;
}

std::string echoed(std::string_view text, std::size_t max_chars) {
  const std::string_view shown = utf8_prefix(text, max_chars);
  std::string out = printable(escape_invalid_utf8(shown));
  if (shown.size() < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace okfbench::retrieval
