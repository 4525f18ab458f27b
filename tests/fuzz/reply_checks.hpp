#pragma once
// What a parsed provider reply must survive, shared by fuzz_openai and
// fuzz_anthropic: the cassette and response-cache encoding
// (agents/wire_json.hpp) stores it and gives back exactly the same value.
#include <string>
#include <string_view>

#include "agents/wire_json.hpp"
#include "core/error.hpp"
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

// One wire format's functions, so both provider targets run the same steps.
struct WireFormat {
  std::string (*error_message)(std::string_view body);
  agents::ChatResponse (*response_from_json)(std::string_view body);
  agents::ChatRequest (*request_from_json)(std::string_view body);
  std::string (*request_to_json)(const agents::ChatRequest& request);
};

// The body as an error body, as a reply, and as a request: a bad body is an
// InputError, nothing else, and what parses passes the checks above.
inline void check_body(std::string_view body, const WireFormat& wire) {
  (void)wire.error_message(body);
  try {
    check_reply(wire.response_from_json(body));
  } catch (const InputError&) {
  }
  try {
    const agents::ChatRequest request = wire.request_from_json(body);
    check_request(request);
    (void)wire.request_to_json(request);
  } catch (const InputError&) {
  }
}

}  // namespace okfbench::fuzz
