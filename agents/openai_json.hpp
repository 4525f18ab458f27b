#pragma once
// OpenAI Chat Completions JSON <-> wire types.
//
// Usage normalisation (https://platform.openai.com/docs/api-reference/chat/object):
// `prompt_tokens` already includes `prompt_tokens_details.cached_tokens`, so
// input_tokens = prompt_tokens and cached_input_tokens = cached_tokens. OpenAI
// does not report cache writes, so cache_write_tokens stays unknown. A field the
// response leaves out is std::nullopt, never 0.
//
// Parsing functions throw InputError naming the field that is missing or has
// the wrong type, and the byte offset for malformed JSON.
#include <string>
#include <string_view>

#include "agents/wire.hpp"

namespace okfbench::agents::openai {

// Body of POST {base}/chat/completions.
std::string request_to_json(const ChatRequest& request);
// Parses a request body (the mock server's side).
ChatRequest request_from_json(std::string_view body);

// A chat.completion object; `id` is the completion id to put in it.
std::string response_to_json(const ChatResponse& response, std::string_view id);
ChatResponse response_from_json(std::string_view body);

// The `tools` array alone, compact; what schema-token accounting counts.
std::string tools_to_json(const std::vector<ToolSpec>& tools);

// The error message in an {"error": {"message": ...}} body, or "" if none.
std::string error_message(std::string_view body);

}  // namespace okfbench::agents::openai
