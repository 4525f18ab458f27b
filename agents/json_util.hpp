#pragma once
// Internal helpers for the JSON edge files: parsing that turns every problem
// into an InputError naming what was being read and which field failed, with
// the limits every document from outside (provider replies, cassettes, the
// response cache, tool-call arguments) is held to.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace okfbench::agents::json_util {

using nlohmann::json;

// Deepest nesting of arrays and objects accepted. Real replies and tool
// arguments nest a handful of levels; without a limit a hostile reply nesting
// 100,000 levels overflows the stack of every recursive JSON operation.
inline constexpr std::size_t kMaxDepth = 128;

// Largest token count a provider may report for one call. The longest context
// windows are a few million tokens; a count beyond this is a broken reply, and
// bounding it keeps every sum of counts far from overflowing.
inline constexpr std::int64_t kMaxTokenCount = 1'000'000'000;

// The nesting depth of JSON text (brackets outside strings), counting no
// further than limit + 1. Works on any text; nothing is parsed.
std::size_t nesting_depth(std::string_view text, std::size_t limit = kMaxDepth);

// Parses `text`; `what` names the document in the error ("OpenAI response").
// Malformed JSON and nesting deeper than kMaxDepth are InputErrors.
json parse(std::string_view text, std::string_view what);

// Throws InputError when a tool call's arguments nest deeper than kMaxDepth.
// Arguments that are not JSON at all pass: the tool reports that to the model.
void check_arguments(std::string_view arguments, std::string_view tool, std::string_view what);

// Field access with clear errors: "<what>: field 'choices' missing".
const json& require(const json& object, const char* field, std::string_view what);
std::string require_string(const json& object, const char* field, std::string_view what);
// Optional fields: absent or null -> nullopt; wrong type -> InputError.
std::optional<std::string> optional_string(const json& object, const char* field, std::string_view what);
// A token count: absent or null -> nullopt; not an integer in [0, kMaxTokenCount] -> InputError.
std::optional<std::int64_t> optional_count(const json& object, const char* field, std::string_view what);

// The error text of {"error": {"message": ...}} or {"error": "..."}; "" otherwise.
std::string error_message(std::string_view body);

// `text` with every byte that does not belong to a well-formed UTF-8 sequence
// replaced by U+FFFD (text that is already valid comes back unchanged).
std::string valid_utf8(std::string_view text);

}  // namespace okfbench::agents::json_util
