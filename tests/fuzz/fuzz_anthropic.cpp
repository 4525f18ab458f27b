// A body from an Anthropic Messages endpoint (agents/anthropic_json.hpp): a
// message as the client reads it, an error body, and the same bytes as a
// request body as the mock server reads it.
//
// Invariants: a bad body is an InputError, nothing else (error_message()
// never throws); what parses survives the cassette encoding unchanged
// (reply_checks.hpp).
#include <cstddef>
#include <cstdint>

#include "agents/anthropic_json.hpp"
#include "retrieval/error.hpp"
#include "tests/fuzz/reply_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace okfbench;
  const std::string_view body = fuzz::as_text(data, size);
  (void)agents::anthropic::error_message(body);
  try {
    fuzz::check_reply(agents::anthropic::response_from_json(body));
  } catch (const InputError&) {
  }
  try {
    const agents::ChatRequest request = agents::anthropic::request_from_json(body);
    fuzz::check_request(request);
    (void)agents::anthropic::request_to_json(request);
  } catch (const InputError&) {
  }
  return 0;
}
