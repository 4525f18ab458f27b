#include "agents/json_util.hpp"

#include <fmt/format.h>

namespace okfbench::agents::json_util {

json parse(std::string_view text, std::string_view what) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(fmt::format("{}: malformed or truncated JSON ({} bytes): {}", what, text.size(), e.what()));
  }
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
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0)
    throw InputError(fmt::format("{}: field '{}' must be a non-negative integer", what, field));
  return it->get<std::int64_t>();
}

std::string error_message(std::string_view body) {
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return {};
  auto it = doc.find("error");
  if (it == doc.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("message") && (*it)["message"].is_string())
    return (*it)["message"].get<std::string>();
  return it->dump();
}

}  // namespace okfbench::agents::json_util
