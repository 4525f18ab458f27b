// A body from an OpenAI-compatible endpoint (agents/openai_json.hpp): a
// chat completion as the client reads it, an error body, and the same bytes
// as a request body as the mock server reads it.
//
// Invariants: a bad body is an InputError, nothing else (error_message()
// never throws); what parses survives the cassette encoding unchanged
// (reply_checks.hpp).
#include <cstddef>
#include <cstdint>

#include "agents/openai_json.hpp"
#include "retrieval/error.hpp"
#include "tests/fuzz/reply_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace okfbench;
  const std::string_view body = fuzz::as_text(data, size);
  (void)agents::openai::error_message(body);
  try {
    fuzz::check_reply(agents::openai::response_from_json(body));
  } catch (const InputError&) {
  }
  try {
    const agents::ChatRequest request = agents::openai::request_from_json(body);
    fuzz::check_request(request);
    (void)agents::openai::request_to_json(request);
  } catch (const InputError&) {
  }
  return 0;
}
