#pragma once
// The data of the explorer in report.html: one row per trial for the trial
// table, and each trial's whole record (turns with their token split and
// attribution, tool calls, answer, grades, timings) and, when the run kept
// it, its whole conversation from transcripts.jsonl.zst (every message the
// requests added, each reply, each tool call's full result text) for its
// conversation view, compressed.
//
// Trials are in table order: concept count, bundle, question set, path kind
// (context first), label, question id, repeat, trial key. Row i of the table
// is entry i of the details.
//
// The details are cut into chunks of kExplorerChunkTrials trials; each chunk
// is the JSON array of its trials' details, zlib-compressed (RFC 1950, what
// the browser's DecompressionStream('deflate') reads) and base64-encoded, so
// the page decodes only the chunk of a trial someone opens. The system
// prompts and tool definitions the transcripts name are stored once, in
// their own compressed element, by hash.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "reports/pricing.hpp"
#include "reports/record.hpp"
#include "reports/transcript.hpp"

namespace okfbench::reports {

inline constexpr std::size_t kExplorerChunkTrials = 64;

struct ExplorerData {
  // {"configs": [{"name", "label", "kind"}], "chunk_trials": N, "transcripts": true when
  //  the run's transcripts were read, "columns": [...], "rows": [[...] per trial, values in column order]}
  std::string table_json;
  std::vector<std::string> detail_chunks;  // base64 of zlib(JSON array of details)
  std::string prompts;                     // base64 of zlib({HASH: {"system", "tools": [{"name", "description", "parameters"}]}})
};

// `names` maps each label to its short name (short_config_names).
// `transcripts` is null when the run folder has no transcripts file.
ExplorerData explorer_data(const std::vector<TrialRecord>& records, const TranscriptSet* transcripts, const PricingTable& pricing,
                           const std::map<std::string, std::string>& names);

// The explorer's row columns, in order: bundle, concepts, question_set,
// question, path, config (index into configs), repeat, turns, input_tokens,
// output_tokens, cost, facts (the facts grade: correct, partial, wrong,
// not graded, or "" when there is none), error, answer (its first 160
// characters, for search).
const std::vector<std::string>& explorer_columns();

// One trial's details as the conversation view reads them (exposed for tests).
// "transcript" says whether the conversation is there: "kept", "not_kept"
// (the run has transcripts, not this trial's: --transcripts errors keeps only
// failed trials') or "none" (`transcripts` is null). When kept, "prompts" lists
// the prompt hashes of its turns in order, each turn has "sent" (the messages
// its request added, without the tool results, which are shown with their
// calls), "restart", "reply" (the reply's text, null for a turn without a
// transcript turn), "ms" (the time the call took) and each tool call its
// "result" text; "failed_call" is the
// error of a last call that did not answer ("" otherwise).
nlohmann::json explorer_details(const TrialRecord& record, const TranscriptSet* transcripts, const PricingTable& pricing);

// zlib-compresses `text` (RFC 1950) and returns it base64-encoded (exposed for tests).
std::string deflate_base64(const std::string& text);

}  // namespace okfbench::reports
