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
#include "tests/fuzz/reply_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace okfbench::agents::openai;
  okfbench::fuzz::check_body(okfbench::fuzz::as_text(data, size),
                             {error_message, response_from_json, request_from_json, request_to_json});
  return 0;
}
