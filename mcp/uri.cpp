#include "mcp/uri.hpp"

#include <fmt/format.h>

namespace okfbench::mcp {
namespace {

constexpr std::string_view kScheme = "okf://";

bool unreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

std::string encode(std::string_view text, bool keep_slash) {
  std::string out;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (unreserved(c) || (keep_slash && c == '/')) out += ch;
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    int high = hex_value(text[i + 1]);
    int low = hex_value(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

}  // namespace

std::string concept_uri(std::string_view bundle, std::string_view concept_id) {
  return std::string(kScheme) + encode(bundle, false) + "/" + encode(concept_id, true);
}

std::optional<ConceptUri> parse_concept_uri(std::string_view uri) {
  if (!uri.starts_with(kScheme)) return std::nullopt;
  std::string_view rest = uri.substr(kScheme.size());
  std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == rest.size()) return std::nullopt;
  std::optional<std::string> bundle = decode(rest.substr(0, slash));
  std::optional<std::string> id = decode(rest.substr(slash + 1));
  if (!bundle || !id) return std::nullopt;
  return ConceptUri{*bundle, *id};
}

}  // namespace okfbench::mcp
