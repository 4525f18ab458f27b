#pragma once
// Serialising JSON that may hold text from outside (provider replies, tool
// results, question ids, file names, error messages). nlohmann's dump() throws
// type_error 316 on a string that is not valid UTF-8, and a throw while a
// record is being written used to abort the whole run; json_text() replaces
// each invalid byte by U+FFFD instead. Every dump of such data goes through
// it. Header-only so that every library shares it
// without a link dependency.
#include <nlohmann/json.hpp>
#include <string>

namespace okfbench {

// indent < 0: compact, one line; otherwise pretty-printed with that many spaces.
inline std::string json_text(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

inline std::string json_text(const nlohmann::ordered_json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace okfbench
