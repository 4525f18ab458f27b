// A recorded exchange (agents/wire_json.hpp), as cassettes and the response
// cache store requests and replies, and a whole cassette file as `replay:`
// models read it (agents/decorators.hpp).
//
// Invariants: a bad record or cassette is an InputError, nothing else; a
// record that reads is written back to the same value (reply_checks.hpp).
#include <cstddef>
#include <cstdint>
#include <fstream>

#include "agents/decorators.hpp"
#include "core/error.hpp"
#include "tests/fuzz/reply_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace okfbench;
  const std::string_view text = fuzz::as_text(data, size);
  try {
    const agents::ChatResponse response = agents::wire_json::response_from_json(text);
    fuzz::check(agents::wire_json::response_from_json(agents::wire_json::response_to_json(response)) == response,
                "a recorded reply reads back different");
  } catch (const InputError&) {
  }
  try {
    fuzz::check_request(agents::wire_json::request_from_json(text));
  } catch (const InputError&) {
  }
  const std::filesystem::path cassette = fuzz::scratch_dir() / "cassette.jsonl";
  std::ofstream(cassette, std::ios::binary | std::ios::trunc).write(text.data(), static_cast<std::streamsize>(text.size()));
  try {
    agents::ReplayModel replay(cassette);
    fuzz::check(replay.size() <= text.size(), "a cassette with more records than bytes");
  } catch (const InputError&) {
  }
  return 0;
}
