#pragma once
// Transcripts: every trial's whole conversation, stored beside its record in
// RUN_DIR/transcripts.jsonl.zst (the format is in reports/docs/transcripts.md,
// "Transcripts"). The runner appends one trial at a time as trials finish;
// `okfbench show` and the explorer read them.
//
// The file is a sequence of zstd frames (libzstd), each holding whole JSON
// lines: a trial's line, preceded by the prompt lines it names that no earlier
// frame held. A frame is written with one write() on an O_APPEND descriptor,
// so a kill leaves at most a torn last frame, which open() cuts off.
//
// Storage grows with the conversation, not with its square: the system
// prompt and the tool definitions are stored once per content hash, and each
// turn stores only the messages added since the previous request.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace okfbench::reports {

inline constexpr int kTranscriptVersion = 1;
inline constexpr const char* kTranscriptsFile = "transcripts.jsonl.zst";

struct TranscriptToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text as the model wrote it
  bool operator==(const TranscriptToolCall&) const = default;
};

struct TranscriptMessage {
  std::string role;     // "user", "assistant" or "tool"
  std::string content;  // text; a tool message's is the tool result as the model read it
  std::vector<TranscriptToolCall> tool_calls;  // assistant
  std::string tool_call_id;                    // tool: the call it answers
  std::string name;                            // tool: the tool that answered
  bool operator==(const TranscriptMessage&) const = default;
};

struct TranscriptTool {
  std::string name;
  std::string description;
  std::string parameters;  // JSON Schema text
  bool operator==(const TranscriptTool&) const = default;
};

// What every request of a configuration starts with, stored once.
struct TranscriptPrompt {
  std::string hash;    // SHA-256 (hex) of the system prompt and the tools
  std::string system;  // the system prompt ("" when the request had none)
  std::vector<TranscriptTool> tools;
  bool operator==(const TranscriptPrompt&) const = default;
};

// One model call.
struct TranscriptTurn {
  std::string prompt_hash;  // the TranscriptPrompt this request started with
  // The messages this request added after the previous request and its reply
  // (the first request: every message after the system prompt). When a request
  // did not extend the previous one, `restart` is set and `added` holds all
  // of its messages after the system prompt.
  std::vector<TranscriptMessage> added;
  bool restart = false;
  std::optional<TranscriptMessage> reply;  // the model's answer; none when the call failed
  std::string stop;                        // end_turn, tool_calls, max_tokens or other
  std::string error;                       // the call's failure ("" when it answered)
  std::optional<std::int64_t> input_tokens;  // as reported, cached included
  std::optional<std::int64_t> cached_tokens;
  std::optional<std::int64_t> cache_write_tokens;
  std::optional<std::int64_t> output_tokens;
  double ms = 0;  // time the call took
  bool operator==(const TranscriptTurn&) const = default;
};

struct Transcript {
  int version = kTranscriptVersion;
  std::string trial_key;
  std::vector<TranscriptTurn> turns;
  // Tool results of the last turn that no request carried (the agent ran out of turns).
  std::vector<TranscriptMessage> unsent;
  std::string answer;
  std::string error;
  bool operator==(const Transcript&) const = default;
};

void to_json(nlohmann::json& j, const TranscriptToolCall& v);
void from_json(const nlohmann::json& j, TranscriptToolCall& v);
void to_json(nlohmann::json& j, const TranscriptMessage& v);
void from_json(const nlohmann::json& j, TranscriptMessage& v);
void to_json(nlohmann::json& j, const TranscriptTool& v);
void from_json(const nlohmann::json& j, TranscriptTool& v);
void to_json(nlohmann::json& j, const TranscriptPrompt& v);
void from_json(const nlohmann::json& j, TranscriptPrompt& v);
void to_json(nlohmann::json& j, const TranscriptTurn& v);
void from_json(const nlohmann::json& j, TranscriptTurn& v);
void to_json(nlohmann::json& j, const Transcript& v);
void from_json(const nlohmann::json& j, Transcript& v);

// How a transcript lines up with its record, for the views that show both
// (`okfbench show`, the explorer). A record has one turn per model call that
// answered, so record turn i is the i-th transcript turn with a reply.
std::vector<const TranscriptTurn*> answered_turns(const Transcript& transcript);

// Every tool result the transcript holds (in any turn's `added`, or `unsent`),
// by the id of the call it answers.
std::map<std::string, const TranscriptMessage*> tool_results_by_call(const Transcript& transcript);

// Everything a transcripts file holds: the prompts by hash and one transcript
// per trial key (a key written twice, by a trial run again, keeps the last).
struct TranscriptSet {
  std::map<std::string, TranscriptPrompt> prompts;
  std::vector<Transcript> trials;  // in file order
  std::size_t prompt_lines = 0;    // prompt lines in the file (each hash is written once per file)
  std::size_t trial_lines = 0;     // trial lines in the file (more than trials when a key was written again)
  const Transcript* find(std::string_view trial_key) const;
  const TranscriptPrompt* prompt(std::string_view hash) const;
};

// Reads a transcripts file. A torn last frame (a killed writer) is ignored;
// anything else unreadable is an InputError naming the file and the byte
// offset of the frame or the line within it.
TranscriptSet read_transcripts(const std::filesystem::path& path);

// RUN_DIR/transcripts.jsonl.zst read as above, or nothing when the run folder
// has none (a run made with --transcripts none, or before transcripts).
std::optional<TranscriptSet> read_run_transcripts(const std::filesystem::path& run_dir);

// Appends transcripts to RUN_DIR/transcripts.jsonl.zst; thread-safe.
class TranscriptWriter {
 public:
  // Opens (or creates) the file of `run_dir` for a run whose store holds
  // `stored` trial keys. A torn last frame, transcripts of trials the store
  // does not hold (written just before a kill, so the trial runs again) and
  // all but the last transcript of a key are dropped by rewriting the file
  // (a temporary file renamed over it). Throws InputError when it cannot.
  static std::unique_ptr<TranscriptWriter> open(const std::filesystem::path& run_dir, const std::set<std::string>& stored);
  ~TranscriptWriter();
  TranscriptWriter(const TranscriptWriter&) = delete;
  TranscriptWriter& operator=(const TranscriptWriter&) = delete;

  // Writes the trial, with those of `prompts` not written before, as one
  // frame. A trial written again (a re-run) supersedes the earlier one for
  // readers, and the next open() drops the earlier one. Throws InputError when
  // the write fails.
  void add(const Transcript& transcript, const std::vector<TranscriptPrompt>& prompts);

 private:
  TranscriptWriter(std::filesystem::path path, int fd, std::set<std::string> written);
  std::filesystem::path path_;
  int fd_ = -1;
  std::mutex mutex_;
  std::set<std::string> written_prompts_;
};

}  // namespace okfbench::reports
