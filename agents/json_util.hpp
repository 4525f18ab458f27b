#pragma once
// Internal helpers for the JSON edge files: parsing that turns every problem
// into an InputError naming what was being read and which field failed.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "retrieval/error.hpp"

namespace okfbench::agents::json_util {

using nlohmann::json;

// Parses `text`; `what` names the document in the error ("OpenAI response").
json parse(std::string_view text, std::string_view what);

// Field access with clear errors: "<what>: field 'choices' missing".
const json& require(const json& object, const char* field, std::string_view what);
std::string require_string(const json& object, const char* field, std::string_view what);
// Optional fields: absent or null -> nullopt; wrong type -> InputError.
std::optional<std::string> optional_string(const json& object, const char* field, std::string_view what);
std::optional<std::int64_t> optional_count(const json& object, const char* field, std::string_view what);

// The error text of {"error": {"message": ...}} or {"error": "..."}; "" otherwise.
std::string error_message(std::string_view body);

}  // namespace okfbench::agents::json_util
