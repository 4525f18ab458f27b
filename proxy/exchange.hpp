#pragma once
// What the recording gateway (proxy/server.hpp) writes about one exchange:
// the request read as our own clients read it, tokens counted as they count
// them, the usage the provider reported (from a body or a stream), and the
// conversation the request continues.
//
// Tokens (counted with the proxy's TokenCounter, o200k_base by default):
//   message tokens           a message's text plus, per tool call, its name and
//                            arguments (engine::estimate_request_tokens' rule)
//   tool_definition_tokens   the `tools` list as the agent loop counts its
//                            schema (openai::tools_to_json, compact)
//   request_tokens           every message's tokens plus tool_definition_tokens
//   resent_tokens            the message tokens of the prefix this request
//                            shares with the previous request of its conversation
//   new_tokens               request_tokens - tool_definition_tokens - resent_tokens
// Providers add a few tokens of framing per message that these leave out;
// the provider's own count is `usage`.
//
// Conversations: request B continues request A when A's messages (system
// prompt included, as a leading message) are a prefix of B's, element by
// element (role, text, tool calls, tool call id), on the same wire. Of the
// recent requests B continues, the one with the most messages is its parent
// (ties: the newest); B joins the parent's conversation as its next turn and
// resent_tokens is the parent's message tokens. A request that continues none
// starts a conversation (turn 1, nothing re-sent): a client that edits,
// summarises or truncates its history, or changes its system prompt, starts
// a new one, and what it re-sends shows as new tokens. A request the proxy
// cannot read (not JSON, an unknown shape) belongs to no conversation and
// its tokens are unknown (null). The last kRecentRequests requests are kept.
//
// Usage (agents::Usage, normalised as agents/openai_json.hpp and
// agents/anthropic_json.hpp say): from the reply body, or from the stream:
// OpenAI Chat Completions' chunk with `usage` (sent only when the request
// asked with stream_options.include_usage), Anthropic's message_start (input,
// cache read and cache write) and message_delta (output), the Responses API's
// response.completed. When the stream carries none, usage is null and
// `usage_unknown` says why; nothing is guessed.
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/wire.hpp"
#include "retrieval/token_counter.hpp"

namespace okfbench::proxy {

inline constexpr std::size_t kRecentRequests = 1024;
inline constexpr const char* kRecordSchema = "okfbench.proxy.exchange/1";

enum class Api { chat_completions, responses, messages };
const char* to_string(Api api);

// What the proxy understood of a request body.
struct RequestFacts {
  std::optional<agents::ChatRequest> request;  // nullopt when unreadable
  std::string problem;                         // why it is unreadable ("" when read)
  std::string model;                           // as sent, even when the rest is unreadable
  bool stream = false;
  bool include_usage = false;  // Chat Completions' stream_options.include_usage
};

// Never throws: a body that is not JSON, not UTF-8 or of an unknown shape
// gives facts with `problem` set.
RequestFacts read_request(Api api, std::string_view body);

// Reads usage from a reply as its bytes arrive. Stream bytes may be cut
// anywhere; events end at a blank line (LF or CRLF).
class UsageReader {
 public:
  UsageReader(Api api, bool streamed) : api_(api), streamed_(streamed) {}
  void feed(std::string_view bytes);  // part of the body
  void finish();                      // the body is complete (or cut)
  const agents::Usage& usage() const { return usage_; }
  bool reported() const { return reported_; }
  bool stream_ended() const { return ended_; }  // [DONE], message_stop, response.completed
  std::size_t events() const { return events_; }
  std::string stream_error() const { return stream_error_; }  // an `error` event's message

 private:
  void event(std::string_view text);
  void usage_of(const nlohmann::json& object);
  Api api_;
  bool streamed_;
  std::string buffer_;
  agents::Usage usage_;
  bool reported_ = false;
  bool ended_ = false;
  std::size_t events_ = 0;
  std::string stream_error_;
};

struct Link {
  std::string conversation;  // "c1", "c2", ...
  int turn = 1;
  std::size_t shared_messages = 0;  // the parent's message count (0 for a new conversation)
};

// The chains of requests. Thread-safe.
class Conversations {
 public:
  Link link(Api api, const std::vector<agents::Message>& messages);

 private:
  struct Seen {
    Api api;
    std::vector<agents::Message> messages;
    Link link;
  };
  std::mutex mutex_;
  std::deque<Seen> recent_;
  std::size_t next_ = 1;
};

struct TokenCounts {
  std::int64_t request = 0;
  std::int64_t tool_definitions = 0;
  std::int64_t resent = 0;
  std::int64_t fresh = 0;  // new_tokens
};

TokenCounts count_tokens(const agents::ChatRequest& request, std::size_t shared_messages,
                         const retrieval::TokenCounter& counter);

// The tool results a request carries after its shared prefix: bytes, the
// call each answers and that call's tool (from the request's own assistant
// messages; "" when no message names it).
nlohmann::json tool_results(const agents::ChatRequest& request, std::size_t shared_messages);

// The measured side of one exchange.
struct Timing {
  double latency_ms = 0;
  std::optional<double> first_byte_ms;  // time to the reply's first body byte (first token of a stream)
};

struct Exchange {
  std::uint64_t seq = 0;
  Api api = Api::chat_completions;
  std::string path;
  RequestFacts facts;
  std::size_t request_bytes = 0;
  int status = 0;  // what the client got
  std::size_t response_bytes = 0;
  std::string request_id;  // the upstream's request-id / x-request-id
  Timing timing;
  std::vector<std::string> errors;
};

// The JSONL record (one line, no newline) of an exchange; `usage` is the
// reader's. Every string in it passes through agents::redact_json with
// `secrets`.
std::string exchange_record(const Exchange& exchange, const UsageReader& usage, const std::optional<Link>& link,
                            const retrieval::TokenCounter& counter, const std::vector<std::string>& secrets);

}  // namespace okfbench::proxy
