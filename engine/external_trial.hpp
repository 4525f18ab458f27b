#pragma once
// One trial of an external agent (paths.external): the user's command run on
// one question, measured by what a recording proxy and an MCP server that
// the trial started saw of it.
//
// Per trial, on 127.0.0.1 and in this process:
//   a proxy (proxy/server.hpp) whose upstream is the agent's `upstream:` or
//     else the model's endpoint; it adds the model's key (Authorization for
//     openai:, x-api-key for anthropic:) and the spec's headers to every
//     request it forwards
//   an `okfbench mcp` HTTP server (mcp/http_server.hpp) over the trial's
//     bundle (every part of a combined entry), the grafito tools without
//     remember, and its own session log: the trial is its sessions
// Both stop when the command has ended; their logs live in a temporary
// folder removed after the trial.
//
// The command: argv as given (engine/child_process.hpp), in the spec's
// folder, with on stdin one JSON object
//   {"id": QUESTION_ID, "text": QUESTION, "bundle": BUNDLE_NAME, "model": MODEL, "trial_key": KEY}
// and the environment of `okfbench run` with these set:
//   OPENAI_BASE_URL     http://127.0.0.1:PORT/v1   (the proxy)
//   ANTHROPIC_BASE_URL  http://127.0.0.1:PORT
//   OPENAI_API_KEY, ANTHROPIC_API_KEY   "okfbench-proxy" (a placeholder: the proxy holds the key)
//   OKFBENCH_MCP_URL    http://127.0.0.1:PORT/mcp
//   OKFBENCH_MODEL      the model without its provider (gpt-4o-mini), OKFBENCH_PROVIDER openai or anthropic
//   OKFBENCH_QUESTION_ID, OKFBENCH_BUNDLE, OKFBENCH_TRIAL_KEY
// and every variable whose value is a key the run knows (agents::known_secrets:
// the models' keys, header values) removed, so the command never holds the
// run's keys and cannot write them anywhere.
//
// The record, from the logs:
//   turns        one per proxy exchange, in order: the provider's usage
//                (input, cached, cache-write, output); new input as for the
//                built-in agent: the input minus the input of the request
//                it continues (the proxy's conversation rule), all of it for
//                a request that starts a conversation
//   tool calls   a turn's are the tool results the next request of its
//                conversation carried (bytes as the model got them), each
//                joined in order with the MCP call of the same tool (its
//                arguments, error and knowledge-access event); MCP calls no
//                request carried back go on the last turn
//   evidence     retrieved: the concepts MCP searches listed; opened: those
//                whose body an MCP call returned
//   answer       stdout trimmed (answer: stdout), or the "answer" string of
//                the JSON object stdout holds (answer: json)
// A failure is the trial's error with its reason and the tail of stderr:
// could not start, timed out, killed by a signal, exited non-zero, printed
// more than kMaxAgentOutput bytes, printed nothing, or (json) no answer in
// what it printed. Transient (a resume runs it again): a timeout, or an
// exchange the upstream failed (429, 5xx, a cut or silent stream); permanent
// otherwise.
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "agents/provider_models.hpp"
#include "engine/spec.hpp"
#include "mcp/server.hpp"
#include "reports/record.hpp"
#include "reports/session.hpp"
#include "retrieval/token_counter.hpp"

namespace okfbench::engine {

inline constexpr std::size_t kMaxAgentOutput = std::size_t{4} << 20;
inline constexpr std::size_t kStderrTail = 2048;
inline constexpr const char* kPlaceholderKey = "okfbench-proxy";

struct ExternalTrialInput {
  const ExternalAgent& agent;
  const ModelSpec& model;
  const agents::Endpoint& endpoint;  // the model's, resolved
  std::vector<mcp::ServedBundle> bundles;
  std::string bundle_name;
  std::string question_id;
  std::string question;
  std::string trial_key;
  const retrieval::TokenCounter& counter;
  const std::vector<std::string>& secrets;
};

struct ExternalTrialResult {
  std::vector<reports::TurnRecord> turns;
  std::vector<double> turn_ms;                       // each exchange's latency
  std::vector<std::optional<double>> first_token_ms;  // each exchange's time to its first byte
  std::vector<std::string> retrieved;
  std::vector<std::string> opened;
  std::string answer;
  std::string error;  // "" when the trial finished
  std::string error_class;
  double model_ms = 0;
};

// Runs the trial. Throws only for what stops the run itself (a temporary
// folder or a port that cannot be had).
ExternalTrialResult run_external_trial(const ExternalTrialInput& in);

// The record's turns and evidence from the two logs' lines (exposed for tests).
ExternalTrialResult read_external_logs(const std::vector<std::string>& proxy_lines,
                                       const std::vector<reports::SessionEvent>& mcp_events);

// The answer in the command's stdout, or nullopt with `problem` set.
std::optional<std::string> external_answer(const std::string& output, bool json, std::string& problem);

}  // namespace okfbench::engine
