#include "agents/json_util.hpp"

#include <fmt/format.h>
#include <utf8proc.h>

#include "core/json_text.hpp"

namespace okfbench::agents::json_util {

std::size_t nesting_depth(std::string_view text, std::size_t limit) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

json parse(std::string_view text, std::string_view what) {
  if (nesting_depth(text) > kMaxDepth)
    throw InputError(fmt::format("{}: JSON nests deeper than {} levels; refused (a hostile or broken document)", what,
                                 kMaxDepth));
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1E444
    throw InputError(valid_utf8(
        fmt::format("{}: malformed or truncated JSON ({} bytes): {}", what, text.size(), e.what())));
  }
}

void check_arguments(std::string_view arguments, std::string_view tool, std::string_view what) {
  if (nesting_depth(arguments) > kMaxDepth)
    throw InputError(fmt::format("{}: the arguments of tool call '{}' nest deeper than {} levels; refused", what,
                                 valid_utf8(tool), kMaxDepth));
}

const json& require(const json& object, const char* field, std::string_view what) {
  if (!object.is_object()) throw InputError(fmt::format("{}: expected a JSON object around field '{}'", what, field));
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) throw InputError(fmt::format("{}: field '{}' missing", what, field));
  return *it;
}

std::string require_string(const json& object, const char* field, std::string_view what) {
  const json& value = require(object, field, what);
  if (!value.is_string()) throw InputError(fmt::format("{}: field '{}' must be a string", what, field));
  return value.get<std::string>();
}

std::optional<std::string> optional_string(const json& object, const char* field, std::string_view what) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) throw InputError(fmt::format("{}: field '{}' must be a string", what, field));
  return it->get<std::string>();
}

std::optional<std::int64_t> optional_count(const json& object, const char* field, std::string_view what) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::nullopt;
  // An unsigned value above INT64_MAX reads back negative, so one check covers both ends.
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > kMaxTokenCount)
    throw InputError(fmt::format("{}: field '{}' must be an integer from 0 to {}, got {}", what, field,
                                 kMaxTokenCount, json_text(*it).substr(0, 40)));
  return it->get<std::int64_t>();
}

std::string error_message(std::string_view body) {
  if (nesting_depth(body) > kMaxDepth) return {};
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return {};
  auto it = doc.find("error");
  if (it == doc.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("message") && (*it)["message"].is_string())
    return (*it)["message"].get<std::string>();
  return json_text(*it);
}

std::string valid_utf8(std::string_view text) {
  constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  std::size_t copied = 0;  // text[0, copied) is in `out` already
  for (std::size_t i = 0; i < text.size();) {
    utf8proc_int32_t cp = 0;
    auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + i),
                              static_cast<utf8proc_ssize_t>(text.size() - i), &cp);
    if (n > 0) {
      i += static_cast<std::size_t>(n);
      continue;
    }
    out.append(text.substr(copied, i - copied)).append(replacement);
    copied = ++i;
  }
  if (copied == 0) return std::string(text);
  return out.append(text.substr(copied));
}

}  // namespace okfbench::agents::json_util
