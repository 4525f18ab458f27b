#pragma once
// What a parsed provider reply must survive, shared by fuzz_openai and
// fuzz_anthropic: the cassette and response-cache encoding
// (agents/wire_json.hpp) stores it and gives back exactly the same value.
#include <string>

#include "agents/wire_json.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace okfbench::fuzz {

inline void check_reply(const agents::ChatResponse& response) {
  check(response.message.role == agents::Role::assistant, "a reply that is not the assistant's");
  for (const auto& count : {response.usage.input_tokens, response.usage.cached_input_tokens,
                            response.usage.cache_write_tokens, response.usage.output_tokens})
    check(!count || *count >= 0, "a negative token count");
  const std::string stored = agents::wire_json::response_to_json(response);
  check(agents::wire_json::response_from_json(stored) == response, "a stored reply reads back different");
}

inline void check_request(const agents::ChatRequest& request) {
  check(request.max_tokens >= 0, "a negative max_tokens");
  const std::string stored = agents::wire_json::request_to_json(request);
  check(agents::wire_json::request_from_json(stored) == request, "a stored request reads back different");
}

}  // namespace okfbench::fuzz
