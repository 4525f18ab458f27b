#pragma once
// One trial as `okfbench show` prints it: each turn with its tokens (new,
// re-sent, cached, output) and its attribution, each tool call with its
// result, the answer and its grades; or the same as JSON for scripts.
#include <cstddef>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "reports/record.hpp"
#include "reports/transcript.hpp"

namespace okfbench::reports {

struct ShowOptions {
  std::size_t width = 100;  // tool results and long lines are cut to this many columns
  bool full = false;        // print tool results and messages whole
};

// The text view. `transcript` may be null (a run without transcripts): the
// turns then show their tokens and tool calls without texts.
std::string show_text(const TrialRecord& record, const Transcript* transcript, const TranscriptSet& prompts,
                      const ShowOptions& options);

// {"record": ..., "transcript": ... or null, "prompts": {HASH: ...}, "turns": [per-turn
// new, resent, cached, output, attribution]}
nlohmann::json show_json(const TrialRecord& record, const Transcript* transcript, const TranscriptSet& prompts);

}  // namespace okfbench::reports
