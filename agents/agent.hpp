#pragma once
// run_agent: the plain tool-calling loop of the seeds (grafito run_agent,
// harnessx Agent) with exact per-turn accounting.
//
//   for turn in 1..max_turns:
//     response = model.chat(system + history + question + everything so far, tool specs)
//     no tool calls  -> the content is the answer; stop
//     otherwise run each call in order, append each result as a role=tool message
//
// A turn is one model call. Tools requested on the last allowed turn still run
// (their results are recorded) but the model never sees them.
//
// Limits: at most max_tool_calls_per_turn (64) calls of one reply run; the
// rest are dropped from the conversation, counted in AgentTurn, and a note
// appended to the last result of the turn tells the model. A tool that throws becomes an
// {"error": ...} result, and a model call that throws ends the run with
// stop = model_error, so the accounting of the turns before is never lost.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/call_error.hpp"
#include "agents/model.hpp"
#include "agents/toolbox.hpp"
#include "agents/wire.hpp"
#include "retrieval/token_counter.hpp"

namespace okfbench::agents {

// What the loop logs per call and per turn. These are the loop's own log; the
// trial record (reports/record.hpp TrialRecord, TurnRecord, ToolCallRecord)
// is the one trial model, filled from them in one place by the harness.
struct AgentToolCall {
  int turn = 0;                // 1-based model call that asked for it
  std::string name;
  std::string arguments;       // as the model wrote them
  std::size_t result_bytes = 0;  // bytes of the result sent back to the model
  std::string error;           // "" when the call succeeded
  bool repeated = false;       // same tool and same arguments (as JSON) as an earlier call in this run
  std::optional<KnowledgeAccess> access;  // Toolbox::access of an offered tool's call
  bool operator==(const AgentToolCall&) const = default;
};

struct AgentTurn {
  int turn = 0;
  Usage usage;  // as the model reported it for this call (unknown stays unknown)
  std::size_t tool_calls = 0;          // calls run
  std::size_t dropped_tool_calls = 0;  // calls asked for beyond max_tool_calls_per_turn, not run
  bool operator==(const AgentTurn&) const = default;
};

enum class AgentStop { answered, max_turns, model_error };

inline constexpr std::size_t kDefaultMaxToolCallsPerTurn = 64;

struct AgentOptions {
  int max_turns = 12;
  std::size_t max_tool_calls_per_turn = kDefaultMaxToolCallsPerTurn;  // at least 1
  // An earlier conversation to continue (what AgentRun::messages returned);
  // its system message, if any, is kept and system_prompt is ignored.
  std::vector<Message> history;
  std::optional<std::string> system_prompt;  // nullopt: the toolbox's default
  int max_tokens = 1024;
  std::optional<double> temperature = 0.0;
  CacheBreakpoints breakpoints = CacheBreakpoints::none;
  // Counts schema tokens (the tool definitions as OpenAI JSON); nullptr leaves them unknown.
  const retrieval::TokenCounter* counter = nullptr;
  // Called after each tool call runs, with its result (for --verbose output).
  std::function<void(const AgentToolCall&, std::string_view result)> on_tool_call;
};

struct AgentRun {
  std::string answer;          // the final assistant content ("" unless stop == answered)
  AgentStop stop = AgentStop::answered;
  std::string error;           // the model failure when stop == model_error
  Failure failure = Failure::permanent;  // whether that failure may pass (stop == model_error only)
  std::vector<AgentTurn> turns;
  std::vector<AgentToolCall> tool_calls;
  std::vector<Message> messages;  // the whole conversation, to pass back as history
  std::vector<ToolSpec> tools;    // what was offered
  std::optional<std::int64_t> schema_tokens_per_call;  // tokens of `tools`; nullopt without a counter
};

AgentRun run_agent(ChatModel& model, Toolbox& tools, std::string_view question, const AgentOptions& options = {});

// The breakdown of the seed's run.summary(). Every token figure is unknown
// (nullopt) when any turn it depends on was not reported; sums saturate at
// INT64_MAX (core/saturate.hpp) instead of wrapping.
struct RunSummary {
  std::size_t turns = 0;           // model calls
  std::size_t tool_calls = 0;
  std::size_t errors = 0;          // tool calls that returned an error
  std::size_t repeated_calls = 0;
  std::size_t dropped_tool_calls = 0;  // asked for beyond the per-turn cap, not run
  std::size_t result_bytes = 0;    // all tool output added to the conversation
  std::map<std::string, std::size_t> bytes_by_tool;
  std::map<std::string, std::size_t> calls_by_tool;
  // New and re-sent input per turn are trial metrics (reports/trial_metrics.hpp),
  // defined once there over the trial record the harness makes of a run.
  std::vector<std::optional<std::int64_t>> input_per_turn;
  // Tool definitions are re-sent every call: schema_tokens_per_call x turns.
  std::optional<std::int64_t> schema_tokens;
  Usage usage;  // totals over turns
};

RunSummary summary(const AgentRun& run);

// "[4 turn(s), 3 tool call(s), 6120 tool byte(s), 21400 in (14200 cached) / 512 out]";
// an unknown count prints as "?".
std::string summary_line(const AgentRun& run);

const char* to_string(AgentStop stop);

}  // namespace okfbench::agents
