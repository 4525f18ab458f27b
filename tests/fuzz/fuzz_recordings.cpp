// A cassette as `okfbench calibrate` reads recordings (engine/calibrate.hpp),
// then what calibration observes of each conversation.
//
// Invariants: a bad recording is an InputError, nothing else; every call
// read has input tokens (read_recordings refuses one without); no more
// exchanges are read than the file has lines.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>

#include "core/error.hpp"
#include "engine/calibrate.hpp"
#include "retrieval/tokens.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace okfbench;
  const std::string_view text = fuzz::as_text(data, size);
  const std::filesystem::path cassette = fuzz::scratch_dir() / "cassette.jsonl";
  std::ofstream(cassette, std::ios::binary | std::ios::trunc).write(text.data(), static_cast<std::streamsize>(text.size()));
  try {
    const engine::Recordings r = engine::read_recordings({cassette});
    const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    fuzz::check(r.samples.size() <= lines, "more exchanges than lines");
    for (const auto& s : r.samples) fuzz::check(s.usage.input_tokens.has_value(), "a call read without input tokens");
    static const retrieval::HeuristicCounter counter;
    for (const auto& c : r.conversations) (void)engine::observe(c.question, c.tools, c.after_question, counter);
  } catch (const InputError&) {
  }
  return 0;
}
