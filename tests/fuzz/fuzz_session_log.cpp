// A session log of `okfbench mcp` (reports/session.hpp) as `okfbench report
// SESSION_LOG` and `compare` read it: each line as an event, the whole input
// as a log file, then its summary and both Markdown reports.
//
// Invariants: a bad line or log is an InputError, nothing else; an event
// that reads is written back to the same event; the summary's counts are
// never negative and no more calls are counted than events were read.
#include <cstddef>
#include <cstdint>
#include <fstream>

#include "core/error.hpp"
#include "reports/session.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace okfbench;
  const std::string_view text = fuzz::as_text(data, size);
  const std::string_view first = text.substr(0, std::min(text.find('\n'), text.size()));
  try {
    const reports::SessionEvent event = reports::session_event_from_json_text(first, "fuzz:1");
    const std::string line = reports::to_jsonl_line(event);
    fuzz::check(reports::session_event_from_json_text(line, "again:1") == event, "an event reads back different");
  } catch (const InputError&) {
  }
  const std::filesystem::path log = fuzz::scratch_dir() / "session.jsonl";
  std::ofstream(log, std::ios::binary | std::ios::trunc).write(text.data(), static_cast<std::streamsize>(text.size()));
  try {
    const std::vector<reports::SessionEvent> events = reports::read_session_log(log);
    const reports::SessionSummary summary = reports::summarize_session(events);
    fuzz::check(summary.calls >= 0 && summary.errors >= 0 && summary.sessions >= 0, "a negative count");
    fuzz::check(static_cast<std::size_t>(summary.calls) <= events.size(), "more calls than events");
    (void)reports::session_markdown(summary, "fuzz");
    (void)reports::session_compare_markdown(summary, summary, "a", "b");
  } catch (const InputError&) {
  }
  return 0;
}
