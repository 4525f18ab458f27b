#pragma once
// Field readers for the reports' from_json functions: a missing or null
// optional field keeps its default; a field of the wrong type is an
// InputError naming the field.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <cstdint>
#include <optional>

#include "core/error.hpp"

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

// The largest count a record may hold (tokens, bytes, calls): far above any
// real run, and far below where sums of counts could overflow an int64.
inline constexpr std::int64_t kMaxCount = 1'000'000'000'000;

// Reads a count (tokens, bytes, calls) and refuses one below 0 or above
// kMaxCount, so a damaged record never turns into a negative cost.
template <typename T>
void read_count(const nlohmann::json& j, const char* key, T& out) {
  read(j, key, out);
  const std::optional<std::int64_t> value{out};
  if (value && (*value < 0 || *value > kMaxCount)) {
    throw InputError(fmt::format("field '{}' is {}; expected a count from 0 to 10^12", key, *value));
  }
}

template <typename T>
void read_required_count(const nlohmann::json& j, const char* key, T& out) {
  if (!j.contains(key) || j.at(key).is_null()) throw InputError(fmt::format("field '{}' is missing", key));
  read_count(j, key, out);
}

template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

inline void require_object(const nlohmann::json& j, const char* what) {
  if (!j.is_object()) throw InputError(fmt::format("{} must be a JSON object, not {}", what, j.type_name()));
}

}  // namespace okfbench::reports::json_fields
