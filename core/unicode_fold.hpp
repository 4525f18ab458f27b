#pragma once
// The one Unicode rule shared by search terms (retrieval/analyzer.cpp) and the
// facts grader (reports/graders.cpp): invalid UTF-8 bytes read as spaces, text
// is folded with NFKC and case folding, and a code point is part of a word
// (letters, numbers), a mark that continues a word, or a separator. Header-only
// so that reports/, which depends on nothing of ours, shares the definition.
#include <utf8proc.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace okfbench {

inline std::string sanitize_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  auto left = static_cast<utf8proc_ssize_t>(text.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {
      out.push_back(' ');
      n = 1;
    } else {
      out.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
    }
    p += n;
    left -= n;
  }
  return out;
}

// NFKC with case folding of the sanitized text; the sanitized text unfolded
// only when utf8proc cannot allocate.
inline std::string nfkc_casefold(std::string_view text) {
  constexpr auto options = static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD |
                                                          UTF8PROC_STABLE);
  auto map = [&](std::string_view in, utf8proc_uint8_t** mapped) {
    return utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(in.data()), static_cast<utf8proc_ssize_t>(in.size()),
                        mapped, options);
  };
  utf8proc_uint8_t* mapped = nullptr;
  utf8proc_ssize_t n = map(text, &mapped);
  if (n < 0) {
    const std::string clean = sanitize_utf8(text);
    n = map(clean, &mapped);
    if (n < 0) return clean;
  }
  std::string out(reinterpret_cast<const char*>(mapped), static_cast<std::size_t>(n));
  std::free(mapped);
  return out;
}

enum class CharClass { separator, word, mark };

inline CharClass classify(utf8proc_int32_t cp) {
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return CharClass::word;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
      return CharClass::mark;
    default:
      return CharClass::separator;
  }
}

}  // namespace okfbench
