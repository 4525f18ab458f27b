#pragma once
// Serialising JSON that may hold text from outside (provider replies, tool
// results, question ids, file names, error messages). nlohmann's dump() throws
// type_error 316 on a string that is not valid UTF-8, and a throw while a
// record is being written used to abort the whole run; json_text() replaces
// each invalid byte by U+FFFD instead. Every dump of such data goes through
// it. Header-only so that every library shares it
// without a link dependency.
#include <nlohmann/json.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace okfbench {

// indent < 0: compact, one line; otherwise pretty-printed with that many spaces.
inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

inline std::string json_text(const nlohmann::ordered_json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// JSON numbers written to what they mean, not to the last bit of a double
// (0.23971999999999996 was a sum of prices): dollars to the micro-dollar,
// and counts held in a double (sums of token counts, forecast bounds) as
// integers. A value that is not finite or too large to be a count is left
// as it is.
inline double json_dollars(double usd) { return std::isfinite(usd) ? std::round(usd * 1e6) / 1e6 : usd; }

inline nlohmann::json json_count(double count) {
  if (!std::isfinite(count) || std::fabs(count) > 9e15) return count;
  return static_cast<std::int64_t>(std::llround(count));
}

// Serialised JSON made safe to place inside an HTML <script> element. The
// HTML tokenizer reads a script's text for "</script", and "<!--" followed
// later by "<script" switches it into a state that swallows the rest of the
// page; so every '<' becomes \u003c, and '>' and '&' (\u003e, \u0026) with
// it. U+2028 and U+2029 become \u2028 and \u2029, which older JavaScript
// parsers read as line ends. These characters occur in JSON only inside
// strings, where the escapes mean the same text. Every JSON embedded in HTML
// goes through this one function.
inline std::string json_for_html(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' && (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace okfbench
