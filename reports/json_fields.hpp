#pragma once
// Field readers for the reports' from_json functions: a missing or null
// optional field keeps its default; a field of the wrong type is an
// InputError naming the field.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "retrieval/error.hpp"

namespace okfbench::reports::json_fields {

template <typename T>
void read(const nlohmann::json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    out = it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format("field '{}' has type {}, which does not fit", key, it->type_name()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("in '{}': {}", key, e.what()));
  }
}

template <typename T>
void read(const nlohmann::json& j, const char* key, std::optional<T>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    out.reset();
    return;
  }
  T value{};
  read(j, key, value);
  out = value;
}

template <typename T>
void read_required(const nlohmann::json& j, const char* key, T& out) {
  if (!j.contains(key) || j.at(key).is_null()) throw InputError(fmt::format("field '{}' is missing", key));
  read(j, key, out);
}

template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

inline void require_object(const nlohmann::json& j, const char* what) {
  if (!j.is_object()) throw InputError(fmt::format("{} must be a JSON object, not {}", what, j.type_name()));
}

}  // namespace okfbench::reports::json_fields
