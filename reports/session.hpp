#pragma once
// The session log of `okfbench mcp` and what `okfbench report SESSION_LOG`
// and `okfbench compare BASE CAND` make of it.
//
// A session log is JSONL, one event a line, appended as the server answers:
//   {"event":"session", "session", "time", "protocol_version", "client", "surface", "bundles":[..], "tools":[..]}
//       once per session, when initialize is answered
//   {"event":"tool_list", "session", "time", "tools": N, "bytes", "tokens":{"o200k_base","cl100k_base"}}
//       once per session, the first time the client lists the tools: the
//       tokens of the tool definitions a client hands its model with every turn
//   {"event":"call", "session", "time", "seq", "method":"tools/call"|"resources/read", "tool", "arguments":{..},
//    "bytes", "tokens":{..}, "error", "access":{"kind","bundle","concepts":[..]}}
//       every tool call and resource read: the result's bytes and exact
//       tokens, the error ("" when none) and the knowledge-access event
//   {"event":"error", "session", "time", "method", "code", "message"}
//       every JSON-RPC error the server answered with
// Access kinds: "read" (the concepts' bodies reached the client), "list"
// (only their metadata did), "history" (change-log entries), "write"
// (remember saved them).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace okfbench::reports {

struct SessionTokens {
  std::int64_t o200k_base = 0;
  std::int64_t cl100k_base = 0;
  bool operator==(const SessionTokens&) const = default;
};

struct SessionAccess {
  std::string kind;  // read, list, history, write; "" when the call touched no concept
  std::string bundle;  // "*" for a search over several bundles at once, whose concepts are then BUNDLE:ID
  std::vector<std::string> concepts;  // canonical ids
  bool operator==(const SessionAccess&) const = default;
};

// One line of the log; which fields are set depends on `event` (above).
struct SessionEvent {
  std::string event;  // session, tool_list, call, error
  std::string session;
  std::string time;  // ISO-8601 UTC
  // session
  std::string protocol_version;
  std::string client;  // "name version" from clientInfo
  std::string surface;
  std::vector<std::string> bundles;
  std::vector<std::string> tools;
  // tool_list and call
  std::int64_t bytes = 0;
  SessionTokens tokens;
  std::int64_t tool_count = 0;  // tool_list: definitions listed
  // call
  std::int64_t seq = 0;
  std::string method;
  std::string tool;       // tools/call: the tool; resources/read: the URI
  std::string arguments;  // compact JSON object text
  std::string error;
  SessionAccess access;
  // error
  std::int64_t code = 0;
  std::string message;
  bool operator==(const SessionEvent&) const = default;
};

std::string to_jsonl_line(const SessionEvent& event);
// Throws InputError naming `where` (file:line) and the field when the line
// is not a session event.
SessionEvent session_event_from_json_text(std::string_view text, std::string_view where);
// Every event of a log; InputError naming the file and line of a bad one.
std::vector<SessionEvent> read_session_log(const std::filesystem::path& path);

struct ToolTotals {
  std::int64_t calls = 0;
  std::int64_t errors = 0;
  std::int64_t bytes = 0;
  SessionTokens tokens;
};

struct ConceptReads {
  std::string concept_id;  // "bundle:id" when the log spans more than one bundle
  std::int64_t reads = 0;
  SessionTokens tokens;  // of the reads' results
};

struct RepeatedCall {
  std::string tool;
  std::string arguments;
  std::int64_t calls = 0;
  SessionTokens tokens;  // of the calls after the first: what repeating cost
};

struct SessionSummary {
  std::int64_t sessions = 0;
  std::vector<std::string> clients;  // distinct, in first-seen order
  std::int64_t calls = 0;
  std::int64_t errors = 0;           // calls whose result was an error
  std::int64_t protocol_errors = 0;  // JSON-RPC errors answered
  std::int64_t bytes = 0;
  SessionTokens tokens;          // all call results
  SessionTokens schema_tokens;   // tool lists, once per session
  std::map<std::string, ToolTotals> by_tool;
  std::vector<ConceptReads> concepts_read;  // first-read order
  std::int64_t concepts_listed = 0;         // distinct concepts only whose metadata reached the client
  std::vector<RepeatedCall> repeated;       // most calls first
};

SessionSummary summarize_session(const std::vector<SessionEvent>& events);
// A Markdown report: totals, calls and tokens by tool, concepts read,
// repeated calls, schema overhead.
std::string session_markdown(const SessionSummary& summary, std::string_view title);
// Two sessions side by side with the candidate's change, by tool and in total.
std::string session_compare_markdown(const SessionSummary& base, const SessionSummary& candidate,
                                     std::string_view base_name, std::string_view candidate_name);

}  // namespace okfbench::reports
